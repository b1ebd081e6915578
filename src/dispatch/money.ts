// Money checks on a call (issue §1, docs/manifest-format.md "Money"): with `money.amountArgument`, the amount is a
// JSON integer literal of minor units (no fraction, no exponent: `100.0` and `1e2` are refused; refusing loses no
// information) from 0 to `maxAmountMinorPerCall`; with `money.currencyArgument`, the currency is one of `currencies`.

import { ToolsealError } from '../core/errors.ts';
import { parsePointer } from '../core/json-pointer.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import type { MoneyCapability } from '../pipeline/envelope.ts';
import type { CallArguments } from './arguments.ts';
import { findValueText } from './raw-json.ts';

const INTEGER_LITERAL = /^(?:0|[1-9][0-9]*)$/;

/** Assert a call's money arguments (nothing to check when the tool declares no money arguments). */
export function checkMoney(money: MoneyCapability | undefined, args: CallArguments): void {
  if (money === undefined) return;
  if (money.amountArgument !== undefined) checkAmount(money, money.amountArgument, args);
  if (money.currencyArgument !== undefined) {
    const currency = readArgumentValue(args.value, money.currencyArgument);
    const allowed = money.currencies ?? [];
    if (typeof currency !== 'string' || !allowed.includes(currency)) {
      throw new ToolsealError(
        'MONEY_INVALID',
        `the currency must be one of ${allowed.join(', ') || '(none)'}, not ${describe(currency)}`,
        { pointer: money.currencyArgument },
      );
    }
  }
}

function checkAmount(money: MoneyCapability, pointer: string, args: CallArguments): void {
  const amount = readArgumentValue(args.value, pointer);
  const literal = args.text === undefined ? undefined : findValueText(args.text, tokensOf(pointer));
  const isIntegerLiteral = literal === undefined ? Number.isSafeInteger(amount) : INTEGER_LITERAL.test(literal);
  if (typeof amount !== 'number' || !isIntegerLiteral || amount < 0 || Object.is(amount, -0)) {
    throw new ToolsealError(
      'MONEY_INVALID',
      `the amount must be a JSON integer literal of minor units, at least 0, not ${literal ?? describe(amount)}`,
      { pointer },
    );
  }
  const ceiling = money.maxAmountMinorPerCall ?? 0;
  if (amount > ceiling) {
    throw new ToolsealError(
      'MONEY_CEILING_EXCEEDED',
      `the amount ${amount} is above the signed ceiling of ${ceiling} minor units per call`,
      { pointer },
    );
  }
}

/** The value at an argument pointer (no `*`) inside a call's arguments, or undefined when absent. */
export function readArgumentValue(root: JsonValue, pointer: string): JsonValue | undefined {
  let value: JsonValue | undefined = root;
  for (const token of tokensOf(pointer)) {
    if (Array.isArray(value)) value = /^(?:0|[1-9][0-9]*)$/.test(token) ? value[Number(token)] : undefined;
    else if (isJsonObject(value)) value = Object.hasOwn(value, token) ? value[token] : undefined;
    else return undefined;
  }
  return value;
}

function tokensOf(pointer: string): string[] {
  const tokens = parsePointer(pointer);
  if (tokens === undefined) throw new ToolsealError('INVALID_MANIFEST', `${JSON.stringify(pointer)} is not a pointer`);
  return tokens;
}

function describe(value: JsonValue | undefined): string {
  if (value === undefined) return 'nothing (the argument is missing)';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

// Reading signed manifest bytes fast without reading them less strictly: JSON.parse (ECMA-404, the RFC 8259 grammar)
// takes the bytes when nothing in them is what it accepts but the strict parser (RFC 8259 + I-JSON RFC 7493) refuses
// or reads differently; a length count of the parsed tree proves no duplicate key was dropped (RFC 7493 §2.3).

import type { JsonValue } from '../core/json.ts';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../pipeline/limits.ts';
import { parseStrict } from '../pipeline/parse.ts';

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/** A number with an exponent (every number of an object text follows `:`, `,` or `[`); in a string it only costs time. */
const EXPONENT = /[:,[]\s*-?[0-9]+(?:\.[0-9]+)?[eE]/;
/**
 * Every exponent of a number is a digit, `e` or `E`, then a sign or a digit, so text without this holds none; it
 * scans faster than EXPONENT, which then only runs on text that has it (in a string, such as hex, or a number).
 */
const MAYBE_EXPONENT = /[0-9][eE][-+0-9]/;

/**
 * Exactly `parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS).value`, with the same errors, but faster on the bytes a
 * registry signs. JSON.parse reads them when the text is valid UTF-8 starting with `{` (so no BOM), with no `\u`
 * escape (a lone surrogate) and no exponent (overflow, underflow), and then only if the parsed tree, written back
 * without white space with each number in its shortest form, is exactly as long as the text once each escape
 * sequence counts as one character. The text can only be longer: by white space, by a number written longer than
 * its shortest form (such as `-0`, which the strict parser reads as 0), or by a member JSON.parse dropped for a
 * duplicate key; so equal lengths rule out all three. Nesting deeper than the limit, a non-finite number and an
 * integral one beyond ±(2^53−1) leave the fast path too. Anything else goes to parseStrict, which decides and names
 * the error.
 */
export function parseSignedJson(bytes: Uint8Array): JsonValue {
  const fast = tryNativeParse(bytes);
  return fast !== undefined ? fast : parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS).value;
}

function tryNativeParse(bytes: Uint8Array): JsonValue | undefined {
  if (bytes.byteLength === 0 || bytes[0] !== 0x7b /* { */) return undefined;
  let text: string;
  try {
    text = utf8Decoder.decode(bytes);
  } catch {
    return undefined;
  }
  if (text.includes('\\u') || (MAYBE_EXPONENT.test(text) && EXPONENT.test(text))) return undefined;
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
  const written = measureWritten(value, SIGNED_MANIFEST_PARSE_LIMITS.maxDepth);
  return written !== undefined && written + countEscapes(text) === text.length ? value : undefined;
}

/**
 * The length of `value` written without white space, numbers as String() writes them, strings with every character
 * as itself; undefined for nesting deeper than `depthLeft`, a non-finite number or an integral one beyond ±(2^53−1).
 */
function measureWritten(value: JsonValue, depthLeft: number): number | undefined {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) return undefined;
    return String(value).length;
  }
  if (typeof value === 'boolean') return value ? 4 : 5;
  if (value === null) return 4;
  if (depthLeft === 0) return undefined;
  const items = Array.isArray(value) ? value : undefined;
  const keys = items === undefined ? Object.keys(value) : undefined;
  const count = items !== undefined ? items.length : (keys as string[]).length;
  let length = count === 0 ? 2 : count + 1; // the brackets and the commas between members
  for (let i = 0; i < count; i++) {
    const key = keys?.[i];
    const member = measureWritten(
      (key === undefined ? items?.[i] : (value as Record<string, JsonValue>)[key]) as JsonValue,
      depthLeft - 1,
    );
    if (member === undefined) return undefined;
    length += member + (key === undefined ? 0 : key.length + 3); // "key":
  }
  return length;
}

/** Escape sequences in a JSON text without `\u` escapes: each is a backslash and one more character. */
function countEscapes(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\\'); at >= 0; at = text.indexOf('\\', at + 2)) count++;
  return count;
}

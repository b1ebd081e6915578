// readParsedToolCall (issue 14 §5): a tools/call already read by the strict parser gives exactly what readToolCall
// gives for its bytes (the same call, or the same refusal: code, message, pointer), without a second parse.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arbitraryJsonValue, isRoundTrippable } from '../helpers/json-arbitraries.ts';
import { ToolsealError } from '../../src/core/errors.ts';
import { readParsedToolCall, readToolCall } from '../../src/dispatch/arguments.ts';
import { parseStrictText, type JsonValue } from '../../src/pipeline/index.ts';

const RUNS = Number(process.env['TOOLSEAL_PROPERTY_RUNS'] ?? 100);
const encoder = new TextEncoder();
/** The HTTP guard's depth limit for a message (src/guard/http/http-session.ts MESSAGE_MAX_DEPTH). */
const GUARD_DEPTH = 256;

/** A function's answer as a value: what it returned, or the refusal it threw. */
function outcomeOf(read: () => unknown): unknown {
  try {
    return { value: read() };
  } catch (error) {
    if (!(error instanceof ToolsealError)) throw error;
    return { code: error.code, message: error.message, pointer: error.pointer };
  }
}

/** Both ways of reading `text`: from its bytes, and from what the strict parser read from it (as the guard parses). */
function expectSameRead(text: string, message: JsonValue = parseStrictText(text, GUARD_DEPTH)): unknown {
  const fromBytes = outcomeOf(() => readToolCall(encoder.encode(text)));
  expect(outcomeOf(() => readParsedToolCall(message, text))).toStrictEqual(fromBytes);
  return fromBytes;
}

const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const callText = (params: string): string => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${params}}`;

const char = fc.constantFrom('a', 'é', 'e\u0301', '"', '\\', '\n', '😀', '\u2028', '/', '\u0000');
const text = fc.array(char, { maxLength: 4 }).map((chars) => chars.join(''));
const key = fc.constantFrom('a', 'b', 'arguments', 'name', '__proto__', '', '😀');
// The strict parser refuses integral values outside ±(2^53−1) below 1e21 (RFC 7493 §2.2): such a message never gets
// this far (the guard answers it with a parse error).
const number = fc
  .oneof(
    fc.constantFrom(0, -0, 1, 4200, 1e21, 1e-7, Number.MAX_SAFE_INTEGER),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  )
  .filter(isRoundTrippable);
const jsonValue = arbitraryJsonValue({ number, text, key, maxDepth: 4, maxLength: 3 });

describe('readParsedToolCall: the same as readToolCall of the bytes', () => {
  it('property: calls with any params, arguments and spacing', () => {
    const message = fc.record(
      {
        jsonrpc: fc.constant('2.0'),
        id: fc.oneof(fc.integer(), text, fc.constant(null)),
        method: fc.constantFrom('tools/call', 'tools/list'),
        params: fc.oneof(
          fc.record(
            { name: fc.oneof(text, number), arguments: jsonValue, _meta: jsonValue },
            { requiredKeys: ['name'] },
          ),
          jsonValue,
        ),
      },
      { requiredKeys: ['method'] },
    );
    fc.assert(
      fc.property(message, fc.constantFrom(undefined, 1, '\t'), (value, space) => {
        expectSameRead(JSON.stringify(value, null, space));
      }),
      { numRuns: RUNS * 5 },
    );
  });

  it('the arguments text is the exact text sent (spacing, escapes, number spelling)', () => {
    const args = '{ "amount_minor" : 4200.0 , "note":"caf\\u00e9 \\"x\\"" , "n": 1e2 }';
    const read = expectSameRead(callText(`{"name":"refund","arguments":${args}}`)) as { value: { arguments: unknown } };
    expect(read.value.arguments).toStrictEqual({ value: { amount_minor: 4200, note: 'café "x"', n: 100 }, text: args });
  });

  it('the refusals of a message that is not a call, or whose params or arguments are wrong', () => {
    const cases: [string, string, string][] = [
      ['{"jsonrpc":"2.0","id":1,"method":"tools/list"}', 'ARGUMENTS_INVALID', '/method'],
      ['[1,2]', 'ARGUMENTS_INVALID', '/method'],
      [callText('{"arguments":{}}'), 'ARGUMENTS_INVALID', '/params/name'],
      [callText('{"name":7}'), 'ARGUMENTS_INVALID', '/params/name'],
      [callText('{"name":"echo","arguments":[1]}'), 'ARGUMENTS_INVALID', '/params/arguments'],
    ];
    for (const [message, code, pointer] of cases) expect(expectSameRead(message)).toMatchObject({ code, pointer });
    expect(expectSameRead(callText('{"name":"echo"}'))).toMatchObject({
      value: { name: 'echo', arguments: { value: {}, text: '{}' } },
    });
  });

  it('beyond the default limits the guard parse allows: depth 64 is read, 65 is DEPTH_LIMIT at its pointer', () => {
    // The message is depth 1, params 2, arguments 3, `a` 4: 60 more levels reach 64.
    expect(expectSameRead(callText(`{"name":"echo","arguments":{"a":${nested(61)}}}`))).toHaveProperty('value');
    const deep = expectSameRead(callText(`{"name":"echo","arguments":{"a":${nested(62)}}}`));
    expect(deep).toMatchObject({ code: 'DEPTH_LIMIT' });
    expect((deep as { pointer: string }).pointer).toMatch(/^\/params\/arguments\/a(\/0){61}$/);
  });

  it('a message over 1 MiB is TOO_LARGE, as from its bytes', () => {
    const big = callText(`{"name":"echo","arguments":{"text":"${'é'.repeat(512 * 1024)}"}}`);
    expect(big.length).toBeLessThan(1024 * 1024);
    expect(expectSameRead(big)).toMatchObject({ code: 'TOO_LARGE' });
  });

  it('text the strict parse of bytes would read otherwise is read from its bytes: a lone surrogate, a BOM', () => {
    const lone = callText('{"name":"echo","arguments":{"text":"x\ud800"}}');
    const read = expectSameRead(lone) as { value: { arguments: { value: unknown } } };
    expect(read.value.arguments.value).toStrictEqual({ text: 'x\ufffd' });
    const message = parseStrictText(callText('{"name":"echo"}'));
    expect(expectSameRead(`\ufeff${callText('{"name":"echo"}')}`, message)).toMatchObject({ code: 'INVALID_UTF8' });
  });
});

// parseSignedJson is parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS) exactly: same value, same refusals.

import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../../src/pipeline/limits.ts';
import { parseStrict } from '../../src/pipeline/parse.ts';
import { parseSignedJson } from '../../src/verify/signed-json.ts';
import { bytes } from './stage-fixtures.ts';

function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (error) {
    return { code: error instanceof ToolsealError ? error.code : String(error) };
  }
}

const deep = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const CASES = [
  '{"name":"a/b","version":"1.0.0"}',
  '{"b":1,"a":2}',
  '{"1":2,"a":1}',
  '{"a":1,"1":2}',
  '{"a":1,"a":1}',
  '{"a":1,"a":2}',
  '{"__proto__":1}',
  '{"__proto__":1,"__proto__":1}',
  '{"a":"\\ud800"}',
  '{"a":"\\ud83d\\ude00"}',
  '{"a":"\\u0001"}',
  '{"a":9007199254740993}',
  '{"a":100000000000000000000}',
  '{"a":1e20}',
  '{"a":1e400}',
  '{"a":1e-400}',
  '{"a":-0}',
  '{"a":1.0}',
  '{"a":1e+21}',
  '{"a":"\\/"}',
  '{ "a":1}',
  '\ufeff{"a":1}',
  '{"a":[1,2,{"b":null}]}',
  '{"a":1}x',
  '[1]',
  deep(1000),
  deep(1001),
];

describe('parseSignedJson', () => {
  it.each(CASES)('agrees with parseStrict on %s', (text) => {
    const input = Buffer.from(text, 'utf8');
    const strict = outcome(() => parseStrict(input, SIGNED_MANIFEST_PARSE_LIMITS).value);
    const fast = outcome(() => parseSignedJson(input));
    expect(fast).toEqual(strict);
    if (typeof (fast as { value?: unknown }).value === 'object') {
      expect(Object.keys((fast as { value: object }).value)).toEqual(Object.keys((strict as { value: object }).value));
    }
  });

  it('agrees on invalid UTF-8 and on the signed manifest bytes', () => {
    const invalid = Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);
    expect(outcome(() => parseSignedJson(invalid))).toEqual({ code: 'INVALID_UTF8' });
    expect(parseSignedJson(bytes)).toEqual(parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS).value);
  });
});

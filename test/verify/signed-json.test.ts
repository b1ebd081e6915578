// parseSignedJson is parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS) exactly: same value, same refusals.

import fc from 'fast-check';
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
  // Duplicate keys hidden behind escapes, white space or nesting; strings that look like numbers or delimiters.
  '{"a":"x","a":"y"}',
  '{"a\\"":1,"a\\"":2}',
  '{"a":"\\\\","a":1}',
  '{"a":"\\"","b":1}',
  '{"a":":","b":"\\":"}',
  '{ "a" : 1 , "a" : 2 }',
  '{"a":[{"b":1,"b":1}]}',
  '{"a":{"b":"c"},"a":{"b":"c"}}',
  '{"a":-0.5}',
  '{"a":-0.0}',
  '{"a":[1,-0]}',
  '{"a":0.000000000000001}',
  '{"a":123456789012345}',
  '{"a":1234567890123456}',
  '{"a":1.5E3}',
  '{"a":"1e5","b":"-0","c":"2024-01-01","d":"12345678901234567890"}',
  '{"a":true,"b":false,"c":null}',
  '{"a":"\\n\\t\\"\\/"}',
  // Exponents written shorter than their shortest form could hide a dropped duplicate or an underflow by length.
  '{"a":1,"a":1e8}',
  '{"a":1e-400,"b":1e5,"c":1e4}',
  '{"a": 1E5}',
  '{"a":[1.0,2.50]}',
  '{"a":99999999999999999999}',
  '{"a":9007199254740991,"b":-9007199254740991}',
  '{"a":"x","a":"\\n"}',
  '{"a":"\\\\n"}',
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

/** An object's text from members whose keys repeat often, with optional white space around the tokens. */
const memberKey = fc.constantFrom('a', 'b', '__proto__', 'a"', '\\', ':', '1');
const objectText = fc.letrec((tie) => ({
  value: fc.oneof(
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: tie('object') as fc.Arbitrary<string> },
  ),
  object: fc
    .tuple(
      fc.array(fc.tuple(memberKey, tie('value') as fc.Arbitrary<string>), { maxLength: 4 }),
      fc.constantFrom('', ' ', '\n'),
    )
    .map(([members, space]) => `{${members.map(([k, v]) => `${space}${JSON.stringify(k)}${space}:${v}`).join(',')}}`),
}));

describe('parseSignedJson, property', () => {
  it('agrees with parseStrict on objects with repeated keys, escapes, white space and any JSON values', () => {
    fc.assert(
      fc.property(objectText.object, (text) => {
        const input = Buffer.from(text, 'utf8');
        expect(outcome(() => parseSignedJson(input))).toEqual(
          outcome(() => parseStrict(input, SIGNED_MANIFEST_PARSE_LIMITS).value),
        );
      }),
      { numRuns: 2000 },
    );
  });
});

/** A number written with an exponent (any case and sign), or a string holding one or a near miss. */
const exponentText = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('', '-'),
      fc.integer({ min: 0, max: 999 }),
      fc.constantFrom('', '.5', '.25'),
      fc.constantFrom('e', 'E'),
      fc.constantFrom('', '+', '-'),
      fc.integer({ min: 0, max: 400 }),
    )
    .map(([sign, int, frac, e, expSign, exp]) => `${sign}${int}${frac}${e}${expSign}${exp}`),
  fc.constantFrom('"3e5"', '"x:1e"', '"a1E-"', '":1e+2"', '"[0e0"', '1', '100', '0.5', '-0'),
);
const exponentObject = fc
  .array(fc.tuple(fc.constantFrom('a', 'b'), exponentText), { minLength: 1, maxLength: 4 })
  .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`);

describe('parseSignedJson, exponents', () => {
  it.each(['{"a":"3e5","a":1}', '{"a":"x:1e","b":1}', '{"a":"0e1","b":1e2}', '{"a":1,"a":1e0}'])(
    'agrees with parseStrict on %s (a digit, e and a digit or sign, in a string or a number)',
    (text) => {
      const input = Buffer.from(text, 'utf8');
      expect(outcome(() => parseSignedJson(input))).toEqual(
        outcome(() => parseStrict(input, SIGNED_MANIFEST_PARSE_LIMITS).value),
      );
    },
  );

  it('agrees with parseStrict on objects mixing exponent numbers, strings that look like them and duplicates', () => {
    fc.assert(
      fc.property(exponentObject, (text) => {
        const input = Buffer.from(text, 'utf8');
        expect(outcome(() => parseSignedJson(input))).toEqual(
          outcome(() => parseStrict(input, SIGNED_MANIFEST_PARSE_LIMITS).value),
        );
      }),
      { numRuns: 500 },
    );
  });
});

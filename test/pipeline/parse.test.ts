// Unit tests of stage 1, the strict parser: every refusal with its code and exact pointer, and the flags it reports.

import { describe, expect, it } from 'vitest';
import { defaultParseLimits, parseStrict, parseStrictText, type JsonObject } from '../../src/pipeline/index.ts';
import { expectRefusal, nestArrays, refusalOf, utf8 } from '../helpers/pipeline-helpers.ts';

const parse = (text: string) => parseStrict(utf8(text));
const parseBytes = (bytes: number[]) => parseStrict(Uint8Array.from(bytes));

describe('parseStrict: encoding', () => {
  it('refuses a UTF-8 byte order mark (never strips it)', () => {
    const refusal = expectRefusal(() => parseBytes([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), 'INVALID_UTF8', undefined);
    expect(refusal.message).toMatch(/byte order mark/);
  });

  it('accepts the same document without the BOM', () => {
    expect(parseBytes([0x7b, 0x7d]).value).toEqual({});
  });

  it('an escaped U+FEFF inside a string is just a character', () => {
    expect(parse('"\\ufeff"').value).toBe('\ufeff');
  });

  it.each([
    ['a lone 0xFF byte', [0x22, 0xff, 0x22], 1],
    ['a lone continuation byte', [0x22, 0x61, 0x80, 0x22], 2],
    ['an overlong 2-byte "/"', [0x22, 0xc0, 0xaf, 0x22], 1],
    ['a UTF-8 encoded surrogate U+D800', [0x22, 0xed, 0xa0, 0x80, 0x22], 1],
    ['a truncated 3-byte sequence', [0x22, 0xe2, 0x82, 0x22], 1],
    ['a code point above U+10FFFF', [0x22, 0xf4, 0x90, 0x80, 0x80, 0x22], 1],
    ['Latin-1 "é"', [0x22, 0xe9, 0x22], 1],
  ])(
    'refuses invalid UTF-8: %s (INVALID_UTF8; the message names the first bad byte offset)',
    (_label, bytes, offset) => {
      const refusal = expectRefusal(() => parseBytes(bytes), 'INVALID_UTF8', undefined);
      expect(refusal.message).toContain(`offset ${offset}`);
    },
  );

  it('refuses UTF-16 input: with a BOM as INVALID_UTF8, without one as INVALID_JSON (its NUL bytes are valid UTF-8)', () => {
    const utf16 = Buffer.from('{"a":1}', 'utf16le');
    expectRefusal(() => parseStrict(Uint8Array.from([0xff, 0xfe, ...utf16])), 'INVALID_UTF8', undefined);
    expectRefusal(() => parseStrict(Uint8Array.from(utf16)), 'INVALID_JSON', '');
  });

  it('decodes valid multi-byte UTF-8, astral characters included', () => {
    expect(parse('["é","€","😀","\u{10ffff}"]').value).toEqual(['é', '€', '😀', '\u{10ffff}']);
  });
});

describe('parseStrict: duplicate keys (I-JSON, RFC 7493 §2.3)', () => {
  it('refuses a duplicate key with the pointer of the second occurrence', () => {
    expectRefusal(
      () => parse('{"name":"m","tools":[{"name":"a","description":"d","name":"b"}]}'),
      'DUPLICATE_KEY',
      '/tools/0/name',
    );
  });

  it('refuses identical duplicates (same key, same value)', () => {
    expectRefusal(() => parse('{"a":{"b":1,"b":1}}'), 'DUPLICATE_KEY', '/a/b');
  });

  it('refuses duplicates that differ only in escaping', () => {
    expectRefusal(() => parse('{"x":{"é":1,"\\u00e9":2}}'), 'DUPLICATE_KEY', '/x/é');
    expectRefusal(() => parse('{"a/b":1,"a\\/b":2}'), 'DUPLICATE_KEY', '/a~1b');
  });

  it('refuses "__proto__" twice', () => {
    expectRefusal(() => parse('{"a":{"__proto__":{},"__proto__":{}}}'), 'DUPLICATE_KEY', '/a/__proto__');
  });

  it('refuses duplicates in a nested array element with the array index in the pointer', () => {
    expectRefusal(() => parse('[0,[1,{"k":1,"j":2,"k":3}]]'), 'DUPLICATE_KEY', '/1/1/k');
  });

  it('escapes "~" and "/" in the pointer (RFC 6901)', () => {
    expectRefusal(() => parse('{"a~b":{"c/d":1,"c/d":2}}'), 'DUPLICATE_KEY', '/a~0b/c~1d');
  });

  it('keeps a single "__proto__" key as an own data member, never a prototype change', () => {
    const value = parse('{"__proto__":{"polluted":true},"b":1}').value as JsonObject;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['__proto__', 'b']);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ polluted: true });
    expect((value as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(JSON.stringify(value)).toBe('{"__proto__":{"polluted":true},"b":1}');
  });

  it('keys that are equal to Object.prototype members are ordinary keys', () => {
    expect(parse('{"constructor":1,"toString":2,"hasOwnProperty":3}').value).toEqual({
      constructor: 1,
      toString: 2,
      hasOwnProperty: 3,
    });
    expectRefusal(() => parse('{"constructor":1,"constructor":2}'), 'DUPLICATE_KEY', '/constructor');
  });
});

describe('parseStrict: lone surrogates (RFC 7493 §2.1)', () => {
  it.each([
    ['a lone high surrogate', '{"a":["x","\\ud800"]}', '/a/1'],
    ['a lone low surrogate', '{"a":"\\udc00"}', '/a'],
    ['a high surrogate at the end of a string', '{"a":"x\\uD83D"}', '/a'],
    ['a high surrogate followed by a non-surrogate escape', '{"a":"\\ud800\\u0041"}', '/a'],
    ['a high surrogate followed by a literal character', '{"a":"\\ud800A"}', '/a'],
    ['two high surrogates', '{"a":"\\ud800\\ud800"}', '/a'],
    ['an inverted pair', '{"a":"\\udd1e\\ud834"}', '/a'],
  ])('refuses %s in a string, pointing at the string', (_label, text, pointer) => {
    expectRefusal(() => parse(text), 'LONE_SURROGATE', pointer);
  });

  it('refuses a lone surrogate in a key, pointing at the object that holds it', () => {
    expectRefusal(() => parse('{"a":{"\\udc00x":1}}'), 'LONE_SURROGATE', '/a');
  });

  it('points at the object (not at the previous member) when a later key holds a lone surrogate', () => {
    expectRefusal(() => parse('{"a":{"b":1,"\\ud800":2}}'), 'LONE_SURROGATE', '/a');
  });

  it('accepts an escaped surrogate pair as one astral character', () => {
    expect(parse('{"\\ud83d\\ude00":"\\uD834\\uDD1E"}').value).toEqual({ '😀': '𝄞' });
  });
});

describe('parseStrict: numbers', () => {
  it('accepts ±(2^53−1) exactly', () => {
    expect(parse('[9007199254740991,-9007199254740991]').value).toEqual([
      Number.MAX_SAFE_INTEGER,
      Number.MIN_SAFE_INTEGER,
    ]);
  });

  it.each([
    ['9007199254740992', '{"n":9007199254740992}', '/n'],
    ['-9007199254740992', '{"a":[0,{"n":-9007199254740992}]}', '/a/1/n'],
    ['a 30-digit integer', '[123456789012345678901234567890]', '/0'],
  ])('refuses the integer literal %s (UNSAFE_NUMBER)', (_label, text, pointer) => {
    const refusal = expectRefusal(() => parse(text), 'UNSAFE_NUMBER', pointer);
    expect(refusal.message).toMatch(/outside/);
  });

  it('refuses 1e400 and -1e400 (overflow to ±Infinity)', () => {
    expectRefusal(() => parse('{"x":1e400}'), 'UNSAFE_NUMBER', '/x');
    expectRefusal(() => parse('{"x":[-1.5E+400]}'), 'UNSAFE_NUMBER', '/x/0');
  });

  it('refuses a non-zero literal that underflows to 0, but accepts zero written with an exponent', () => {
    expectRefusal(() => parse('{"x":1e-400}'), 'UNSAFE_NUMBER', '/x');
    expect(parse('[0e-400,0.000e5]').value).toEqual([0, 0]);
  });

  it('reads -0 in every form as 0, the value JCS writes (RFC 8785 §3.2.2.3)', () => {
    const values = parse('[-0,-0.0,-0e3]').value as number[];
    expect(values.map((v) => Object.is(v, 0))).toEqual([true, true, true]);
  });

  it('refuses integral values beyond ±(2^53−1) below 1e21 in any form: JCS would write them as integer literals', () => {
    expectRefusal(() => parse('{"x":1e20}'), 'UNSAFE_NUMBER', '/x');
    expectRefusal(() => parse('{"x":[9007199254740992.0]}'), 'UNSAFE_NUMBER', '/x/0');
    expect(parse('[1e21,9007199254740991.0,1.5e300]').value).toEqual([1e21, 9007199254740991, 1.5e300]);
  });

  it('accepts doubles and exponent forms as their IEEE-754 value', () => {
    expect(parse('[1e2,100.0,1E+2,0.1,-2.5e-3,1.7976931348623157e308,5e-324]').value).toEqual([
      100,
      100,
      100,
      0.1,
      -0.0025,
      Number.MAX_VALUE,
      Number.MIN_VALUE,
    ]);
  });

  it.each(['01', '-', '1.', '.5', '+1', '1e', '1e+', '0x10', 'NaN', 'Infinity', '-Infinity', '1_000'])(
    'refuses the invalid number %s (INVALID_JSON)',
    (literal) => {
      expect(refusalOf(() => parse(`[${literal}]`)).code).toBe('INVALID_JSON');
    },
  );
});

describe('parseStrict: depth and size limits', () => {
  it('accepts depth 64 (the default) and refuses depth 65 with the pointer of the 65th container', () => {
    expect(defaultParseLimits.maxDepth).toBe(64);
    expect(parse(nestArrays(64, '1')).value).toBeDefined();
    expectRefusal(() => parse(nestArrays(65)), 'DEPTH_LIMIT', '/0'.repeat(64));
  });

  it('counts objects and arrays alike', () => {
    const objects = (levels: number) => `${'{"k":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
    expect(parse(objects(64)).value).toBeDefined();
    expectRefusal(() => parse(objects(65)), 'DEPTH_LIMIT', '/k'.repeat(64));
  });

  it('honours a custom depth limit', () => {
    expect(parseStrict(utf8('[[1]]'), { maxBytes: 100, maxDepth: 2 }).value).toEqual([[1]]);
    expectRefusal(() => parseStrict(utf8('{"a":[[1]]}'), { maxBytes: 100, maxDepth: 2 }), 'DEPTH_LIMIT', '/a/0');
  });

  it('refuses input above maxBytes (TOO_LARGE) and accepts exactly maxBytes', () => {
    const limits = { maxBytes: 10, maxDepth: 64 };
    expect(parseStrict(utf8('"12345678"'), limits).value).toBe('12345678');
    const refusal = expectRefusal(() => parseStrict(utf8('"123456789"'), limits), 'TOO_LARGE', undefined);
    expect(refusal.message).toContain('11 bytes');
  });

  it('counts bytes, not characters', () => {
    // "éé" is 4 characters of text but 6 bytes of UTF-8.
    expectRefusal(() => parseStrict(utf8('"éé"'), { maxBytes: 5, maxDepth: 64 }), 'TOO_LARGE', undefined);
  });

  it('the default limit is 1 MiB', () => {
    const exact = `"${'a'.repeat(1024 * 1024 - 2)}"`;
    expect(parse(exact).value).toHaveLength(1024 * 1024 - 2);
    expectRefusal(() => parse(`${exact} `), 'TOO_LARGE', undefined);
  });
});

describe('parseStrict: INVALID_JSON says where', () => {
  it.each([
    ['{\n  "a": [1,\n   2,,]}', '/a/2', 3, 6, /unexpected character ','/],
    ['{"a":1,}', '', 1, 8, /expected a string key/],
    ['{"a":{"b":1,"c\\x":2}}', '/a', 1, 15, /invalid escape/],
    ['{"a" 1}', '/a', 1, 6, /expected ':'/],
    ['[1 2]', '/0', 1, 4, /expected ',' or '\]'/],
    ['{"a":"b\u0001"}', '/a', 1, 8, /unescaped control character U\+0001/],
    ['{"a":"abc', '/a', 1, 10, /unterminated string/],
    ['[tru]', '/0', 1, 2, /invalid literal/],
    ['', '', 1, 1, /empty document/],
    ['[1] [2]', '', 1, 5, /unexpected data after the JSON value/],
    ['{"a":[{"b":\n\n  nul}]}', '/a/0/b', 3, 3, /invalid literal/],
  ])('%j → pointer %j, line %i, column %i', (text, pointer, line, column, reason) => {
    const refusal = expectRefusal(() => parse(text), 'INVALID_JSON', pointer);
    expect(refusal.message).toMatch(reason);
    expect(refusal.message).toMatch(new RegExp(`at line ${line}, column ${column}$`));
  });

  it('refuses whitespace the grammar does not allow (no-break space, form feed)', () => {
    expect(refusalOf(() => parse('[1,\u00a02]')).code).toBe('INVALID_JSON');
    expect(refusalOf(() => parse('[1,\f2]')).code).toBe('INVALID_JSON');
  });
});

describe('parseStrict: flags for later stages', () => {
  it('hasRefKeyword is set by a $ref, $dynamicRef or $recursiveRef key anywhere', () => {
    expect(parse('{"a":[{"b":{"$ref":"#/x"}}]}').hasRefKeyword).toBe(true);
    expect(parse('{"$dynamicRef":"#x"}').hasRefKeyword).toBe(true);
    expect(parse('{"$recursiveRef":"#"}').hasRefKeyword).toBe(true);
  });

  it('hasRefKeyword is not set by "$ref" as a string value or by look-alike keys', () => {
    expect(parse('{"a":["$ref"],"b":"$ref","$refs":1,"$Ref":2,"ref":3}').hasRefKeyword).toBe(false);
  });

  it('hasNonLatinText is set by a character at or above U+0300 in a string or a key', () => {
    expect(parse('{"a":"x\u0300"}').hasNonLatinText).toBe(true);
    expect(parse('{"\u4e2d":1}').hasNonLatinText).toBe(true);
    expect(parse('["😀"]').hasNonLatinText).toBe(true);
  });

  it('hasNonLatinText is set by any escape (the parser does not look inside escapes)', () => {
    expect(parse('{"a":"\\u0041"}').hasNonLatinText).toBe(true);
    expect(parse('{"a":"line\\nbreak"}').hasNonLatinText).toBe(true);
  });

  it('hasNonLatinText stays false for text below U+0300 (always NFC-stable)', () => {
    expect(parse('{"café":"naïve ÿ \u02ff","n":1}').hasNonLatinText).toBe(false);
  });

  it('reservedKeyPointer is the pointer of the first _host_meta key, or undefined', () => {
    expect(parse('{"tools":[{"a":1},{"x":{"_host_meta":{},"y":{"_host_meta":1}}}]}').reservedKeyPointer).toBe(
      '/tools/1/x/_host_meta',
    );
    expect(parse('{"_host_meta":1}').reservedKeyPointer).toBe('/_host_meta');
    expect(parse('{"_host_metadata":1,"a":"_host_meta"}').reservedKeyPointer).toBeUndefined();
  });

  it('parseStrictText parses our own text with the same rules', () => {
    expect(parseStrictText('{"a":[1,"é"]}')).toEqual({ a: [1, 'é'] });
    expect(refusalOf(() => parseStrictText('{"a":1,"a":2}')).code).toBe('DUPLICATE_KEY');
    expect(refusalOf(() => parseStrictText(nestArrays(3), 2)).code).toBe('DEPTH_LIMIT');
  });
});

// The material view (issue §2): informational members removed (with `*`), string values NFC (keys untouched),
// unordered arrays sorted innermost first by the bytewise order of their items' JCS bytes.

import { describe, expect, it } from 'vitest';
import { buildMaterialView } from '../../src/host/index.ts';
import type { JsonObject } from '../../src/pipeline/index.ts';
import { compareBytes } from '../../src/dispatch/material-view.ts';
import { findValueText } from '../../src/dispatch/raw-json.ts';

describe('buildMaterialView', () => {
  it('keeps everything, NFC-normalising string values only, without a classification', () => {
    const args = { 'Re\u0301f': 'Rene\u0301e', n: [1, 'e\u0301'], b: true, z: null };
    expect(buildMaterialView(args, undefined)).toEqual({
      'Re\u0301f': 'Ren\u00e9e',
      n: [1, '\u00e9'],
      b: true,
      z: null,
    });
    expect(args['Re\u0301f']).toBe('Rene\u0301e'); // the input is not modified
  });

  it('removes informational members, through * over indexes and members, and escaped tokens', () => {
    const args: JsonObject = {
      note: 'x',
      lines: [{ sku: 1, memo: 'a' }, { sku: 2 }],
      meta: { a: { t: 1, k: 2 }, b: { t: 3 } },
      'a/b': 1,
    };
    const view = buildMaterialView(args, { informational: ['/note', '/lines/*/memo', '/meta/*/t', '/a~1b'] });
    expect(view).toEqual({ lines: [{ sku: 1 }, { sku: 2 }], meta: { a: { k: 2 }, b: {} } });
  });

  it('never removes an array element (a pointer ending at an index leaves it material)', () => {
    expect(buildMaterialView({ list: [1, 2] }, { informational: ['/list/0'] })).toEqual({ list: [1, 2] });
  });

  it('sorts unordered arrays innermost first, by JCS bytes, after NFC', () => {
    const args = { m: [['b', 'a'], ['a', 'c'], ['\u00e9']], keep: ['b', 'a'] };
    const view = buildMaterialView(args, { unordered: ['/m', '/m/*'] });
    expect(view).toEqual({ m: [['a', 'b'], ['a', 'c'], ['\u00e9']], keep: ['b', 'a'] });
    const nfd = buildMaterialView(
      { m: [['e\u0301'], ['c', 'a'], ['b', 'a']], keep: ['b', 'a'] },
      { unordered: ['/m', '/m/*'] },
    );
    expect(nfd).toEqual(view);
  });

  it('orders items by bytes, not by UTF-16 code units or value', () => {
    // U+FF61 (UTF-8 EF BD A1) sorts before U+1F600 (F0 9F 98 80) by bytes, after it by UTF-16 (D83D < FF61);
    // a string's JCS bytes start with '"' (0x22), so strings come before numbers, and 10 ("10") before 9 ("9").
    const view = buildMaterialView({ s: [9, '😀', 10, '\uff61'] }, { unordered: ['/s'] });
    expect(view).toEqual({ s: ['\uff61', '😀', 10, 9] });
  });

  it('compareBytes is unsigned lexicographic with prefixes first', () => {
    expect(compareBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2, 0]))).toBeLessThan(0);
    expect(compareBytes(new Uint8Array([0xff]), new Uint8Array([0x7f]))).toBeGreaterThan(0);
    expect(compareBytes(new Uint8Array([3]), new Uint8Array([3]))).toBe(0);
  });
});

describe('findValueText', () => {
  const text = ' { "a" : [ 1 , { "b\\u0022" : 1.50 } , "x]" ] , "c" : { } , "d" : -0e1 } ';
  it('finds a literal exactly as written, through arrays, escaped keys and brackets in strings', () => {
    expect(findValueText(text, ['a', '1', 'b"'])).toBe('1.50');
    expect(findValueText(text, ['a', '2'])).toBe('"x]"');
    expect(findValueText(text, ['c'])).toBe('{ }');
    expect(findValueText(text, ['d'])).toBe('-0e1');
    expect(findValueText(text, [])).toBe(text.trim());
  });
  it('answers undefined for what is absent', () => {
    expect(findValueText(text, ['a', '3'])).toBeUndefined();
    expect(findValueText(text, ['a', '01'])).toBeUndefined();
    expect(findValueText(text, ['z'])).toBeUndefined();
    expect(findValueText(text, ['d', 'x'])).toBeUndefined();
  });
});

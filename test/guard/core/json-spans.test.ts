// Value boundaries in a JSON text (src/guard/core/json-spans.ts): what the guard splices a renamed tools/call with.

import { describe, expect, it } from 'vitest';
import { findElementSpans, findMemberSpan, findRootSpan, type TextSpan } from '../../../src/guard/core/json-spans.ts';

const slice = (text: string, span: TextSpan | undefined): string | undefined =>
  span === undefined ? undefined : text.slice(span.start, span.end);

describe('json-spans', () => {
  it('finds the root value without its surrounding whitespace, and refuses trailing bytes', () => {
    expect(slice(' \r\n{"a":1}\t ', findRootSpan(' \r\n{"a":1}\t '))).toBe('{"a":1}');
    expect(slice('-1.5e3', findRootSpan('-1.5e3'))).toBe('-1.5e3');
    expect(findRootSpan('{"a":1} x')).toBeUndefined();
    expect(findRootSpan('')).toBeUndefined();
  });

  it('finds members by their decoded key (the last duplicate wins), skipping strings that hold brackets or quotes', () => {
    const text = '{"x":"}]\\"{","na\\u006de":{"deep":[[{"}":"]"}]]},"name" : "second" ,"y":null}';
    const root = findRootSpan(text)!;
    expect(slice(text, findMemberSpan(text, root, 'name'))).toBe('"second"');
    expect(slice(text, findMemberSpan(text, root, 'x'))).toBe('"}]\\"{"');
    expect(slice(text, findMemberSpan(text, root, 'y'))).toBe('null');
    expect(findMemberSpan(text, root, 'missing')).toBeUndefined();
    expect(findMemberSpan('{}', { start: 0, end: 2 }, 'a')).toBeUndefined();
    expect(findMemberSpan('[1]', { start: 0, end: 3 }, 'a')).toBeUndefined();
  });

  it('finds the elements of an array, and nothing for another value', () => {
    const text = '[ {"a":[1,2]} ,"s,]", 3 ,[]]';
    const spans = findElementSpans(text, findRootSpan(text)!)!;
    expect(spans.map((span) => slice(text, span))).toEqual(['{"a":[1,2]}', '"s,]"', '3', '[]']);
    expect(findElementSpans('[ ]', findRootSpan('[ ]')!)).toEqual([]);
    expect(findElementSpans('{}', findRootSpan('{}')!)).toBeUndefined();
  });

  it('does not recurse: a deeply nested value is skipped', () => {
    const deep = `{"params":${'['.repeat(200_000)}${']'.repeat(200_000)},"name":"n"}`;
    const root = findRootSpan(deep)!;
    expect(slice(deep, findMemberSpan(deep, root, 'name'))).toBe('"n"');
  });
});

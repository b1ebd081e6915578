// Property tests of the action digest (issue §2): key order, informational members, unordered arrays and NFC/NFD
// never change it; any change of one material leaf always does.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arbitraryJsonValue, isRoundTrippable } from '../helpers/json-arbitraries.ts';
import { computeAction, readCallArguments, selectSignedTool } from '../../src/host/index.ts';
import { runPipeline, type JsonObject, type JsonValue } from '../../src/pipeline/index.ts';

const RUNS = Number(process.env['TOOLSEAL_PROPERTY_RUNS'] ?? 100);
const utf8 = new TextEncoder();

const signed = selectSignedTool(
  runPipeline(
    utf8.encode(
      JSON.stringify({
        name: 'io.example.props/open',
        version: '1.0.0',
        tools: [
          {
            name: 'open',
            inputSchema: { type: 'object' },
            approval: { informational: ['/info', '/lines/*/memo'], unordered: ['/set', '/matrix', '/matrix/*'] },
          },
        ],
      }),
    ),
  ).canonicalBytes,
  'open',
  'https://registry.test',
);

function digestOf(args: JsonObject): string {
  return computeAction(signed, readCallArguments(utf8.encode(JSON.stringify(args))), 'host-a').digest;
}

// Characters whose NFC and NFD forms differ, and plain ones.
const char = fc.constantFrom('a', 'e', '\u00e9', 'e\u0301', '\u1e69', '\uac00', '\u212b', 'z', '"', '\\', '😀');
const text = fc.array(char, { maxLength: 5 }).map((chars) => chars.join(''));
const key = fc.constantFrom('a', 'b', 'c', 'amount', 'to', 'x y', '~', '/');
// The strict parser refuses integral values outside ±(2^53−1) below 1e21 (RFC 7493 §2.2), as publish does.
const number = fc
  .oneof(fc.integer({ min: -1e6, max: 1e6 }), fc.double({ noNaN: true, noDefaultInfinity: true }))
  .filter(isRoundTrippable);
const jsonValue = arbitraryJsonValue({ number, text, key, maxDepth: 3, maxLength: 4 });
const materialArgs = fc.dictionary(fc.constantFrom('p', 'q', 'r'), jsonValue, { maxKeys: 3, noNullPrototype: true });

function mapValue(value: JsonValue, onString: (text: string) => string, reverse: boolean): JsonValue {
  if (typeof value === 'string') return onString(value);
  if (Array.isArray(value)) return value.map((item) => mapValue(item, onString, reverse));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  const result: JsonObject = {};
  for (const k of reverse ? keys.reverse() : keys) result[k] = mapValue(value[k]!, onString, reverse);
  return result;
}

/** The value with its `which`-th leaf (in walk order) changed so that its JCS form differs; a container may grow. */
function mutateOne(value: JsonValue, which: number): JsonValue {
  let seen = -1;
  const walk = (node: JsonValue): JsonValue => {
    if (Array.isArray(node)) return node.length === 0 ? (++seen === which ? [0] : node) : node.map(walk);
    if (node !== null && typeof node === 'object') {
      if (Object.keys(node).length === 0) return ++seen === which ? { added: 0 } : node;
      const result: JsonObject = {};
      for (const k of Object.keys(node)) result[k] = walk(node[k]!);
      return result;
    }
    if (++seen !== which) return node;
    if (typeof node === 'string') return `${node}x`;
    if (typeof node === 'number') return node === 1 ? 2 : 1;
    if (typeof node === 'boolean') return !node;
    return false;
  };
  const changed = walk(value);
  return seen < which ? mutateOne(value, which % (seen + 1)) : changed;
}

describe('action digest properties', () => {
  it('object key order never changes it', () => {
    fc.assert(
      fc.property(materialArgs, (args) => {
        expect(digestOf(mapValue(args, (s) => s, true) as JsonObject)).toBe(digestOf(args));
      }),
      { numRuns: RUNS },
    );
  });

  it('informational members (with * wildcards) never change it', () => {
    fc.assert(
      fc.property(
        materialArgs,
        jsonValue,
        jsonValue,
        fc.array(fc.tuple(text, jsonValue), { maxLength: 3 }),
        (args, a, b, lines) => {
          const withA = { ...args, info: a, lines: lines.map(([sku, memo]) => ({ sku, memo })) };
          const withB = { ...args, info: b, lines: lines.map(([sku]) => ({ sku, memo: b })) };
          const without = { ...args, lines: lines.map(([sku]) => ({ sku })) };
          expect(digestOf(withB)).toBe(digestOf(withA));
          expect(digestOf(without)).toBe(digestOf(withA));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('reordering an unordered array (innermost first) never changes it; reordering an ordered one does', () => {
    const items = fc.uniqueArray(jsonValue, { minLength: 2, maxLength: 5, selector: (v) => JSON.stringify(v) });
    fc.assert(
      fc.property(
        materialArgs,
        items,
        fc.array(fc.array(text, { maxLength: 3 }), { maxLength: 3 }),
        (args, set, matrix) => {
          const reversed = [...set].reverse();
          const inner = matrix.map((row) => [...row].reverse()).reverse();
          expect(digestOf({ ...args, set: reversed, matrix: inner })).toBe(digestOf({ ...args, set, matrix }));
          const normalised = new Set(set.map((v) => JSON.stringify(mapValue(v, (s) => s.normalize('NFC'), false))));
          fc.pre(normalised.size === set.length);
          expect(digestOf({ ...args, ordered: reversed })).not.toBe(digestOf({ ...args, ordered: set }));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('NFC and NFD spellings of string values never change it', () => {
    fc.assert(
      fc.property(materialArgs, (args) => {
        const nfd = mapValue(args, (s) => s.normalize('NFD'), false) as JsonObject;
        const nfc = mapValue(args, (s) => s.normalize('NFC'), false) as JsonObject;
        expect(digestOf(nfd)).toBe(digestOf(args));
        expect(digestOf(nfc)).toBe(digestOf(args));
      }),
      { numRuns: RUNS },
    );
  });

  it('any change of one material leaf changes it', () => {
    fc.assert(
      fc.property(materialArgs, fc.nat(), (args, which) => {
        const payload = { payload: args };
        const changed = { payload: mutateOne(args, which) };
        expect(digestOf(changed)).not.toBe(digestOf(payload));
      }),
      { numRuns: RUNS },
    );
  });
});

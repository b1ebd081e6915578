// Stage 4: tool names NFC-normalised (collisions refused), keys and enum/const strings must already be NFC, free text byte-exact.

import { describe, expect, it } from 'vitest';
import { runPipeline, type JsonObject } from '../../src/pipeline/index.ts';
import { encodeJson, expectRefusal, fromUtf8, manifest, tool, utf8 } from '../helpers/pipeline-helpers.ts';

const NFC_CAFE = 'caf\u00e9';
const NFD_CAFE = 'cafe\u0301';
const NFD_E = 'e\u0301';

const bytesOf = (tools: JsonObject[], extra: JsonObject = {}) => encodeJson(manifest(tools, extra));
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const contains = (haystack: Uint8Array, needle: string) => hex(haystack).includes(hex(utf8(needle)));

describe('tool names', () => {
  it('an NFD tool name is renamed to NFC; renamedTools lists index, from and to; the bytes hold the NFC form', () => {
    const result = runPipeline(bytesOf([tool('plain'), tool(`${NFD_CAFE}_lookup`)]));
    expect(result.renamedTools).toEqual([{ index: 1, from: `${NFD_CAFE}_lookup`, to: `${NFC_CAFE}_lookup` }]);
    expect(result.manifest.tools.map((t) => t.name)).toEqual(['plain', `${NFC_CAFE}_lookup`]);
    expect(contains(result.canonicalBytes, `"name":"${NFC_CAFE}_lookup"`)).toBe(true);
    expect(contains(result.canonicalBytes, NFD_E)).toBe(false);
    expect(hex(result.canonicalBytes)).toContain('636166c3a95f6c6f6f6b7570'); // "café_lookup" in UTF-8, é = C3 A9
  });

  it('renames every tool whose name changes, in order, and only those', () => {
    const angstrom = '\u212b'; // ANGSTROM SIGN: a singleton whose NFC is U+00C5
    const hangulNfd = '\u1112\u1161\u11ab'; // 한 as conjoining jamo
    const result = runPipeline(bytesOf([tool(angstrom), tool('ok'), tool(hangulNfd), tool(NFC_CAFE)]));
    expect(result.renamedTools).toEqual([
      { index: 0, from: angstrom, to: '\u00c5' },
      { index: 2, from: hangulNfd, to: '\ud55c' },
    ]);
  });

  it('an escaped NFD name is renamed the same way', () => {
    const bytes = utf8(
      '{"name":"io.example.test/pipeline","version":"1.0.0","tools":[{"name":"cafe\\u0301","inputSchema":{"type":"object"}}]}',
    );
    expect(runPipeline(bytes).renamedTools).toEqual([{ index: 0, from: NFD_CAFE, to: NFC_CAFE }]);
  });

  it('NFC only: compatibility characters are not folded (that would be NFKC)', () => {
    const result = runPipeline(bytesOf([tool('\ufb01le_open'), tool('x\u00b2')]));
    expect(result.renamedTools).toEqual([]);
    expect(result.manifest.tools.map((t) => t.name)).toEqual(['\ufb01le_open', 'x\u00b2']);
  });

  it('no renames: the result lists none and the tools are the input tools', () => {
    expect(runPipeline(bytesOf([tool(NFC_CAFE), tool('b')])).renamedTools).toEqual([]);
  });

  it('two tools that collide after NFC → NAME_COLLISION at /tools/1/name, naming the first', () => {
    const refusal = expectRefusal(
      () => runPipeline(bytesOf([tool(NFC_CAFE), tool(NFD_CAFE)])),
      'NAME_COLLISION',
      '/tools/1/name',
    );
    expect(refusal.message).toContain('/tools/0/name');
    expect(refusal.message).toContain('NFC');
  });

  it('two NFD spellings that collide with each other after NFC are refused too', () => {
    expectRefusal(
      () => runPipeline(bytesOf([tool('x'), tool('\u212b'), tool('A\u030a')])),
      'NAME_COLLISION',
      '/tools/2/name',
    );
  });

  it('exact duplicates → NAME_COLLISION at the second one', () => {
    const refusal = expectRefusal(
      () => runPipeline(bytesOf([tool('a'), tool('b'), tool('a')])),
      'NAME_COLLISION',
      '/tools/2/name',
    );
    expect(refusal.message).toContain('/tools/0/name');
    expect(refusal.message).not.toContain('NFC');
  });

  it('names that differ only in case do not collide (names are compared exactly)', () => {
    expect(runPipeline(bytesOf([tool('Search'), tool('search')])).manifest.tools).toHaveLength(2);
  });
});

describe('object keys must be NFC (NOT_NFC with the pointer of the key)', () => {
  it('a schema property name', () => {
    expectRefusal(
      () =>
        runPipeline(bytesOf([tool('t', { type: 'object', properties: { ok: {}, [NFD_CAFE]: { type: 'string' } } })])),
      'NOT_NFC',
      `/tools/0/inputSchema/properties/${NFD_CAFE}`,
    );
  });

  it('a key inside _meta', () => {
    expectRefusal(
      () => runPipeline(bytesOf([tool('t', { type: 'object' }, { _meta: { 'io.example/x': { [NFD_E]: 1 } } })])),
      'NOT_NFC',
      `/tools/0/_meta/io.example~1x/${NFD_E}`,
    );
  });

  it('a key inside data (default, examples) and in outputSchema', () => {
    expectRefusal(
      () => runPipeline(bytesOf([tool('t', { type: 'object', default: { list: [{ [NFD_E]: true }] } })])),
      'NOT_NFC',
      `/tools/0/inputSchema/default/list/0/${NFD_E}`,
    );
    expectRefusal(
      () =>
        runPipeline(
          bytesOf([
            tool(
              't',
              { type: 'object' },
              { outputSchema: { type: 'object', required: [], properties: { [NFD_E]: {} } } },
            ),
          ]),
        ),
      'NOT_NFC',
      `/tools/0/outputSchema/properties/${NFD_E}`,
    );
  });

  it('a key in the second tool', () => {
    expectRefusal(
      () => runPipeline(bytesOf([tool('a'), tool('b', { type: 'object', $defs: { ['\u212b']: {} } })])),
      'NOT_NFC',
      '/tools/1/inputSchema/$defs/\u212b',
    );
  });

  it('a non-NFC manifest-level key is refused by the closed envelope first (UNKNOWN_FIELD)', () => {
    expectRefusal(() => runPipeline(bytesOf([tool('a')], { [NFD_E]: 1 })), 'UNKNOWN_FIELD', `/${NFD_E}`);
  });

  it('an NFC key with non-Latin text passes', () => {
    const result = runPipeline(
      bytesOf([tool('t', { type: 'object', properties: { [NFC_CAFE]: {}, 한국어: {}, '😀': {} } })]),
    );
    expect(Object.keys(result.manifest.tools[0]!.inputSchema['properties'] as JsonObject)).toEqual([
      NFC_CAFE,
      '한국어',
      '😀',
    ]);
  });
});

describe('enum and const strings must be NFC (NOT_NFC with the pointer of the string)', () => {
  it('an enum member', () => {
    expectRefusal(
      () => runPipeline(bytesOf([tool('t', { type: 'object', properties: { x: { enum: [NFC_CAFE, NFD_CAFE] } } })])),
      'NOT_NFC',
      '/tools/0/inputSchema/properties/x/enum/1',
    );
  });

  it('a const string, and a string nested in a const object', () => {
    expectRefusal(
      () => runPipeline(bytesOf([tool('t', { type: 'object', properties: { x: { const: NFD_CAFE } } })])),
      'NOT_NFC',
      '/tools/0/inputSchema/properties/x/const',
    );
    expectRefusal(
      () => runPipeline(bytesOf([tool('t', { type: 'object', properties: { x: { const: { k: ['ok', NFD_E] } } } })])),
      'NOT_NFC',
      '/tools/0/inputSchema/properties/x/const/k/1',
    );
  });

  it('in nested subschemas: items, anyOf, $defs, outputSchema', () => {
    expectRefusal(
      () =>
        runPipeline(
          bytesOf([
            tool('t', {
              type: 'object',
              properties: { x: { type: 'array', items: { anyOf: [{ enum: ['a'] }, { enum: [NFD_E] }] } } },
            }),
          ]),
        ),
      'NOT_NFC',
      '/tools/0/inputSchema/properties/x/items/anyOf/1/enum/0',
    );
    expectRefusal(
      () => runPipeline(bytesOf([tool('t', { type: 'object', $defs: { d: { const: NFD_E } } })])),
      'NOT_NFC',
      '/tools/0/inputSchema/$defs/d/const',
    );
    expectRefusal(
      () => runPipeline(bytesOf([tool('t', { type: 'object' }, { outputSchema: { enum: [NFD_E] } })])),
      'NOT_NFC',
      '/tools/0/outputSchema/enum/0',
    );
  });

  it('NFC enum/const strings with non-Latin text pass', () => {
    const schema = { type: 'object', properties: { x: { enum: [NFC_CAFE, '한', '😀'] }, y: { const: 'Å' } } };
    expect(runPipeline(bytesOf([tool('t', schema)])).manifest.tools[0]!.inputSchema).toEqual(schema);
  });

  it('"enum"/"const" inside data (a default value) is data, not a keyword: not checked, kept byte-exact', () => {
    const result = runPipeline(bytesOf([tool('t', { type: 'object', default: { enum: [NFD_E], const: NFD_E } })]));
    expect(contains(result.canonicalBytes, `{"const":"${NFD_E}","enum":["${NFD_E}"]}`)).toBe(true);
  });
});

describe('free text stays byte-exact', () => {
  it('non-NFC descriptions, titles, examples, defaults and annotations are kept exactly as sent', () => {
    const text = `${NFD_CAFE} \u212b \u1112\u1161\u11ab`;
    const result = runPipeline(
      bytesOf(
        [
          tool(
            't',
            {
              type: 'object',
              title: text,
              description: text,
              properties: { x: { type: 'string', description: text, default: text, examples: [text] } },
            },
            { title: text, description: text, annotations: { title: text } },
          ),
        ],
        { description: text },
      ),
    );
    const canonical = fromUtf8(result.canonicalBytes);
    expect(canonical.split(text)).toHaveLength(10); // 9 occurrences, none rewritten
    expect(canonical).not.toContain(text.normalize('NFC'));
    expect(result.renamedTools).toEqual([]);
  });
});

// Canonicalisation is idempotent: whatever the pipeline accepts, its output bytes run through the pipeline again are
// accepted with the same bytes and digest (docs/manifest-format.md, "Tools": every name rule holds for the NFC name
// that is signed). A property over the corpus (test/vectors/corpus) and over generated manifests whose tool names
// NFC changes (compositions, and characters that NFC expands to 2 or 3 code points), with refs and non-Latin text.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { parseStrict, runPipeline, type JsonObject, type JsonValue } from '../../src/pipeline/index.ts';
import { readFileSync } from 'node:fs';
import {
  corpusManifestName,
  encodeJson,
  expectRefusal,
  listFiles,
  manifest,
  tool,
  vectorPath,
} from '../helpers/pipeline-helpers.ts';

const RUNS = Number(process.env['TOOLSEAL_PROPERTY_RUNS'] ?? 100);

/** U+FB2C HEBREW LETTER SHIN WITH DAGESH AND SHIN DOT: precomposed, excluded from composition; its NFC is 3 code points. */
const SHIN_DAGESH_SHIN_DOT = '\ufb2c';

/**
 * Pieces of tool names: ASCII, composable sequences (NFC shortens them), singletons, and characters whose NFC is
 * longer than they are (U+FB2C → 3, U+0344 → 2, U+0958 → 2, U+2ADC → 2, U+1D15E → 2 code points).
 */
const namePieces = [
  'a',
  'z',
  '_',
  '-',
  '.',
  '7',
  'e\u0301',
  'A\u030a',
  '\u212b',
  '\u1112\u1161\u11ab',
  '한',
  'é',
  'ü',
  SHIN_DAGESH_SHIN_DOT,
  '\u0344',
  '\u0958',
  '\u2adc',
  '\u{1d15e}',
  '😀',
  'ж',
  'λ',
];

const codePoints = (text: string) => [...text].length;

/** A name body: short, or long enough (up to the raw 128-code-point limit) that NFC may push it over. */
const nameBody = fc
  .oneof(
    fc.array(fc.constantFrom(...namePieces), { minLength: 1, maxLength: 12 }),
    fc.array(fc.constantFrom(...namePieces), { minLength: 40, maxLength: 128, size: 'max' }),
  )
  .map((pieces) => {
    let name = '';
    for (const piece of pieces) {
      if (codePoints(name + piece) > 124) break; // room for the `tN_` prefix within the raw limit
      name += piece;
    }
    return name;
  });

const freeText = fc.oneof(
  fc.string({ maxLength: 16 }),
  fc
    .array(fc.constantFrom('x', ' ', 'e\u0301', '\u200f', '\u200d', '中文', '\u202e', '😀'), { maxLength: 8 })
    .map((parts) => parts.join('')),
);

const propertyKey = fc.constantFrom('amount', 'café', 'größe', '名前', 'k😀', 'a_b');

const generatedTool = fc.record(
  {
    body: nameBody,
    description: freeText,
    keys: fc.uniqueArray(propertyKey, { maxLength: 3 }),
    withRef: fc.boolean(),
    enumValues: fc.array(fc.constantFrom('α', 'b', 'Å', 'ü'), { minLength: 1, maxLength: 3 }),
  },
  { requiredKeys: ['body', 'keys', 'withRef', 'enumValues'] },
);

/** A generated manifest: 1–4 tools with `t<index>_` name prefixes (so names stay apart), some with refs. */
const generatedManifest: fc.Arbitrary<JsonObject> = fc
  .array(generatedTool, { minLength: 1, maxLength: 4 })
  .map((tools) =>
    manifest(
      tools.map((t, index) => {
        const properties: JsonObject = {};
        for (const key of t.keys) properties[key] = { type: 'string', enum: t.enumValues };
        const inputSchema: JsonObject = { type: 'object', properties };
        if (t.withRef) {
          inputSchema['$defs'] = { shared: { type: 'string', description: t.description ?? 'shared' } };
          properties['ref'] = { $ref: '#/$defs/shared' };
        }
        const extra: JsonObject = t.description === undefined ? {} : { description: t.description };
        return tool(`t${index}_${t.body}`, inputSchema, extra);
      }),
    ),
  );

const corpusFiles = listFiles(vectorPath('corpus'), '.tools.json');
const corpusTools = new Map<string, JsonValue[]>(
  corpusFiles.map((file) => {
    const parsed = parseStrict(readFileSync(vectorPath('corpus', file))).value as JsonObject;
    return [file, parsed['tools'] as JsonValue[]];
  }),
);

/** A corpus file and generated suffixes for some of its tool names (NFC-changing, possibly long). */
const corpusChoice = fc.record({
  file: fc.constantFrom(...corpusFiles),
  suffixes: fc.array(fc.option(nameBody, { nil: undefined, freq: 2 }), { maxLength: 200 }),
});

/** The manifest of a corpus choice (built in the property, so a counterexample prints as file and suffixes). */
function corpusManifest({ file, suffixes }: { file: string; suffixes: (string | undefined)[] }): JsonObject {
  const tools = (corpusTools.get(file) ?? []).map((entry, index) => {
    const original = entry as JsonObject;
    const suffix = suffixes[index];
    return suffix === undefined ? original : { ...original, name: `${String(original['name'])}_${suffix}` };
  });
  return { name: corpusManifestName(file), version: '1.0.0', tools };
}

type Outcome = { accepted: true; bytes: Uint8Array; digest: string } | { accepted: false; code: string };

function runOnce(bytes: Uint8Array): Outcome {
  try {
    const result = runPipeline(bytes);
    return { accepted: true, bytes: result.canonicalBytes, digest: result.digest };
  } catch (error) {
    if (error instanceof ToolsealError) return { accepted: false, code: error.code };
    throw error;
  }
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** The property: accepted once ⇒ the output is accepted again, byte for byte, with the same digest and no renames. */
function expectFixedPoint(value: JsonObject): void {
  const first = runOnce(encodeJson(value));
  if (!first.accepted) return;
  let second: ReturnType<typeof runPipeline>;
  try {
    second = runPipeline(first.bytes);
  } catch (error) {
    throw new Error(`the pipeline's own output was refused: ${JSON.stringify(error)}`);
  }
  expect(hex(second.canonicalBytes)).toBe(hex(first.bytes));
  expect(second.digest).toBe(first.digest);
  expect(second.renamedTools).toEqual([]);
}

describe('canonicalisation is idempotent', () => {
  it('U+FB2C × 128 (384 code points after NFC) is refused like a 129-character name: INVALID_MANIFEST at /tools/0/name', () => {
    const refusal = expectRefusal(
      () => runPipeline(encodeJson(manifest([tool(SHIN_DAGESH_SHIN_DOT.repeat(128))]))),
      'INVALID_MANIFEST',
      '/tools/0/name',
    );
    expect(refusal.message).toContain('/tools/0/name must be at most 128');
    // The same code, pointer and wording as the envelope gives a raw 129-character name.
    const raw = expectRefusal(
      () => runPipeline(encodeJson(manifest([tool('x'.repeat(129))]))),
      'INVALID_MANIFEST',
      '/tools/0/name',
    );
    expect(refusal.message).toBe(raw.message);
  });

  it('the rule holds for every tool, not only the first: the pointer names the tool whose NFC name is too long', () => {
    expectRefusal(
      () => runPipeline(encodeJson(manifest([tool('ok'), tool(`b${'\u0344'.repeat(64)}`)]))),
      'INVALID_MANIFEST',
      '/tools/1/name',
    );
  });

  it('a name at exactly 128 code points after NFC is accepted and stays a fixed point', () => {
    const name = `${SHIN_DAGESH_SHIN_DOT.repeat(42)}ab`; // 44 code points sent, 42 × 3 + 2 = 128 signed
    const first = runPipeline(encodeJson(manifest([tool(name)])));
    expect(codePoints(first.manifest.tools[0]!.name)).toBe(128);
    expect(first.renamedTools).toEqual([{ index: 0, from: name, to: name.normalize('NFC') }]);
    expect(runPipeline(first.canonicalBytes).digest).toBe(first.digest);
  });

  it('the generators reach both sides: accepted manifests with renames and refs, and NFC-length refusals', () => {
    const samples = fc.sample(fc.oneof(generatedManifest, corpusChoice.map(corpusManifest)), { numRuns: 200, seed: 7 });
    const outcomes = samples.map((sample) => runOnce(encodeJson(sample)));
    const accepted = outcomes.filter((o) => o.accepted).length;
    expect(accepted).toBeGreaterThan(samples.length / 3);
    expect(outcomes.some((o) => !o.accepted && o.code === 'INVALID_MANIFEST')).toBe(true);
    const renamed = samples.filter((sample) => {
      try {
        return runPipeline(encodeJson(sample)).renamedTools.length > 0;
      } catch {
        return false;
      }
    });
    expect(renamed.length).toBeGreaterThan(0);
  });

  it('property: generated manifests (NFC-changing names, refs, unicode) the pipeline accepts are a fixed point', () => {
    fc.assert(fc.property(generatedManifest, expectFixedPoint), { numRuns: RUNS });
  });

  it('property: corpus manifests, with NFC-changing suffixes on some tool names, are a fixed point when accepted', () => {
    fc.assert(
      fc.property(corpusChoice, (choice) => expectFixedPoint(corpusManifest(choice))),
      { numRuns: RUNS },
    );
  });

  it('every corpus file as it is: its canonical bytes are a fixed point', () => {
    for (const file of corpusFiles.filter((f) => f !== 'mcp-spec-examples.tools.json')) {
      expectFixedPoint({ name: corpusManifestName(file), version: '1.0.0', tools: corpusTools.get(file) ?? [] });
    }
  });
});

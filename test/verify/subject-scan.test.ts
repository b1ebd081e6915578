// scanDeclaredSubject only accepts bytes the strict parser accepts, with the same name and version; the subject
// stage built on it (checkDeclaredSubject) refuses exactly what parsing strictly refuses, with the same errors.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { canonicalizeToBytes, type JsonValue } from '../../src/pipeline/index.ts';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../../src/pipeline/limits.ts';
import { parseStrict } from '../../src/pipeline/parse.ts';
import { verifyFetched } from '../../src/verify/index.ts';
import { checkDeclaredSubject, parseSignedManifest } from '../../src/verify/subject.ts';
import { scanDeclaredSubject } from '../../src/verify/subject-scan.ts';
import { canonicalOf, repoRoot } from './helpers.ts';
import {
  attestation,
  bytes as signedBytes,
  jwks,
  LEAF_INDEX,
  logKey,
  NAME,
  servedInclusion,
  VERSION,
} from './stage-fixtures.ts';

function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (error) {
    return error instanceof ToolsealError ? { code: error.code, message: error.message } : { thrown: String(error) };
  }
}

/** What the subject stage did before the scan: parse strictly, then compare name@version. */
function strictSubject(bytes: Uint8Array, attested: string): unknown {
  return outcome(() => {
    const manifest = parseSignedManifest(bytes);
    const declared = `${manifest.name}@${manifest.version}`;
    if (declared !== attested) {
      throw new ToolsealError(
        'SUBJECT_MISMATCH',
        `the bytes declare ${declared} but the attestation is for ${attested}`,
      );
    }
    return { name: manifest.name, version: manifest.version, manifest };
  });
}

function scannedSubject(bytes: Uint8Array, attested: string): unknown {
  return outcome(() => {
    const declared = checkDeclaredSubject(bytes, attested);
    return { name: declared.name, version: declared.version, manifest: declared.readManifest() };
  });
}

/** The scan either declines or yields exactly the strict parser's name and version; the stage agrees in full. */
function expectAgreement(bytes: Uint8Array, attested = 'a/b@1'): void {
  const scanned = scanDeclaredSubject(bytes);
  if (scanned !== undefined) {
    const manifest = parseSignedManifest(bytes); // throws (fails the test) if the scan accepted what strict refuses
    expect(scanned).toEqual({ name: manifest.name, version: manifest.version });
  }
  expect(scannedSubject(bytes, attested)).toEqual(strictSubject(bytes, attested));
}

const utf8 = (text: string): Uint8Array => Buffer.from(text, 'utf8');

/** A manifest nesting `depth` levels deep (the top-level object is level 1). */
const deep = (depth: number): string =>
  `{"name":"a/b","version":"1","z":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;

/** Hostile inputs: each must be refused as strictly, or read with the same name and version. */
const HOSTILE = [
  // Duplicate keys: plain, behind escapes, nested, in arrays, the name itself.
  '{"name":"a/b","name":"x/y","version":"1"}',
  '{"name":"a/b","version":"1","version":"2"}',
  '{"n\\u0061me":"x/y","name":"a/b","version":"1"}',
  '{"name":"a/b","n\\u0061me":"x/y","version":"1"}',
  '{"a\\/b":1,"a/b":2,"name":"a/b","version":"1"}',
  '{"name":"a/b","version":"1","x":{"k":1,"k":1}}',
  '{"name":"a/b","version":"1","x":[{"k":1,"k":2}]}',
  '{"name":"a/b","version":"1","x":{"k":{"name":1,"name":2}}}',
  '{"version":"1","name":"a/b"}',
  '{"b":1,"a":2,"name":"a/b","version":"1"}',
  '{"\u00e9":1,"\u00e8":2,"name":"a/b","version":"1"}',
  '{"\uffff":1,"\ud83d\ude00":2,"name":"a/b","version":"1"}',
  '{"__proto__":1,"name":"a/b","version":"1"}',
  '{"__proto__":1,"__proto__":2,"name":"a/b","version":"1"}',
  // Big and odd numbers.
  '{"name":"a/b","size":9007199254740993,"version":"1"}',
  '{"name":"a/b","size":9007199254740991,"version":"1"}',
  '{"name":"a/b","size":123456789012345,"version":"1"}',
  '{"name":"a/b","size":-12345678901234,"version":"1"}',
  '{"name":"a/b","size":1234567890123456,"version":"1"}',
  '{"name":"a/b","size":100000000000000000000,"version":"1"}',
  '{"name":"a/b","size":1e400,"version":"1"}',
  '{"name":"a/b","size":1e-400,"version":"1"}',
  '{"name":"a/b","size":1E5,"version":"1"}',
  '{"name":"a/b","size":-0,"version":"1"}',
  '{"name":"a/b","size":-0.0,"version":"1"}',
  '{"name":"a/b","size":0.00000000000001,"version":"1"}',
  '{"name":"a/b","size":9007199254740993.0,"version":"1"}',
  `{"name":"a/b","size":0.${'0'.repeat(400)}1,"version":"1"}`,
  `{"name":"a/b","size":1${'0'.repeat(400)}.5,"version":"1"}`,
  '{"name":"a/b","size":01,"version":"1"}',
  '{"name":"a/b","size":-,"version":"1"}',
  '{"name":"a/b","size":1.,"version":"1"}',
  '{"name":"a/b","size":.5,"version":"1"}',
  '{"name":"a/b","size":+1,"version":"1"}',
  // Surrogates and escapes.
  '{"name":"a/b","version":"1","x":"\\ud800"}',
  '{"name":"a/b","version":"1","x":"\\udc00\\ud800"}',
  '{"name":"a/b","version":"1","x":"\\ud83d\\ude00"}',
  '{"name":"a/b\\ud800","version":"1"}',
  '{"name":"a\\/b","version":"1"}',
  '{"name":"a/b","version":"\\u0031"}',
  '{"name":"a/b","version":"1","x":"\\q"}',
  '{"name":"a/b","version":"1","x":"\\"\\\\\\/\\b\\f\\n\\r\\t"}',
  '{"name":"a/b","version":"1","x":"tab\there"}',
  '{"name":"a/b","version":"1","x":"a\\',
  // Nested and misplaced name/version.
  '{"x":{"name":"a/b","version":"1"}}',
  '{"x":{"name":"x/y","version":"9"},"name":"a/b","version":"1"}',
  '{"name":"a/b","version":"1","x":{"name":"x/y","version":"9"}}',
  '{"name":["a/b"],"version":"1"}',
  '{"name":{"name":"a/b"},"version":"1"}',
  '{"name":"a/b","version":1}',
  '{"name":"a/b","version":null}',
  '{"name":"a/b"}',
  '{"version":"1"}',
  '{}',
  '[{"name":"a/b","version":"1"}]',
  '"name"',
  // White space, BOM, framing.
  '{ "name" : "a/b" , "version" : "1" }',
  '{\n\t"name":\r\n"a/b",\n  "version":"1"\n}\n',
  ' {"name":"a/b","version":"1"}',
  '{"name":"a/b","version":"1"} \t\r\n',
  '\ufeff{"name":"a/b","version":"1"}',
  '{"name":"a/b","version":"1"}x',
  '{"name":"a/b","version":"1"}{}',
  '{"name":"a/b","version":"1"',
  '{"name":"a/b","version":"1",}',
  '{"name":"a/b",,"version":"1"}',
  '{"name" "a/b","version":"1"}',
  '{"name":"a/b","version":"1","x":[1,]}',
  '{"name":"a/b","version":"1","x":[,1]}',
  '{"name":"a/b","version":"1","x":tru}',
  '{"name":"a/b","version":"1","x":nulll}',
  '{"name":"a/b","version":"1","x":[true,false,null]}',
  '{"name":"a/b","version":"1","x":{}}',
  '{"name":"a/b","version":"1","x":[]}',
  '{"name":"a/b","version":"1","x":[[],{},[{}]]}',
  deep(1000),
  deep(1001),
];

describe('scanDeclaredSubject and the subject stage: hostile inputs', () => {
  it.each(HOSTILE)('agree with the strict parser on %s', (text) => {
    expectAgreement(utf8(text));
    expectAgreement(utf8(text), 'x/y@9');
  });

  it('agree on bytes that are not UTF-8: a lone surrogate encoded, an overlong form, a stray byte', () => {
    const head = utf8('{"name":"a/b","version":"1","x":"');
    const tail = utf8('"}');
    for (const bad of [[0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xff], [0xe2, 0x82]]) {
      const bytes = Buffer.concat([head, Uint8Array.from(bad), tail]);
      expect(scanDeclaredSubject(bytes)).toBeUndefined();
      expectAgreement(bytes);
    }
  });

  it('reads the name and version of canonical bytes without escapes, and declines the rest to the strict parser', () => {
    expect(scanDeclaredSubject(utf8('{"name":"a/b","version":"1"}'))).toEqual({ name: 'a/b', version: '1' });
    expect(scanDeclaredSubject(utf8('{ "name" : "a/b" , "version" : "1" }'))).toEqual({ name: 'a/b', version: '1' });
    expect(scanDeclaredSubject(utf8('{"name":"é/ü","version":"1"}'))).toEqual({ name: 'é/ü', version: '1' });
    expect(scanDeclaredSubject(utf8('{"name":"a/b","name":"x/y","version":"1"}'))).toBeUndefined();
    expect(scanDeclaredSubject(utf8('{"name":"a\\/b","version":"1"}'))).toBeUndefined();
    expect(scanDeclaredSubject(utf8('{"version":"1","name":"a/b"}'))).toBeUndefined();
    expect(scanDeclaredSubject(utf8(deep(1000)))).toEqual({ name: 'a/b', version: '1' });
    expect(scanDeclaredSubject(utf8(deep(1001)))).toBeUndefined();
  });

  it('is taken for the canonical bytes of every shipped manifest, with the strict parse only when asked', () => {
    const dir = join(repoRoot, 'manifests');
    const files = readdirSync(dir).filter((file) => file.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = canonicalOf(readFileSync(join(dir, file)));
      const manifest = parseSignedManifest(bytes);
      expect(scanDeclaredSubject(bytes)).toEqual({ name: manifest.name, version: manifest.version });
      const declared = checkDeclaredSubject(bytes, `${manifest.name}@${manifest.version}`);
      expect(declared.readManifest()).toEqual(manifest);
      expect(declared.readManifest()).toBe(declared.readManifest());
    }
  });
});

describe('verifyFetched with the scanned subject', () => {
  it('returns the strictly parsed manifest when it is read, the same object on every read, and in a spread', () => {
    const verified = verifyFetched({ bytes: signedBytes, attestation, inclusion: servedInclusion(), jwks, logKey });
    expect(scanDeclaredSubject(signedBytes)).toEqual({ name: NAME, version: VERSION });
    expect([verified.name, verified.version, verified.logIndex]).toEqual([NAME, VERSION, LEAF_INDEX]);
    expect(verified.manifest).toEqual(parseStrict(signedBytes, SIGNED_MANIFEST_PARSE_LIMITS).value);
    expect(verified.manifest).toBe(verified.manifest);
    expect({ ...verified }.manifest).toBe(verified.manifest);
  });
});

/** A member key drawn so duplicates, escapes and order matter. */
const memberKey = fc.constantFrom('a', 'b', 'name', 'version', 'n\\u0061me', 'na\\/me', '\u00e9', '\ud83d\ude00', '');
const scalarText = fc.oneof(
  fc.jsonValue({ maxDepth: 0 }).map((value) => JSON.stringify(value)),
  fc.constantFrom('"a/b"', '"1"', '"x/y"', '-0', '1e5', '9007199254740993', '0.5', '"\\ud800"', '"\\n"'),
);
const valueText = fc.letrec((tie) => ({
  value: fc.oneof(
    { weight: 4, arbitrary: scalarText },
    { weight: 1, arbitrary: tie('object') as fc.Arbitrary<string> },
    {
      weight: 1,
      arbitrary: fc
        .array(tie('value') as fc.Arbitrary<string>, { maxLength: 3 })
        .map((items) => `[${items.join(',')}]`),
    },
  ),
  object: fc
    .tuple(
      fc.array(fc.tuple(memberKey, tie('value') as fc.Arbitrary<string>), { maxLength: 5 }),
      fc.constantFrom('', ' ', '\n', '\t '),
    )
    .map(([members, space]) => `{${members.map(([k, v]) => `${space}"${k}"${space}:${space}${v}`).join(',')}${space}}`),
}));

/** A manifest-like object: name and version (strings or not) among arbitrary members, sorted or not. */
const manifestValue = fc
  .tuple(
    fc.oneof(fc.constantFrom('a/b', 'x/y', 'é/ü', 'a\u2028b'), fc.jsonValue({ maxDepth: 1 })),
    fc.oneof(fc.constantFrom('1', '1.0.0', '9'), fc.jsonValue({ maxDepth: 1 })),
    fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }),
  )
  .map(([name, version, rest]) => ({ ...rest, name, version }) as JsonValue);

/** Small edits of a text: a character inserted, deleted or replaced by one that matters to JSON. */
const edited = (texts: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc
    .tuple(
      texts,
      fc.array(
        fc.tuple(
          fc.nat(),
          fc.constantFrom('insert', 'delete', 'replace'),
          fc.constantFrom(...'{}[]:,"\\ \n0123456789eE.-+tfnu/é'),
        ),
        { maxLength: 3 },
      ),
    )
    .map(([text, edits]) => {
      let out = text;
      for (const [at, kind, char] of edits) {
        const i = out.length === 0 ? 0 : at % out.length;
        if (kind === 'insert') out = out.slice(0, i) + char + out.slice(i);
        else if (kind === 'delete') out = out.slice(0, i) + out.slice(i + 1);
        else out = out.slice(0, i) + char + out.slice(i + 1);
      }
      return out;
    });

describe('scanDeclaredSubject, property: it accepts only what the strict parser accepts, with the same subject', () => {
  it('on generated objects with repeated and escaped keys, white space and any JSON values', () => {
    fc.assert(
      fc.property(valueText.object, (text) => expectAgreement(utf8(text))),
      { numRuns: 1500 },
    );
  });

  it('on canonical (JCS) and pretty-printed manifests, where it must also be taken when nothing needs escaping', () => {
    fc.assert(
      fc.property(manifestValue, fc.boolean(), (value, pretty) => {
        const bytes = pretty ? utf8(JSON.stringify(value, null, 2)) : canonicalizeToBytes(value);
        expectAgreement(bytes, 'a/b@1');
        const text = Buffer.from(bytes).toString('utf8');
        const plain = !text.includes('\\') && !/[eE][-+0-9]/.test(text.replace(/"[^"]*"/g, '""'));
        const object = value as Record<string, JsonValue>;
        if (plain && typeof object['name'] === 'string' && typeof object['version'] === 'string' && !pretty) {
          // JCS writes keys sorted and numbers short: the fast path applies unless a number is long.
          const long = /[-0-9.]{16,}/.test(text.replace(/"[^"]*"/g, '""'));
          if (!long) expect(scanDeclaredSubject(bytes)).toEqual({ name: object['name'], version: object['version'] });
        }
      }),
      { numRuns: 800 },
    );
  });

  it('on small edits of canonical manifests and of generated objects (truncations, stray tokens, broken escapes)', () => {
    const canonical = manifestValue.map((value) => Buffer.from(canonicalizeToBytes(value)).toString('utf8'));
    fc.assert(
      fc.property(edited(fc.oneof(canonical, valueText.object)), (text) => expectAgreement(utf8(text))),
      { numRuns: 2000 },
    );
  });
});

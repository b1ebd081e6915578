// The subject stage: the signed bytes must themselves declare the attested name@version.

import { describe, expect, it } from 'vitest';
import { canonicalizeToBytes, type JsonValue } from '../../src/pipeline/index.ts';
import { parseSignedManifest, verifyDeclaredSubject } from '../../src/verify/subject.ts';
import { throwsWithCode } from './helpers.ts';
import { NAME, VERSION, bytes } from './stage-fixtures.ts';

describe('verifyDeclaredSubject', () => {
  it('returns the parsed manifest when the bytes declare the attested name@version', () => {
    const manifest = verifyDeclaredSubject(bytes, `${NAME}@${VERSION}`);
    expect(manifest.name).toBe(NAME);
    expect(manifest.version).toBe(VERSION);
  });

  it('bytes declaring another name or version are SUBJECT_MISMATCH', () => {
    const error = throwsWithCode(() => verifyDeclaredSubject(bytes, `${NAME}@1.3.0`), 'SUBJECT_MISMATCH');
    expect(error.message).toBe(`the bytes declare ${NAME}@${VERSION} but the attestation is for ${NAME}@1.3.0`);
    throwsWithCode(() => verifyDeclaredSubject(bytes, `io.github.acme/contacts@${VERSION}`), 'SUBJECT_MISMATCH');
  });

  it('bytes that are not a manifest with a string name and version are SUBJECT_MISMATCH', () => {
    const values: JsonValue[] = [[], 'x', { name: NAME }, { name: NAME, version: 1 }, { version: VERSION }];
    for (const value of values) {
      throwsWithCode(() => parseSignedManifest(canonicalizeToBytes(value)), 'SUBJECT_MISMATCH');
    }
  });

  it('parses with the signed-manifest limits: deeper than an upload may nest, still strict JSON', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 200; i++) deep = [deep];
    const nested = Buffer.from(JSON.stringify({ name: NAME, version: VERSION, deep }));
    expect(parseSignedManifest(nested).version).toBe(VERSION);
    expect(() => parseSignedManifest(Buffer.from(`{"name":"${NAME}","name":"x","version":"1.0.0"}`))).toThrow();
  });
});

// The bundle leaf kind (src/log/entries.ts) and checkBundleLeaf (src/log/bundle-leaf.ts): a hashedrekord v0.0.2 body
// over SHA-256 of the statement's DSSE PAE, signed by a published P-256 bundle key, checked for fsck and the audit.

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildBundleJwksKeys,
  buildJwks,
  createBundleSigningKey,
  encodePae,
  formatHashedRekordFacts,
  IN_TOTO_PAYLOAD_TYPE,
  parseHashedRekordBody,
  serializeStatementJcs,
  signBundleEntry,
} from '../../src/attest/index.ts';
import { checkBundleLeaf, computeStatementPaeDigest } from '../../src/log/index.ts';
import { parseLogEntry } from '../../src/log/entries.ts';
import { canonicalizeToBytes } from '../../src/pipeline/canonical.ts';
import { key as jwsKey, statement as publishStatement } from '../attest/publish-statement-fixture.ts';

const statement = new Uint8Array(Buffer.from(serializeStatementJcs(publishStatement), 'utf8'));
const bundleKey = createBundleSigningKey();
const nbf = 1_700_000_000;
const validity = { kid: bundleKey.kid, publicJwk: bundleKey.publicJwk, notBefore: nbf, notAfter: nbf + 1000 };
/** The JWKS as the registry will serve it: the Ed25519 JWS key and the P-256 bundle key side by side. */
const jwks = {
  keys: [
    ...buildJwks([{ kid: jwsKey.kid, publicJwk: jwsKey.publicJwk, notBefore: nbf, notAfter: null }]).keys,
    ...buildBundleJwksKeys([validity]),
  ],
};
const { leaf } = signBundleEntry(statement, bundleKey);

describe('parseLogEntry: the bundle kind', () => {
  it('recognises a hashedrekord v0.0.2 leaf as a bundle entry with its facts', () => {
    const parsed = parseLogEntry(leaf);
    expect(parsed).toMatchObject({ ok: true, kind: 'bundle' });
    const facts = parseHashedRekordBody(leaf);
    if (typeof facts === 'string' || !parsed.ok || parsed.kind !== 'bundle') throw new Error('not parsed');
    expect(Buffer.from(parsed.entry.digest).toString('hex')).toBe(computeStatementPaeDigest(statement));
    expect(parsed.entry).toEqual(facts);
  });

  it('refuses a hashedrekord leaf of another version or with an extra member as BUNDLE_ENTRY_INVALID', () => {
    const body = JSON.parse(Buffer.from(leaf).toString('utf8'));
    const other = Buffer.from(JSON.stringify({ ...body, apiVersion: '0.0.1' }));
    expect(parseLogEntry(other)).toEqual({
      ok: false,
      code: 'BUNDLE_ENTRY_INVALID',
      message: 'is not a hashedrekord v0.0.2 entry',
    });
    body.spec.hashedRekordV002.extra = 1;
    expect(parseLogEntry(canonicalizeToBytes(body))).toEqual({
      ok: false,
      code: 'BUNDLE_ENTRY_INVALID',
      message: 'has members other than a hashedrekord v0.0.2 entry',
    });
  });

  it('still refuses a leaf that is none of the kinds', () => {
    expect(parseLogEntry(Buffer.from('{"kind":"dsse"}'))).toEqual({
      ok: false,
      code: 'ENTRY_MALFORMED',
      message: 'neither an attestation, a yank, a key, an approval nor a bundle entry',
    });
  });
});

describe('checkBundleLeaf', () => {
  it('accepts the genuine leaf with the JWKS the registry serves, and names the key', () => {
    const checked = checkBundleLeaf({ leaf, statement, bundleKeys: jwks, at: nbf + 10 });
    expect(checked).toMatchObject({ ok: true, kid: bundleKey.kid });
  });

  it('records SHA-256 of the PAE, the digest Sigstore verifiers rebuild', () => {
    const pae = encodePae(IN_TOTO_PAYLOAD_TYPE, statement);
    expect(computeStatementPaeDigest(statement)).toBe(createHash('sha256').update(pae).digest('hex'));
  });

  it('refuses a leaf of another statement (BUNDLE_ENTRY_INVALID)', () => {
    const other = new Uint8Array(statement);
    other[other.length - 3] = (other[other.length - 3] as number) ^ 1;
    expect(checkBundleLeaf({ leaf, statement: other, bundleKeys: jwks })).toEqual({
      ok: false,
      code: 'BUNDLE_ENTRY_INVALID',
      message: 'the leaf does not log this statement',
    });
  });

  it('refuses a leaf whose key is not a published bundle key (UNKNOWN_KEY), even a valid signature', () => {
    const stranger = signBundleEntry(statement, createBundleSigningKey()).leaf;
    expect(checkBundleLeaf({ leaf: stranger, statement, bundleKeys: jwks })).toMatchObject({
      ok: false,
      code: 'UNKNOWN_KEY',
    });
    // The Ed25519 keys of the JWKS never stand in for a bundle key.
    expect(checkBundleLeaf({ leaf, statement, bundleKeys: buildJwks([]) })).toMatchObject({ code: 'UNKNOWN_KEY' });
  });

  it('refuses a leaf whose signature is not the key signature over the PAE (SIGNATURE_INVALID)', () => {
    const facts = parseHashedRekordBody(leaf);
    if (typeof facts === 'string') throw new Error(facts);
    const signature = new Uint8Array(facts.signature);
    signature[signature.length - 1] = (signature[signature.length - 1] as number) ^ 1;
    const forged = formatHashedRekordFacts({ ...facts, signature });
    expect(checkBundleLeaf({ leaf: forged, statement, bundleKeys: jwks })).toEqual({
      ok: false,
      code: 'SIGNATURE_INVALID',
      message: `the signature by bundle key ${bundleKey.kid} does not verify`,
    });
  });

  it('refuses a key outside its window at the given time (KEY_NOT_VALID): before nbf and at exp', () => {
    for (const at of [nbf - 1, nbf + 1000]) {
      expect(checkBundleLeaf({ leaf, statement, bundleKeys: jwks, at })).toEqual({
        ok: false,
        code: 'KEY_NOT_VALID',
        message: `bundle key ${bundleKey.kid} was not valid at ${at}`,
      });
    }
  });

  it('property: the PAE digest differs for any two different statements', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.uint8Array({ maxLength: 64 }), (a, b) => {
        fc.pre(!Buffer.from(a).equals(Buffer.from(b)));
        expect(computeStatementPaeDigest(a)).not.toBe(computeStatementPaeDigest(b));
      }),
    );
  });
});

// Our Sigstore bundles (src/attest/sigstore-bundle.ts) against the real verifier: @sigstore/verify 4.1.3 in a child
// process on Node ≥ 22 (test/helpers/node22.ts), with our trusted root and bundle keyring, tlog threshold 1 and no
// timestamp authority. It verifies a genuine bundle and refuses every altered one, each for its own reason.

import { describe, expect, it } from 'vitest';
import { createBundleSigningKey, createSigningKey } from '../../src/attest/index.ts';
import { buildLoggedBundle, copyJson, runSigstoreVerify } from './sigstore-fixture.ts';

const genuine = buildLoggedBundle();
const now = Math.floor(Date.now() / 1000);

/** Flip one bit of a base64 value (the result is still well-formed base64 of the same length). */
function flipBase64(text: string, byteIndex = 0): string {
  const bytes = Buffer.from(text, 'base64');
  bytes[byteIndex] = (bytes[byteIndex] as number) ^ 0x01;
  return bytes.toString('base64');
}

function entryOf(bundle: typeof genuine.bundle) {
  return bundle.verificationMaterial.tlogEntries[0];
}

describe('@sigstore/verify on our bundles', () => {
  it('verifies a genuine bundle against our trusted root and keyring', () => {
    expect(runSigstoreVerify(genuine)).toEqual({ ok: true });
  });

  it('verifies a bundle of a retired key that was logged while the key was valid (a rotated key)', () => {
    const rotated = buildLoggedBundle({ integratedTime: now - 600, keyNotBefore: now - 3600, keyNotAfter: now - 60 });
    expect(runSigstoreVerify(rotated)).toEqual({ ok: true });
  });

  it('refuses an altered payload: the logged digest of the PAE no longer matches', () => {
    const bundle = copyJson(genuine.bundle);
    const statement = Buffer.from(bundle.dsseEnvelope.payload, 'base64').toString('utf8');
    bundle.dsseEnvelope.payload = Buffer.from(statement.replace('1.2.0', '1.2.1')).toString('base64');
    expect(runSigstoreVerify({ ...genuine, bundle })).toEqual({
      ok: false,
      code: 'TLOG_BODY_ERROR',
      message: 'digest mismatch',
    });
  });

  it('refuses an altered signature: it is not the logged one', () => {
    const bundle = copyJson(genuine.bundle);
    bundle.dsseEnvelope.signatures[0].sig = flipBase64(bundle.dsseEnvelope.signatures[0].sig, 10);
    expect(runSigstoreVerify({ ...genuine, bundle })).toEqual({
      ok: false,
      code: 'TLOG_BODY_ERROR',
      message: 'signature mismatch',
    });
  });

  it('refuses a logged signature that the hinted key did not make', () => {
    // A bundle honestly logged but signed by another P-256 key, checked with the genuine key under its hint.
    const other = buildLoggedBundle({ logKey: genuine.logKey });
    const keys = { [other.bundleKey.kid]: genuine.keys[genuine.bundleKey.kid] as object };
    expect(runSigstoreVerify({ bundle: other.bundle, trustedRoot: genuine.trustedRoot, keys })).toEqual({
      ok: false,
      code: 'SIGNATURE_ERROR',
      message: 'signature verification failed',
    });
  });

  it('refuses an altered inclusion proof', () => {
    const bundle = copyJson(genuine.bundle);
    const proof = entryOf(bundle).inclusionProof;
    proof.hashes[1] = flipBase64(proof.hashes[1] as string, 5);
    expect(runSigstoreVerify({ ...genuine, bundle })).toEqual({
      ok: false,
      code: 'TLOG_INCLUSION_PROOF_ERROR',
      message: 'calculated root hash does not match inclusion proof',
    });
  });

  it('refuses a proof moved to another leaf index', () => {
    const bundle = copyJson(genuine.bundle);
    entryOf(bundle).inclusionProof.logIndex = String(genuine.logIndex + 1);
    const verdict = runSigstoreVerify({ ...genuine, bundle });
    expect(verdict).toMatchObject({ ok: false, code: 'TLOG_INCLUSION_PROOF_ERROR' });
  });

  it('refuses an altered checkpoint: its signature no longer verifies', () => {
    const bundle = copyJson(genuine.bundle);
    const checkpoint = entryOf(bundle).inclusionProof.checkpoint;
    const [origin, size, root, ...rest] = checkpoint.envelope.split('\n');
    checkpoint.envelope = [origin, size, flipBase64(root as string), ...rest].join('\n');
    expect(runSigstoreVerify({ ...genuine, bundle })).toEqual({
      ok: false,
      code: 'TLOG_INCLUSION_PROOF_ERROR',
      message: 'invalid checkpoint signature',
    });
  });

  it('refuses a backdated integration time: the log signed another one', () => {
    const bundle = copyJson(genuine.bundle);
    // Still inside the key's validity, so only the promise can refuse it.
    entryOf(bundle).integratedTime = String(now - 1800);
    expect(runSigstoreVerify({ ...genuine, bundle })).toEqual({
      ok: false,
      code: 'TLOG_INCLUSION_PROMISE_ERROR',
      message: 'inclusion promise could not be verified',
    });
  });

  it('refuses a bundle signed by a retired key after it was retired', () => {
    const retired = buildLoggedBundle({ keyNotBefore: now - 3600, keyNotAfter: now - 60 });
    const verdict = runSigstoreVerify(retired);
    expect(verdict).toMatchObject({ ok: false, code: 'PUBLIC_KEY_ERROR' });
    expect((verdict as { message: string }).message).toMatch(/^Public key is not valid for timestamp: /);
  });

  it('refuses a bundle signed before its key was valid', () => {
    const early = buildLoggedBundle({ integratedTime: now - 7200, keyNotBefore: now - 3600 });
    expect(runSigstoreVerify(early)).toMatchObject({ ok: false, code: 'PUBLIC_KEY_ERROR' });
  });

  it('refuses a bundle whose key is not in the keyring', () => {
    const keys = { [createBundleSigningKey().kid]: genuine.keys[genuine.bundleKey.kid] as object };
    expect(runSigstoreVerify({ ...genuine, keys })).toMatchObject({ ok: false, code: 'PUBLIC_KEY_ERROR' });
  });

  it("refuses a bundle checked against another registry's trusted root", () => {
    const other = buildLoggedBundle({ logKey: createSigningKey() });
    expect(runSigstoreVerify({ ...genuine, trustedRoot: other.trustedRoot })).toEqual({
      ok: false,
      code: 'TLOG_INCLUSION_PROMISE_ERROR',
      message: 'inclusion promise could not be verified',
    });
    // Without the promise (and so without a timestamp), the checkpoint is what fails: no key of that root signed it.
    const bundle = copyJson(genuine.bundle) as unknown as {
      verificationMaterial: { tlogEntries: Record<string, unknown>[] };
    };
    delete bundle.verificationMaterial.tlogEntries[0]?.['inclusionPromise'];
    expect(
      runSigstoreVerify({ bundle, trustedRoot: other.trustedRoot, keys: genuine.keys, timestampThreshold: 0 }),
    ).toEqual({ ok: false, code: 'TLOG_INCLUSION_PROOF_ERROR', message: 'invalid checkpoint signature' });
  });

  it("refuses our log under another host name: the checkpoint's origin must be the base URL's host", () => {
    const trustedRoot = copyJson(genuine.trustedRoot);
    (trustedRoot.tlogs[0] as { baseUrl: string }).baseUrl = 'http://registry.example';
    expect(runSigstoreVerify({ ...genuine, trustedRoot })).toEqual({
      ok: false,
      code: 'TLOG_INCLUSION_PROOF_ERROR',
      message: 'invalid checkpoint signature',
    });
  });
});

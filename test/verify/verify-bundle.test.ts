// verifyBundle (src/verify/verify-bundle.ts): our own reading of a Sigstore bundle, with the JWS path's guarantees and
// codes, on the same bundles @sigstore/verify checks in test/attest/sigstore-verify.test.ts.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildJwks, createBundleSigningKey, createSigningKey } from '../../src/attest/index.ts';
import { computeDigest } from '../../src/core/digest.ts';
import { isToolsealError } from '../../src/core/errors.ts';
import { canonicalizeToBytes } from '../../src/pipeline/canonical.ts';
import { verifyBundle, type VerifyBundleInput } from '../../src/verify/verify-bundle.ts';
import {
  buildLoggedBundle,
  copyJson,
  type LoggedBundle,
  manifestBytes,
  NAME,
  published,
  runSigstoreVerify,
  VERSION,
} from '../attest/sigstore-fixture.ts';

const genuine = buildLoggedBundle();
const now = Math.floor(Date.now() / 1000);

function inputOf(logged: LoggedBundle, bundle: unknown = logged.bundle): VerifyBundleInput {
  return {
    bytes: manifestBytes,
    bundle: Buffer.from(JSON.stringify(bundle)),
    bundleKeys: logged.bundleJwks,
    logKey: logged.logVerifier,
  };
}

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isToolsealError(error)) return error.code;
    throw error;
  }
  return 'ACCEPTED';
}

function flipBase64(text: string, byteIndex = 0): string {
  const bytes = Buffer.from(text, 'base64');
  bytes[byteIndex] = (bytes[byteIndex] as number) ^ 0x01;
  return bytes.toString('base64');
}

type Entry = LoggedBundle['bundle']['verificationMaterial']['tlogEntries'][0];

function alterEntry(change: (entry: Entry) => void): LoggedBundle['bundle'] {
  const bundle = copyJson(genuine.bundle);
  change(bundle.verificationMaterial.tlogEntries[0]);
  return bundle;
}

describe('verifyBundle', () => {
  it('verifies a genuine bundle and returns what it proved', () => {
    const verified = verifyBundle({ ...inputOf(genuine), expected: { name: NAME, version: VERSION } });
    expect(verified).toMatchObject({
      name: NAME,
      version: VERSION,
      digest: computeDigest(manifestBytes),
      kid: genuine.bundleKey.kid,
      logIndex: genuine.logIndex,
      checkpoint: { origin: '127.0.0.1', size: 12 },
    });
    expect(verified.manifest).toEqual(published.manifest);
    expect(verified.digest).toBe(published.digest);
    expect(Buffer.from(JSON.stringify(verified.statement))).toEqual(
      Buffer.from(JSON.stringify(JSON.parse(genuine.statement.toString()))),
    );
  });

  it('takes its keys from a JWKS that also holds the Ed25519 JWS keys', () => {
    const signing = createSigningKey();
    const jwks = buildJwks([{ kid: signing.kid, publicJwk: signing.publicJwk, notBefore: now - 60, notAfter: null }]);
    const bundleKeys = { keys: [...jwks.keys, ...genuine.bundleJwks] };
    expect(verifyBundle({ ...inputOf(genuine), bundleKeys }).kid).toBe(genuine.bundleKey.kid);
  });

  it('agrees with @sigstore/verify on the genuine bundle (the same bytes pass both)', () => {
    expect(runSigstoreVerify(genuine)).toEqual({ ok: true });
    expect(codeOf(() => verifyBundle(inputOf(genuine)))).toBe('ACCEPTED');
  });

  it('refuses bytes other than the pinned ones first', () => {
    const pin = computeDigest(Buffer.from('other'));
    expect(codeOf(() => verifyBundle({ ...inputOf(genuine), expected: { digest: pin } }))).toBe('PIN_MISMATCH');
  });

  it('refuses other bytes (DIGEST_MISMATCH) and another name@version (SUBJECT_MISMATCH)', () => {
    const other = canonicalizeToBytes({ name: NAME, version: VERSION, tools: [1] });
    expect(codeOf(() => verifyBundle({ ...inputOf(genuine), bytes: other }))).toBe('DIGEST_MISMATCH');
    expect(codeOf(() => verifyBundle({ ...inputOf(genuine), expected: { name: NAME, version: '9.9.9' } }))).toBe(
      'SUBJECT_MISMATCH',
    );
  });

  it('refuses an altered payload or signature (SIGNATURE_INVALID)', () => {
    const payload = copyJson(genuine.bundle);
    const text = Buffer.from(payload.dsseEnvelope.payload, 'base64').toString('utf8');
    payload.dsseEnvelope.payload = Buffer.from(text.replace('1.2.0', '1.2.1')).toString('base64');
    expect(codeOf(() => verifyBundle(inputOf(genuine, payload)))).toBe('SIGNATURE_INVALID');
    const signature = copyJson(genuine.bundle);
    signature.dsseEnvelope.signatures[0].sig = flipBase64(signature.dsseEnvelope.signatures[0].sig, 10);
    expect(codeOf(() => verifyBundle(inputOf(genuine, signature)))).toBe('SIGNATURE_INVALID');
  });

  it('refuses any single-bit change of the signed statement', () => {
    fc.assert(
      fc.property(fc.nat({ max: genuine.statement.byteLength - 1 }), fc.nat({ max: 7 }), (index, bit) => {
        const bundle = copyJson(genuine.bundle);
        const bytes = Buffer.from(genuine.statement);
        bytes[index] = (bytes[index] as number) ^ (1 << bit);
        bundle.dsseEnvelope.payload = bytes.toString('base64');
        expect(codeOf(() => verifyBundle(inputOf(genuine, bundle)))).toBe('SIGNATURE_INVALID');
      }),
      { numRuns: 40 },
    );
  });

  it('refuses an envelope that is not exactly one signature whose keyid is the hint', () => {
    const two = copyJson(genuine.bundle) as unknown as { dsseEnvelope: { signatures: unknown[] } };
    two.dsseEnvelope.signatures.push(two.dsseEnvelope.signatures[0]);
    expect(codeOf(() => verifyBundle(inputOf(genuine, two)))).toBe('SIGNATURE_INVALID');
    const keyid = copyJson(genuine.bundle);
    keyid.dsseEnvelope.signatures[0].keyid = 'another';
    expect(codeOf(() => verifyBundle(inputOf(genuine, keyid)))).toBe('SIGNATURE_INVALID');
    const type = copyJson(genuine.bundle);
    type.dsseEnvelope.payloadType = 'application/json';
    expect(codeOf(() => verifyBundle(inputOf(genuine, type)))).toBe('SIGNATURE_INVALID');
  });

  it('refuses bundle bytes with a duplicate member (strict parser)', () => {
    const text = JSON.stringify(genuine.bundle).replace(
      '"mediaType":',
      '"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","mediaType":',
    );
    expect(codeOf(() => verifyBundle({ ...inputOf(genuine), bundle: Buffer.from(text) }))).toBe('SIGNATURE_INVALID');
  });

  it('refuses a key it does not pin (UNKNOWN_KEY) and a key outside its validity (KEY_NOT_VALID)', () => {
    const stranger = createBundleSigningKey();
    const bundleKeys = [{ ...stranger.publicJwk, nbf: now - 3600 }];
    expect(codeOf(() => verifyBundle({ ...inputOf(genuine), bundleKeys }))).toBe('UNKNOWN_KEY');
    const retired = buildLoggedBundle({ keyNotBefore: now - 3600, keyNotAfter: now - 60 });
    expect(codeOf(() => verifyBundle(inputOf(retired)))).toBe('KEY_NOT_VALID');
    const rotated = buildLoggedBundle({ integratedTime: now - 600, keyNotBefore: now - 3600, keyNotAfter: now - 60 });
    expect(codeOf(() => verifyBundle(inputOf(rotated)))).toBe('ACCEPTED');
  });

  it('refuses a JWK whose kid is not its thumbprint', () => {
    const bundleKeys = [{ ...genuine.bundleJwks[0], kid: createBundleSigningKey().kid }];
    expect(codeOf(() => verifyBundle({ ...inputOf(genuine), bundleKeys }))).toBe('UNKNOWN_KEY');
  });

  it('refuses a served body other than the leaf rebuilt from the bundle', () => {
    const bundle = alterEntry((entry) => {
      const body = JSON.parse(Buffer.from(entry.canonicalizedBody, 'base64').toString('utf8'));
      body.spec.hashedRekordV002.data.digest = Buffer.alloc(32).toString('base64');
      entry.canonicalizedBody = Buffer.from(JSON.stringify(body)).toString('base64');
    });
    expect(codeOf(() => verifyBundle(inputOf(genuine, bundle)))).toBe('SIGNATURE_INVALID');
  });

  it('refuses altered log evidence (NOT_IN_LOG): proof, index, root, checkpoint, time, promise', () => {
    const cases: LoggedBundle['bundle'][] = [
      alterEntry((entry) => {
        entry.inclusionProof.hashes[1] = flipBase64(entry.inclusionProof.hashes[1] as string, 5);
      }),
      alterEntry((entry) => {
        entry.logIndex = String(genuine.logIndex + 1);
        entry.inclusionProof.logIndex = entry.logIndex;
      }),
      alterEntry((entry) => {
        entry.inclusionProof.rootHash = flipBase64(entry.inclusionProof.rootHash);
      }),
      alterEntry((entry) => {
        const [origin, size, root, ...rest] = entry.inclusionProof.checkpoint.envelope.split('\n');
        entry.inclusionProof.checkpoint.envelope = [origin, size, flipBase64(root as string), ...rest].join('\n');
      }),
      alterEntry((entry) => {
        entry.integratedTime = String(now - 1800);
      }),
      alterEntry((entry) => {
        entry.inclusionPromise.signedEntryTimestamp = flipBase64(entry.inclusionPromise.signedEntryTimestamp, 3);
      }),
    ];
    for (const bundle of cases) expect(codeOf(() => verifyBundle(inputOf(genuine, bundle)))).toBe('NOT_IN_LOG');
  });

  it("refuses another log's key and a claimed log index the proof is not for", () => {
    const other = buildLoggedBundle();
    expect(codeOf(() => verifyBundle({ ...inputOf(genuine), logKey: other.logVerifier }))).toBe('NOT_IN_LOG');
    expect(codeOf(() => verifyBundle({ ...inputOf(genuine), expected: { logIndex: genuine.logIndex + 1 } }))).toBe(
      'NOT_IN_LOG',
    );
  });
});

describe('verifyBundle on a statement that is not strict JSON', () => {
  it('refuses a validly signed statement with a duplicate member (SIGNATURE_INVALID)', async () => {
    const { signBundleEntry } = await import('../../src/attest/index.ts');
    const text = genuine.statement.toString().replace('{"_type":', '{"_type":"x","_type":');
    const entry = signBundleEntry(Buffer.from(text), genuine.bundleKey);
    const bundle = copyJson(genuine.bundle);
    bundle.dsseEnvelope = entry.envelope;
    expect(() => verifyBundle(inputOf(genuine, bundle))).toThrow(
      expect.objectContaining({ code: 'SIGNATURE_INVALID', message: 'the signed statement is not strict JSON' }),
    );
  });
});

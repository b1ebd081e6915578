// fetchVerified(registry, ref, { format: 'bundle' }) (issue 26 §3) against a real in-process registry: it verifies the
// Sigstore bundle the registry serves (by name@version and by digest, a yanked version too) and answers the bundle
// shape; through a tampering proxy, altered bytes, an altered signature, proof or checkpoint and another registry's
// bundle are refused with their codes; options only the JWS path takes are BAD_REQUEST before any request.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SigstoreBundleJson } from '../../src/attest/index.ts';
import { computeDigest } from '../../src/core/digest.ts';
import type { PublishOutcome } from '../../src/registry/index.ts';
import { bundleByDigestPath, bundlePath } from '../../src/protocol/routes.ts';
import { type FetchedManifestBundle, fetchVerified } from '../../src/verify/index.ts';
import {
  canonicalOf,
  type FakeRegistry,
  manifestFile,
  manifestVariant,
  rejectsWithCode,
  startFakeRegistry,
  startRegistry,
  type TestRegistry,
} from './helpers.ts';

const PAYMENTS = 'io.github.acme/payments';
const REF = `${PAYMENTS}@1.2.0`;

let real: TestRegistry;
let other: TestRegistry;
let fake: FakeRegistry;
let payments: PublishOutcome;
let paymentsBytes: Uint8Array;

beforeAll(async () => {
  real = await startRegistry();
  other = await startRegistry('http://other-registry.test');
  paymentsBytes = canonicalOf(manifestFile('payments'));
  payments = await real.publish(manifestFile('payments'));
  await real.publish(manifestVariant('payments', { version: '1.3.0' }));
  await real.yank(PAYMENTS, '1.3.0', 'superseded');
  await other.publish(manifestFile('payments'));
  fake = await startFakeRegistry(real.url);
});

afterAll(async () => {
  await fake?.close();
  await real?.close();
  await other?.close();
});

afterEach(() => {
  fake.rewrite = undefined;
  fake.requests.length = 0;
});

async function servedBundle(registry: TestRegistry, path: string): Promise<Buffer> {
  const response = await fetch(`${registry.url}${path}`);
  expect(response.status).toBe(200);
  return Buffer.from(await response.arrayBuffer());
}

/** Rewrite the bundle (by version and by digest) the proxy passes on. */
function alterBundle(change: (bundle: SigstoreBundleJson) => void): void {
  fake.rewrite = (path, response) => {
    if (!path.endsWith('/bundle')) return response;
    const bundle = JSON.parse(response.body.toString('utf8')) as SigstoreBundleJson;
    change(bundle);
    return { ...response, body: Buffer.from(JSON.stringify(bundle)) };
  };
}

describe("fetchVerified with format: 'bundle'", () => {
  it('verifies the bundle by name@version: the bytes, the bundle as served, its key, log index and checkpoint', async () => {
    const result: FetchedManifestBundle = await fetchVerified(real.url, REF, { format: 'bundle' });
    const served = await servedBundle(real, bundlePath(PAYMENTS, '1.2.0'));
    expect(Buffer.from(result.bundle).equals(served)).toBe(true);
    expect(Buffer.from(result.bytes).equals(Buffer.from(paymentsBytes))).toBe(true);
    const json = JSON.parse(served.toString('utf8')) as SigstoreBundleJson;
    const entry = json.verificationMaterial.tlogEntries[0];
    expect(result).toMatchObject({
      format: 'bundle',
      registry: real.url,
      name: PAYMENTS,
      version: '1.2.0',
      digest: payments.record.digest,
      kid: json.verificationMaterial.publicKey.hint,
      logIndex: Number(entry.logIndex),
      integratedTime: Number(entry.integratedTime),
      storedAt: payments.record.storedAt,
    });
    expect(result.checkpoint.size).toBe((await real.registry.latestCheckpoint())!.size);
    expect(result.manifest.name).toBe(PAYMENTS);
    // The default is unchanged: the JWS path, its attestation the stored one.
    const jws = await fetchVerified(real.url, REF);
    expect(Buffer.from(jws.attestation).equals(payments.record.attestation)).toBe(true);
    expect('format' in jws).toBe(false);
    expect((await fetchVerified(real.url, REF, { format: 'jws' })).logIndex).toBe(payments.record.logIndex);
  });

  it('verifies by digest (GET /v1/blobs/{digest}/bundle), and a yanked version', async () => {
    const result = await fetchVerified(real.url, payments.record.digest, { format: 'bundle' });
    expect(result).toMatchObject({ name: PAYMENTS, version: '1.2.0', digest: payments.record.digest });
    expect(
      Buffer.from(result.bundle).equals(await servedBundle(real, bundleByDigestPath(payments.record.digest))),
    ).toBe(true);
    const yanked = await fetchVerified(real.url, `${PAYMENTS}@1.3.0`, { format: 'bundle' });
    expect(yanked.version).toBe('1.3.0');
  });

  it('takes pinned keys and a pinned digest: another registry’s keys are UNKNOWN_KEY, another log NOT_IN_LOG', async () => {
    const jwks = await real.registry.jwks();
    const logKey = real.registry.log.verifierString;
    const pinned = await fetchVerified(real.url, REF, { format: 'bundle', jwks, logKey });
    expect(pinned.digest).toBe(payments.record.digest);
    const options = { format: 'bundle' as const, jwks: await other.registry.jwks(), logKey };
    await rejectsWithCode(fetchVerified(real.url, REF, options), 'UNKNOWN_KEY');
    const otherLog = { format: 'bundle' as const, jwks, logKey: other.registry.log.verifierString };
    await rejectsWithCode(fetchVerified(real.url, REF, otherLog), 'NOT_IN_LOG');
    const digest = computeDigest(new Uint8Array([1]));
    await rejectsWithCode(fetchVerified(real.url, REF, { format: 'bundle', expectedDigest: digest }), 'PIN_MISMATCH');
    await rejectsWithCode(fetchVerified(real.url, REF, { format: 'bundle', lock: { digest } }), 'PIN_MISMATCH');
  });

  it('refuses altered bytes (DIGEST_MISMATCH), signature (SIGNATURE_INVALID), proof or checkpoint (NOT_IN_LOG)', async () => {
    fake.rewrite = (path, response) => {
      if (path.endsWith('/bundle') || !(path.endsWith('/1.2.0') || path.startsWith('/v1/blobs/'))) return response;
      const body = Buffer.from(response.body);
      body[body.indexOf('Stripe')] = 'X'.charCodeAt(0); // still valid JSON, one byte different
      return { ...response, body };
    };
    await rejectsWithCode(fetchVerified(fake.url, REF, { format: 'bundle' }), 'DIGEST_MISMATCH');
    await rejectsWithCode(fetchVerified(fake.url, payments.record.digest, { format: 'bundle' }), 'DIGEST_MISMATCH');

    alterBundle((bundle) => {
      const signature = Buffer.from(bundle.dsseEnvelope.signatures[0].sig, 'base64');
      signature[10] = (signature[10] ?? 0) ^ 1;
      bundle.dsseEnvelope.signatures[0].sig = signature.toString('base64');
    });
    await rejectsWithCode(fetchVerified(fake.url, REF, { format: 'bundle' }), 'SIGNATURE_INVALID');

    alterBundle((bundle) => {
      const proof = bundle.verificationMaterial.tlogEntries[0].inclusionProof;
      proof.hashes[0] = Buffer.alloc(32, 7).toString('base64');
    });
    await rejectsWithCode(fetchVerified(fake.url, REF, { format: 'bundle' }), 'NOT_IN_LOG');

    alterBundle((bundle) => {
      const checkpoint = bundle.verificationMaterial.tlogEntries[0].inclusionProof.checkpoint;
      checkpoint.envelope = checkpoint.envelope.replace(/\n\n— /, '\nextra\n\n— ');
    });
    await rejectsWithCode(fetchVerified(fake.url, payments.record.digest, { format: 'bundle' }), 'NOT_IN_LOG');
  });

  it("refuses another registry's bundle for the same name@version (UNKNOWN_KEY: not signed by this registry's keys)", async () => {
    const foreign = await servedBundle(other, bundlePath(PAYMENTS, '1.2.0'));
    fake.rewrite = (path, response) => (path.endsWith('/bundle') ? { ...response, body: foreign } : response);
    await rejectsWithCode(fetchVerified(fake.url, REF, { format: 'bundle' }), 'UNKNOWN_KEY');
  });

  it('refuses options only the JWS path takes, and an unknown format, before any request (BAD_REQUEST)', async () => {
    const error = await rejectsWithCode(
      fetchVerified(fake.url, REF, { format: 'bundle', yanked: 'refuse', name: PAYMENTS } as never),
      'BAD_REQUEST',
    );
    expect(error.message).toBe("format 'bundle' does not take name, yanked (the JWS path does)");
    const unknown = await rejectsWithCode(fetchVerified(fake.url, REF, { format: 'cosign' } as never), 'BAD_REQUEST');
    expect(unknown.message).toBe(`format "cosign" is neither 'jws' nor 'bundle'`);
    expect(fake.requests).toEqual([]);
  });
});

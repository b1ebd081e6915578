// Signing jobs (src/attest/signing-job.ts): a signature made in libuv's thread pool builds exactly what the same job
// signed on this thread builds: the same JWS bytes (Ed25519 is deterministic, RFC 8032 §5.1.6), a DSSE envelope and
// hashedrekord leaf that verify (ECDSA is randomised), the same inclusion promise; a job that fails rejects.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildBundleEntrySigningJob,
  buildInclusionPromiseSigningJob,
  buildJcsStatementSigningJob,
  buildPublishStatement,
  buildStatementSigningJob,
  createBundleSigningKey,
  createSigningKey,
  encodePae,
  formatHashedRekordBody,
  IN_TOTO_PAYLOAD_TYPE,
  readDsseEnvelope,
  runSigningJob,
  runSigningJobOffThread,
  serializeStatementJcs,
  signInclusionPromise,
  signStatement,
  verifyInclusionPromise,
  verifyP256,
} from '../../src/attest/index.ts';
import { computeLogKeyId } from '../../src/log/index.ts';

const key = createSigningKey();
const bundleKey = createBundleSigningKey();

function statementOf(version: string, storedAt: string) {
  return buildPublishStatement({
    name: 'io.github.acme/payments',
    version,
    digest: `sha256:${'cd'.repeat(32)}`,
    predicate: {
      registry: 'http://registry.test',
      publisher: 'io.github.acme',
      storedAt,
      policy: 'p',
      size: 7,
      previousDigest: null,
    },
  });
}

describe('signing jobs', () => {
  it('a JWS signed off the thread is byte for byte the one signStatement writes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(fc.nat(99), fc.nat(99), fc.nat(99)).map(([a, b, c]) => `${a}.${b}.${c}`),
        fc.date({ min: new Date('2000-01-01'), max: new Date('2099-01-01'), noInvalidDate: true }),
        async (version, at) => {
          const statement = statementOf(version, at.toISOString());
          const expected = signStatement(statement, key);
          expect(await runSigningJobOffThread(buildStatementSigningJob(statement, key))).toEqual(expected);
          expect(
            await runSigningJobOffThread(buildJcsStatementSigningJob(serializeStatementJcs(statement), key)),
          ).toEqual(expected);
          expect(runSigningJob(buildStatementSigningJob(statement, key))).toEqual(expected);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a bundle entry signed off the thread verifies, and its leaf is the body of that signature', async () => {
    const statement = Buffer.from(serializeStatementJcs(statementOf('1.0.0', '2026-12-07T00:00:00.000Z')), 'utf8');
    const { envelope, leaf } = await runSigningJobOffThread(buildBundleEntrySigningJob(statement, bundleKey));
    const read = readDsseEnvelope(envelope);
    expect(read.keyid).toBe(bundleKey.kid);
    expect(Buffer.from(read.payload)).toEqual(statement);
    const pae = encodePae(IN_TOTO_PAYLOAD_TYPE, statement);
    expect(Buffer.from(read.pae)).toEqual(Buffer.from(pae));
    expect(verifyP256(pae, bundleKey.publicKey, read.signature)).toBe(true);
    expect(Buffer.from(leaf)).toEqual(Buffer.from(formatHashedRekordBody(pae, read.signature, bundleKey.publicKey)));
    // Another statement's signature does not verify over this one.
    const other = await runSigningJobOffThread(buildBundleEntrySigningJob(Buffer.from('{}'), bundleKey));
    expect(verifyP256(pae, bundleKey.publicKey, readDsseEnvelope(other.envelope).signature)).toBe(false);
  });

  it('an inclusion promise signed off the thread is the one signInclusionPromise signs', async () => {
    const leaf = new Uint8Array([1, 2, 3]);
    const logId = computeLogKeyId('registry.test/log', key.publicKey);
    const promise = await runSigningJobOffThread(
      buildInclusionPromiseSigningJob(leaf, 1_796_000_000, 41, { privateKey: key.privateKey, logId }),
    );
    expect(Buffer.from(promise)).toEqual(
      Buffer.from(
        signInclusionPromise(leaf, 1_796_000_000, 41, { name: 'registry.test/log', privateKey: key.privateKey }),
      ),
    );
    expect(promise.byteLength).toBe(64);
    expect(verifyInclusionPromise(new Uint8Array(0), promise, key.publicKey)).toBe(false);
  });

  it('rejects when the signature cannot be made or its result cannot be built', async () => {
    const job = buildStatementSigningJob(statementOf('1.0.0', '2026-12-07T00:00:00.000Z'), key);
    // Ed25519 takes no digest name.
    await expect(runSigningJobOffThread({ ...job, algorithm: 'sha256' })).rejects.toThrow();
    await expect(
      runSigningJobOffThread({
        ...job,
        finish: () => {
          throw new Error('cannot build');
        },
      }),
    ).rejects.toThrow('cannot build');
  });
});

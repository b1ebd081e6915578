// verifyFetched chains the stages in the documented order, and src/verify/index.ts is the folder's public face.

import { describe, expect, it } from 'vitest';
import { buildPublishStatement, signStatement } from '../../src/attest/index.ts';
import { computeDigest } from '../../src/core/digest.ts';
import * as verify from '../../src/verify/index.ts';
import {
  verifyFetched,
  type FetchVerifiedOptions,
  type FetchedManifest,
  type InclusionEvidence,
  type ManifestRef,
  type VerifiedCheckpoint,
  type VerifiedManifest,
  type VerifyExpectation,
  type VerifyFetchedInput,
} from '../../src/verify/index.ts';
import { canonicalOf, manifestFile, throwsWithCode } from './helpers.ts';
import {
  LEAF_INDEX,
  NAME,
  VERSION,
  attestation,
  bytes,
  checkpointNote,
  digest,
  jwks,
  logKey,
  predicate,
  servedInclusion,
  signingKey,
} from './stage-fixtures.ts';

function inputs(): VerifyFetchedInput {
  return {
    bytes,
    attestation,
    inclusion: servedInclusion(),
    jwks,
    logKey,
    expected: { name: NAME, version: VERSION, logIndex: LEAF_INDEX },
  };
}

describe('verifyFetched on hand-built evidence', () => {
  it('returns what was proven', () => {
    const result = verifyFetched(inputs());
    expect(result).toMatchObject({
      digest,
      name: NAME,
      version: VERSION,
      logIndex: LEAF_INDEX,
      kid: jwks.keys[0]!.kid,
    });
    expect(result.checkpoint.note).toBe(checkpointNote);
    expect(result.bytes).toBe(bytes);
  });

  it('runs the stages in order: pin, attestation, subject, log evidence', () => {
    const noKeys = { ...inputs(), jwks: [], inclusion: undefined };
    // The pin is checked before the keys, the keys before the log evidence.
    throwsWithCode(
      () => verifyFetched({ ...noKeys, expected: { digest: `sha256:${'0'.repeat(64)}` } }),
      'PIN_MISMATCH',
    );
    throwsWithCode(() => verifyFetched(noKeys), 'UNKNOWN_KEY');
    // The attestation's subject before the log evidence.
    throwsWithCode(
      () => verifyFetched({ ...inputs(), inclusion: undefined, expected: { name: NAME, version: '9.9.9' } }),
      'SUBJECT_MISMATCH',
    );
    // The bytes' own name@version before the log evidence: a genuine signature over other bytes under NAME@VERSION.
    const otherBytes = canonicalOf(manifestFile('contacts-refs'));
    const statement = buildPublishStatement({
      name: NAME,
      version: VERSION,
      digest: computeDigest(otherBytes),
      predicate,
    });
    const misdeclared = new Uint8Array(signStatement(statement, signingKey));
    const declared = throwsWithCode(
      () => verifyFetched({ ...inputs(), bytes: otherBytes, attestation: misdeclared, inclusion: undefined }),
      'SUBJECT_MISMATCH',
    );
    expect(declared.message).toMatch(/^the bytes declare io\.github\.acme\/contacts@/);
    throwsWithCode(() => verifyFetched({ ...inputs(), inclusion: undefined }), 'NOT_IN_LOG');
    throwsWithCode(
      () => verifyFetched({ ...inputs(), expected: { ...inputs().expected, logIndex: LEAF_INDEX + 1 } }),
      'NOT_IN_LOG',
    );
  });

  it('bytes and attestation must be Uint8Arrays (BAD_REQUEST)', () => {
    throwsWithCode(() => verifyFetched({ ...inputs(), bytes: 'x' as never }), 'BAD_REQUEST');
    throwsWithCode(() => verifyFetched({ ...inputs(), attestation: [] as never }), 'BAD_REQUEST');
  });
});

describe('src/verify/index.ts', () => {
  it('exports the types src/host re-exports (a compile-time check)', () => {
    const fetched: Pick<FetchedManifest, 'registry'> & Partial<VerifiedManifest> = { registry: 'r' };
    const options: FetchVerifiedOptions = { name: NAME };
    const ref: ManifestRef = { kind: 'digest', digest };
    const expectation: VerifyExpectation = { name: NAME };
    const evidence: InclusionEvidence = servedInclusion();
    const checkpoint: Partial<VerifiedCheckpoint> = { note: checkpointNote };
    expect([fetched, options, ref, expectation, evidence, checkpoint]).toHaveLength(6);
  });

  it('exports what src/host imports', () => {
    expect(Object.keys(verify).sort()).toEqual([
      'DEFAULT_MAX_RESPONSE_BYTES',
      'DEFAULT_TIMEOUT_MS',
      'createVerifier',
      'fetchVerified',
      'fetchVerifiedBundle',
      'parseManifestRef',
      'parseWitnessPolicy',
      'verifyBundle',
      'verifyFetched',
    ]);
  });
});

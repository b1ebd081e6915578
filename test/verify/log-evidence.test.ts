// The log-evidence stage: every failure of the inclusion evidence is NOT_IN_LOG, naming the part that failed.

import { describe, expect, it } from 'vitest';
import { encodeBase64 } from '../../src/core/bytes.ts';
import {
  formatTlogProof,
  formatVerifierString,
  parseNote,
  parseVerifierString,
  signNote,
} from '../../src/log/index.ts';
import { verifyLogEvidence } from '../../src/verify/log-evidence.ts';
import { throwsWithCode } from './helpers.ts';
import {
  LEAF_INDEX,
  ORIGIN,
  TREE_SIZE,
  attestation,
  checkpointNote,
  logKey,
  proofHashes,
  rootHash,
  servedInclusion,
} from './stage-fixtures.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

describe('verifyLogEvidence', () => {
  it('proves the leaf: the served object, 32-byte arrays, a tlog-proof text, or a parsed verifier', () => {
    const proven = verifyLogEvidence(attestation, servedInclusion(), logKey, LEAF_INDEX);
    expect(proven).toEqual({
      index: LEAF_INDEX,
      checkpoint: { origin: ORIGIN, size: TREE_SIZE, rootHash: encodeBase64(rootHash), note: checkpointNote },
    });
    const arrays = { ...servedInclusion(), hashes: proofHashes };
    expect(verifyLogEvidence(attestation, arrays, parseVerifierString(logKey), undefined).index).toBe(LEAF_INDEX);
    const text = formatTlogProof({ index: LEAF_INDEX, proof: proofHashes, checkpoint: checkpointNote });
    expect(verifyLogEvidence(attestation, text, ` ${logKey}\n`, LEAF_INDEX).checkpoint).toEqual(proven.checkpoint);
  });

  it('no evidence is NOT_IN_LOG', () => {
    const error = throwsWithCode(() => verifyLogEvidence(attestation, undefined, logKey, undefined), 'NOT_IN_LOG');
    expect(error.message).toBe('there is no inclusion proof for this attestation');
  });

  it('a proof for another index than the claimed one is NOT_IN_LOG (malformed), before the checkpoint is read', () => {
    const error = throwsWithCode(
      () => verifyLogEvidence(attestation, servedInclusion(), logKey, LEAF_INDEX + 1),
      'NOT_IN_LOG',
    );
    expect(error.message).toMatch(/the inclusion proof is malformed \(it is for leaf 1, not the claimed log index 2\)/);
    // A proof whose own index is another leaf's does not verify either.
    const moved = { ...servedInclusion(), index: LEAF_INDEX + 1 };
    expect(
      throwsWithCode(() => verifyLogEvidence(attestation, moved, logKey, undefined), 'NOT_IN_LOG').message,
    ).toMatch(/the inclusion proof does not verify/);
  });

  it('a hash that is not strict base64 is NOT_IN_LOG (malformed)', () => {
    const hash = encodeBase64(proofHashes[0]!);
    for (const bad of [hash.replace(/=$/, ''), ` ${hash}`, `${'-'.repeat(43)}=`, 7]) {
      const inclusion = { ...servedInclusion(), hashes: [bad as string, ...servedInclusion().hashes.slice(1)] };
      const error = throwsWithCode(() => verifyLogEvidence(attestation, inclusion, logKey, undefined), 'NOT_IN_LOG');
      expect(error.message).toMatch(/the inclusion proof is malformed \(proof hash 0 is not base64\)/);
    }
    const shape = { index: LEAF_INDEX, hashes: 'x', checkpoint: checkpointNote } as never;
    expect(
      throwsWithCode(() => verifyLogEvidence(attestation, shape, logKey, undefined), 'NOT_IN_LOG').message,
    ).toMatch(/expected \{index, hashes, checkpoint\}/);
  });

  it('a checkpoint not signed by the log key (another key under the same origin) is NOT_IN_LOG', () => {
    const { privateKey, publicKey } = generateEd25519KeyPair();
    const forged = signNote(parseNote(checkpointNote).body, { name: ORIGIN, privateKey });
    const error = throwsWithCode(
      () => verifyLogEvidence(attestation, { ...servedInclusion(), checkpoint: forged }, logKey, undefined),
      'NOT_IN_LOG',
    );
    expect(error.message).toMatch(/not signed by the log key/);
    // The genuine checkpoint against a pinned key of another log.
    const otherLog = formatVerifierString('other.test/log', publicKey);
    throwsWithCode(() => verifyLogEvidence(attestation, servedInclusion(), otherLog, undefined), 'NOT_IN_LOG');
  });

  it('a size other than the checkpoint size, or other leaf bytes, is NOT_IN_LOG (does not verify)', () => {
    const resized = { ...servedInclusion(), size: TREE_SIZE + 1 };
    expect(
      throwsWithCode(() => verifyLogEvidence(attestation, resized, logKey, undefined), 'NOT_IN_LOG').message,
    ).toMatch(/does not verify \(it is for tree size 4, the checkpoint for 3\)/);
    const other = Buffer.concat([Buffer.from(attestation), Buffer.from(' ')]);
    throwsWithCode(() => verifyLogEvidence(other, servedInclusion(), logKey, undefined), 'NOT_IN_LOG');
  });

  it('a malformed log key is the caller error BAD_REQUEST, even with no evidence', () => {
    throwsWithCode(() => verifyLogEvidence(attestation, undefined, 'not-a-verifier', undefined), 'BAD_REQUEST');
  });
});

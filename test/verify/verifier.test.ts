// createVerifier keeps what it proved (checkpoint notes, selected keys, proven tree nodes) and still refuses every
// tampered input: a forged second checkpoint, a fork, an inconsistent newer checkpoint, other evidence under a
// cached checkpoint.

import { describe, expect, it } from 'vitest';
import { buildJwks, buildPublishStatement, signStatement } from '../../src/attest/index.ts';
import { computeDigest } from '../../src/core/digest.ts';
import { formatCheckpoint, parseVerifierString, signNote, type NoteVerifier } from '../../src/log/index.ts';
import { createVerifier, verifyFetched, type InclusionEvidence } from '../../src/verify/index.ts';
import { throwsWithCode } from './helpers.ts';
import { NAME, ORIGIN, createSigningKey, jwks, now, predicate } from './stage-fixtures.ts';
import { buildTestLog } from './verifier-fixtures.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

const log = buildTestLog(6);
const SIZE = log.store.size;

type ServedInclusion = Exclude<InclusionEvidence, string>;
const served = (inclusion: InclusionEvidence | undefined): ServedInclusion => inclusion as ServedInclusion;

/** A note verifier that counts how often its public key is read (once per signature check). */
function countingVerifier(): { verifier: NoteVerifier; reads: () => number } {
  const parsed = parseVerifierString(log.logKey);
  let reads = 0;
  const verifier = {
    name: parsed.name,
    keyId: parsed.keyId,
    get publicKey() {
      reads++;
      return parsed.publicKey;
    },
  };
  return { verifier, reads: () => reads };
}

describe('createVerifier: one checkpoint for many manifests', () => {
  it('verifies every manifest under one checkpoint, checking its signature once', () => {
    const { verifier: logKey, reads } = countingVerifier();
    const verifier = createVerifier({ jwks, logKey });
    for (let i = 0; i < log.versions.length; i++) {
      const { jwks: _keys, logKey: _log, ...input } = log.input(i);
      const result = verifier.verifyFetched(input);
      expect(result).toMatchObject({ name: NAME, version: log.versions[i]!.version, logIndex: log.versions[i]!.index });
      expect(result).toEqual(verifyFetched(log.input(i)));
    }
    expect(reads()).toBe(1);
    expect(verifier.latestCheckpoint()).toMatchObject({ origin: ORIGIN, size: SIZE, note: log.checkpoint(SIZE) });
  });

  it('refuses a forged second checkpoint: the same text under another signature is verified, not cached', () => {
    const verifier = createVerifier({ jwks, logKey: log.logKey });
    verifier.verifyFetched(log.input(0));
    const forger = generateEd25519KeyPair().privateKey;
    const note = log.checkpoint(SIZE);
    const body = note.slice(0, note.indexOf('\n\n') + 1);
    const forged = signNote(body, { name: ORIGIN, privateKey: forger });
    const input = log.input(1);
    const error = throwsWithCode(
      () => verifier.verifyFetched({ ...input, inclusion: { ...served(input.inclusion), checkpoint: forged } }),
      'NOT_IN_LOG',
    );
    expect(error.message).toContain('not signed by the log key');
  });

  it('refuses a fork: a second root signed for the same tree size', () => {
    const verifier = createVerifier({ jwks, logKey: log.logKey });
    verifier.verifyFetched(log.input(0));
    const other = buildTestLog(6, 'fork'); // another tree, same size, signed below with the same log key
    const forkNote = log.sign(
      formatCheckpoint({ origin: ORIGIN, size: SIZE, rootHash: parseRoot(other.checkpoint(SIZE)) }),
    );
    const input = other.input(1);
    const error = throwsWithCode(
      () =>
        verifier.verifyFetched({
          ...input,
          logKey: log.logKey,
          inclusion: { ...served(input.inclusion), checkpoint: forkNote },
        }),
      'LOG_INCONSISTENT',
    );
    expect(error.message).toContain('forked');
  });

  it('refuses a different attestation, or other proof hashes, under the cached checkpoint', () => {
    const verifier = createVerifier({ jwks, logKey: log.logKey });
    verifier.verifyFetched(log.input(0));
    verifier.verifyFetched(log.input(1));
    // Validly signed, but never logged: its proof cannot lead to the cached root.
    const digest = computeDigest(log.versions[2]!.bytes);
    const statement = buildPublishStatement({ name: NAME, version: log.versions[2]!.version, digest, predicate });
    const unlogged = new Uint8Array(signStatement({ ...statement }, createSigningKeyFor()));
    const input = log.input(2);
    throwsWithCode(() => verifier.verifyFetched({ ...input, attestation: unlogged, jwks: otherJwks }), 'NOT_IN_LOG');
    // A proof that joins the proven nodes and then leaves them.
    const hashes = [...served(input.inclusion).hashes];
    hashes[hashes.length - 1] = Buffer.alloc(32, 7).toString('base64');
    throwsWithCode(
      () => verifier.verifyFetched({ ...input, inclusion: { ...served(input.inclusion), hashes } }),
      'NOT_IN_LOG',
    );
    // A tampered attestation signature is still the attestation's failure.
    const tampered = Uint8Array.from(input.attestation);
    tampered[tampered.length - 5] = tampered[tampered.length - 5] === 0x41 ? 0x42 : 0x41;
    throwsWithCode(() => verifier.verifyFetched({ ...input, attestation: tampered }), 'SIGNATURE_INVALID');
    expect(verifier.verifyFetched(input).logIndex).toBe(log.versions[2]!.index);
  });
});

describe('createVerifier: a newer checkpoint', () => {
  const early = log.versions[2]!.index + 1;

  it('is admitted with a consistency proof from the proven one, and becomes the latest', () => {
    const verifier = createVerifier({ jwks, logKey: log.logKey });
    verifier.verifyFetched(log.input(0, early));
    const input = log.input(4);
    expect(verifier.neededConsistency(input)).toEqual({ from: early, to: SIZE });
    throwsWithCode(() => verifier.verifyFetched(input), 'NOT_IN_LOG'); // no proof given
    const result = verifier.verifyFetched({ ...input, consistency: log.consistency(early, SIZE) });
    expect(result.checkpoint.size).toBe(SIZE);
    expect(verifier.latestCheckpoint()?.size).toBe(SIZE);
    // An older checkpoint is related the other way round.
    const older = log.input(1, early - 2);
    expect(verifier.neededConsistency(older)).toEqual({ from: early - 2, to: SIZE });
    expect(verifier.verifyFetched({ ...older, consistency: log.consistency(early - 2, SIZE) }).logIndex).toBe(
      log.versions[1]!.index,
    );
  });

  it('refuses an inconsistent newer checkpoint, even one the log key signed', () => {
    const verifier = createVerifier({ jwks, logKey: log.logKey });
    verifier.verifyFetched(log.input(0, early));
    const other = buildTestLog(6, 'fork');
    const forkNote = log.sign(
      formatCheckpoint({ origin: ORIGIN, size: SIZE, rootHash: parseRoot(other.checkpoint(SIZE)) }),
    );
    const input = other.input(4);
    const error = throwsWithCode(
      () =>
        verifier.verifyFetched({
          ...input,
          logKey: log.logKey,
          inclusion: { ...served(input.inclusion), checkpoint: forkNote },
          consistency: log.consistency(early, SIZE),
        }),
      'NOT_IN_LOG',
    );
    expect(error.message).toContain('consistency proof');
    expect(verifier.latestCheckpoint()?.size).toBe(early);
  });
});

describe('createVerifier: keys selected once', () => {
  it('still refuses an attestation by a key the pinned JWKS does not hold', () => {
    const verifier = createVerifier({ jwks, logKey: log.logKey });
    verifier.verifyFetched(log.input(0));
    const input = log.input(1);
    const digest = computeDigest(input.bytes);
    const statement = buildPublishStatement({ name: NAME, version: log.versions[1]!.version, digest, predicate });
    const { jwks: _keys, ...rest } = input;
    throwsWithCode(
      () => verifier.verifyFetched({ ...rest, attestation: new Uint8Array(signStatement(statement, otherKey)) }),
      'UNKNOWN_KEY',
    );
  });
});

const otherKey = createSigningKey();
const otherJwks = buildJwks([
  { kid: otherKey.kid, publicJwk: otherKey.publicJwk, notBefore: now - 60, notAfter: null },
]);

function createSigningKeyFor(): typeof otherKey {
  return otherKey;
}

function parseRoot(note: string): Uint8Array {
  const rootLine = note.split('\n')[2]!;
  return Uint8Array.from(Buffer.from(rootLine, 'base64'));
}

// What a verification costs, counted (issue 14 §4): every Ed25519 verify node:crypto performs. A first, uncached
// verification does two (the attestation's JWS, RFC 7515 §5.2, and the checkpoint's signed note, C2SP signed-note);
// a verifier that keeps what it proved does one per further manifest under the same checkpoint, and one more for
// each new checkpoint it admits. A 2-of-3 witness policy (issue 25) costs at most two more, once per checkpoint.

import { afterEach, describe, expect, it, vi } from 'vitest';
import * as crypto from 'node:crypto';
import { createVerifier, verifyFetched } from '../../src/verify/index.ts';
import { jwks } from './stage-fixtures.ts';
import { buildTestLog } from './verifier-fixtures.ts';
import { cosignedInput, twoOfThreePolicy } from './witness-quorum-fixtures.ts';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, verify: vi.fn(actual.verify) };
});

const verifyCalls = vi.mocked(crypto.verify);
const log = buildTestLog(6);
const SIZE = log.store.size;

/** Ed25519 verifies (crypto.verify with a null algorithm) since the last call. */
function takeEd25519Verifies(): number {
  const count = verifyCalls.mock.calls.filter((call) => call[0] === null || call[0] === undefined).length;
  verifyCalls.mockClear();
  return count;
}

afterEach(() => {
  verifyCalls.mockClear();
});

describe('signature verifies per verification', () => {
  it('counts the real thing: a tampered signature is caught by the counted verify', () => {
    takeEd25519Verifies();
    const input = log.input(0);
    const attestation = Buffer.from(input.attestation).toString('utf8');
    const at = attestation.indexOf('"signature":"') + 14;
    const flipped = `${attestation.slice(0, at)}${attestation[at] === 'A' ? 'B' : 'A'}${attestation.slice(at + 1)}`;
    expect(() => verifyFetched({ ...input, attestation: Buffer.from(flipped) })).toThrow();
    expect(takeEd25519Verifies()).toBe(1);
  });

  it('a first, uncached verification does exactly two Ed25519 verifies (attestation and checkpoint)', () => {
    takeEd25519Verifies();
    createVerifier({ jwks, logKey: log.logKey }).verifyFetched(log.input(0));
    expect(takeEd25519Verifies()).toBe(2);
    // verifyFetched alone (no verifier) does the same two.
    verifyFetched(log.input(1));
    expect(takeEd25519Verifies()).toBe(2);
  });

  it('N manifests under one checkpoint cost N + 1 verifies with one verifier', () => {
    const verifier = createVerifier({ jwks, logKey: log.logKey });
    takeEd25519Verifies();
    for (let i = 0; i < log.versions.length; i++) verifier.verifyFetched(log.input(i));
    expect(takeEd25519Verifies()).toBe(log.versions.length + 1);
    // Again, all of them: the checkpoint is proven already, one verify each.
    for (let i = 0; i < log.versions.length; i++) verifier.verifyFetched(log.input(i));
    expect(takeEd25519Verifies()).toBe(log.versions.length);
  });

  it('a newer checkpoint is verified once when it is admitted (with its consistency proof)', () => {
    const verifier = createVerifier({ jwks, logKey: log.logKey });
    const older = SIZE - 2;
    const position = log.versions.findIndex((version) => version.index < older);
    verifier.verifyFetched(log.input(position, older));
    takeEd25519Verifies();
    const consistency = log.consistency(older, SIZE);
    verifier.verifyFetched({ ...log.input(position, SIZE), consistency });
    verifier.verifyFetched(log.input(position + 1, SIZE));
    expect(takeEd25519Verifies()).toBe(3);
  });

  it('a 2-of-3 witness policy costs at most two more verifies, once per checkpoint, even with all three cosignatures', () => {
    const witnessPolicy = twoOfThreePolicy(log.logKey);
    takeEd25519Verifies();
    verifyFetched({ ...cosignedInput(log, 0, [0, 1, 2]), witnessPolicy, nowSeconds: 2000 });
    expect(takeEd25519Verifies()).toBe(4);
    const verifier = createVerifier({ jwks, logKey: log.logKey, witnessPolicy });
    takeEd25519Verifies();
    for (let i = 0; i < log.versions.length; i++)
      verifier.verifyFetched({ ...cosignedInput(log, i, [0, 1, 2]), nowSeconds: 2000 });
    expect(takeEd25519Verifies()).toBe(log.versions.length + 1 + 2);
  });
});

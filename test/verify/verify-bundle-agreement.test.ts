// verifyBundle and @sigstore/verify agree: both accept the genuine bundle and both refuse every bundle with one bit
// flipped in any signed or proven part (envelope payload and signature, logged body, proof hashes, checkpoint root and
// signature, log id, signed entry timestamp), or a moved index or time. Mutations are drawn by fast-check and run in
// one child process on Node ≥ 22.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isToolsealError } from '../../src/core/errors.ts';
import { verifyBundle } from '../../src/verify/verify-bundle.ts';
import {
  buildLoggedBundle,
  copyJson,
  type LoggedBundle,
  manifestBytes,
  runSigstoreVerifyAll,
} from '../attest/sigstore-fixture.ts';

type Bundle = LoggedBundle['bundle'];
type Entry = Bundle['verificationMaterial']['tlogEntries'][0];

const genuine = buildLoggedBundle();

function flip(text: string, at: number, bit: number): string {
  const bytes = Buffer.from(text, 'base64');
  const index = at % bytes.length;
  bytes[index] = (bytes[index] as number) ^ (1 << bit);
  return bytes.toString('base64');
}

/** Flip one bit of the checkpoint's root hash (line 3) or of its signature bytes (after the key name). */
function flipCheckpoint(envelope: string, part: 'root' | 'signature', at: number, bit: number): string {
  const lines = envelope.split('\n');
  if (part === 'root') {
    lines[2] = flip(lines[2] as string, at, bit);
  } else {
    const line = lines[4] as string;
    const space = line.lastIndexOf(' ');
    lines[4] = `${line.slice(0, space + 1)}${flip(line.slice(space + 1), at, bit)}`;
  }
  return lines.join('\n');
}

const mutations: Record<string, (bundle: Bundle, entry: Entry, at: number, bit: number) => void> = {
  payload: (bundle, _entry, at, bit) => {
    bundle.dsseEnvelope.payload = flip(bundle.dsseEnvelope.payload, at, bit);
  },
  signature: (bundle, _entry, at, bit) => {
    bundle.dsseEnvelope.signatures[0].sig = flip(bundle.dsseEnvelope.signatures[0].sig, at, bit);
  },
  body: (_bundle, entry, at, bit) => {
    entry.canonicalizedBody = flip(entry.canonicalizedBody, at, bit);
  },
  proofHash: (_bundle, entry, at, bit) => {
    const k = at % entry.inclusionProof.hashes.length;
    entry.inclusionProof.hashes[k] = flip(entry.inclusionProof.hashes[k] as string, at >> 3, bit);
  },
  checkpointRoot: (_bundle, entry, at, bit) => {
    entry.inclusionProof.checkpoint.envelope = flipCheckpoint(
      entry.inclusionProof.checkpoint.envelope,
      'root',
      at,
      bit,
    );
  },
  checkpointSignature: (_bundle, entry, at, bit) => {
    const { checkpoint } = entry.inclusionProof;
    checkpoint.envelope = flipCheckpoint(checkpoint.envelope, 'signature', at, bit);
  },
  logId: (_bundle, entry, at, bit) => {
    entry.logId.keyId = flip(entry.logId.keyId, at, bit);
  },
  promise: (_bundle, entry, at, bit) => {
    entry.inclusionPromise.signedEntryTimestamp = flip(entry.inclusionPromise.signedEntryTimestamp, at, bit);
  },
  time: (_bundle, entry, at) => {
    entry.integratedTime = String(Number(entry.integratedTime) - 1 - (at % 600));
  },
  index: (_bundle, entry, at) => {
    const other = (genuine.logIndex + 1 + (at % 11)) % 12;
    entry.logIndex = String(other);
    entry.inclusionProof.logIndex = String(other);
  },
};

function ourVerdict(bundle: Bundle): string {
  try {
    verifyBundle({
      bytes: manifestBytes,
      bundle: Buffer.from(JSON.stringify(bundle)),
      bundleKeys: genuine.bundleJwks,
      logKey: genuine.logVerifier,
    });
    return 'ACCEPTED';
  } catch (error) {
    if (isToolsealError(error)) return error.code;
    throw error;
  }
}

describe('verifyBundle and @sigstore/verify agree', () => {
  it('accept the genuine bundle and refuse every one-bit change of what is signed or proven', () => {
    const drawn = fc.sample(
      fc.record({
        target: fc.constantFrom(...Object.keys(mutations)),
        at: fc.nat({ max: 4096 }),
        bit: fc.nat({ max: 7 }),
      }),
      { numRuns: 60, seed: 26 },
    );
    const bundles = drawn.map(({ target, at, bit }) => {
      const bundle = copyJson(genuine.bundle);
      (mutations[target] as (typeof mutations)['payload'])(bundle, bundle.verificationMaterial.tlogEntries[0], at, bit);
      return bundle;
    });
    const theirs = runSigstoreVerifyAll([genuine.bundle, ...bundles].map((bundle) => ({ ...genuine, bundle })));
    expect(theirs[0]).toEqual({ ok: true });
    expect(ourVerdict(genuine.bundle)).toBe('ACCEPTED');
    bundles.forEach((bundle, i) => {
      const what = JSON.stringify(drawn[i]);
      expect(theirs[i + 1]?.ok, what).toBe(false);
      expect(ourVerdict(bundle), what).not.toBe('ACCEPTED');
    });
  });
});

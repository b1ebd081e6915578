// A hand-built log for the verifier tests: several versions of the payments manifest, each attested and logged,
// checkpoints signed at any size, consistency proofs between them, and a fork (another tree signed by the same key).

import type { KeyObject } from 'node:crypto';
import { buildPublishStatement, signStatement } from '../../src/attest/index.ts';
import { encodeBase64 } from '../../src/core/bytes.ts';
import { computeDigest } from '../../src/core/digest.ts';
import {
  computeRootHash,
  createMemoryNodeStore,
  formatCheckpoint,
  formatVerifierString,
  generateConsistencyProof,
  generateInclusionProof,
  hashLeaf,
  signNote,
  type MemoryNodeStore,
} from '../../src/log/index.ts';
import type { VerifyFetchedInput } from '../../src/verify/index.ts';
import { canonicalOf, manifestVariant } from './helpers.ts';
import { NAME, ORIGIN, jwks, predicate, signingKey } from './stage-fixtures.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

export interface LoggedVersion {
  version: string;
  bytes: Uint8Array;
  attestation: Uint8Array;
  index: number;
}

export interface TestLog {
  logKey: string;
  versions: LoggedVersion[];
  store: MemoryNodeStore;
  /** The signed checkpoint of the first `size` leaves. */
  checkpoint(size: number): string;
  /** The consistency proof from `from` to `to` leaves. */
  consistency(from: number, to: number): { from: number; to: number; hashes: Uint8Array[] };
  /** The evidence for version `position` under the checkpoint of `size` leaves. */
  input(position: number, size?: number): VerifyFetchedInput;
  /** Sign any note body with the log key. */
  sign(body: string): string;
}

/** `count` versions (1.2.0, 1.2.0-r1, …) logged after a filler leaf each (another `filler`: another tree). */
export function buildTestLog(count: number, filler = 'filler', logPrivateKey?: KeyObject): TestLog {
  const privateKey = logPrivateKey ?? generateEd25519KeyPair().privateKey;
  const store = createMemoryNodeStore();
  const versions: LoggedVersion[] = [];
  for (let i = 0; i < count; i++) {
    const version = i === 0 ? '1.2.0' : `1.2.0-r${i}`;
    const bytes = canonicalOf(manifestVariant('payments', { version }));
    const digest = computeDigest(bytes);
    const attestation = new Uint8Array(
      signStatement(buildPublishStatement({ name: NAME, version, digest, predicate }), signingKey),
    );
    store.append(hashLeaf(Buffer.from(`${filler} ${i}`)));
    versions.push({ version, bytes, attestation, index: store.append(hashLeaf(attestation)) });
  }
  const sign = (body: string): string => signNote(body, { name: ORIGIN, privateKey });
  const checkpoint = (size: number): string =>
    sign(formatCheckpoint({ origin: ORIGIN, size, rootHash: computeRootHash(store, size) }));
  return {
    logKey: formatVerifierString(ORIGIN, privateKey),
    versions,
    store,
    checkpoint,
    consistency: (from, to) => ({ from, to, hashes: generateConsistencyProof(store, from, to) }),
    sign,
    input: (position, size = store.size) => {
      const logged = versions[position]!;
      return {
        bytes: logged.bytes,
        attestation: logged.attestation,
        inclusion: {
          index: logged.index,
          size,
          hashes: generateInclusionProof(store, logged.index, size).map(encodeBase64),
          checkpoint: checkpoint(size),
        },
        jwks,
        logKey: formatVerifierString(ORIGIN, privateKey),
        expected: { name: NAME, version: logged.version, logIndex: logged.index },
      };
    },
  };
}

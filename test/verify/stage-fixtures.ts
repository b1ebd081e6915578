// Evidence built by hand for the stage tests: one manifest, its attestation, and a 3-leaf log holding it at index 1.

import {
  buildJwks,
  buildPublishStatement,
  signStatement,
  type Jwks,
  type PublishPredicate,
  createSigningKey,
} from '../../src/attest/index.ts';
import { encodeBase64 } from '../../src/core/bytes.ts';
import { computeDigest } from '../../src/core/digest.ts';
import {
  computeRootHash,
  createMemoryNodeStore,
  formatCheckpoint,
  formatVerifierString,
  generateInclusionProof,
  hashLeaf,
  signNote,
} from '../../src/log/index.ts';
import { canonicalOf, manifestFile } from './helpers.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

export const NAME = 'io.github.acme/payments';
export const VERSION = '1.2.0';
export const ORIGIN = 'registry.test/log';

export { createSigningKey };

export const now = Math.floor(Date.now() / 1000);
export const signingKey = createSigningKey();
export const jwks: Jwks = buildJwks([
  { kid: signingKey.kid, publicJwk: signingKey.publicJwk, notBefore: now - 60, notAfter: null },
]);
export const bytes = canonicalOf(manifestFile('payments'));
export const digest = computeDigest(bytes);
export const predicate: PublishPredicate = {
  registry: 'http://registry.test',
  publisher: 'io.github.acme',
  storedAt: new Date(now * 1000).toISOString(),
  policy: 'toolseal-pipeline/v1',
  size: bytes.byteLength,
  previousDigest: null,
};
export const attestation = new Uint8Array(
  signStatement(buildPublishStatement({ name: NAME, version: VERSION, digest, predicate }), signingKey),
);

const logKeys = generateEd25519KeyPair();
export const logKey = formatVerifierString(ORIGIN, logKeys.publicKey);
export const LEAF_INDEX = 1;
export const TREE_SIZE = 3;

const store = createMemoryNodeStore();
for (const leaf of [Buffer.from('first'), attestation, Buffer.from('last')]) store.append(hashLeaf(leaf));
export const rootHash = computeRootHash(store, TREE_SIZE);
export const proofHashes = generateInclusionProof(store, LEAF_INDEX, TREE_SIZE);
export const checkpointNote = signNote(formatCheckpoint({ origin: ORIGIN, size: TREE_SIZE, rootHash }), {
  name: ORIGIN,
  privateKey: logKeys.privateKey,
});

/** The inclusion proof as the registry serves it (base64 hashes). */
export function servedInclusion(): { index: number; size: number; hashes: string[]; checkpoint: string } {
  return { index: LEAF_INDEX, size: TREE_SIZE, hashes: proofHashes.map(encodeBase64), checkpoint: checkpointNote };
}

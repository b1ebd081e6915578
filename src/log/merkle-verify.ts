// RFC 9162 §2.1.3.2 and §2.1.4.2: verifying inclusion and consistency proofs (what hosts and auditors run; no store).
// Failures throw ToolsealError('PROOF_INVALID').

import { equalBytes } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { HASH_SIZE, halve, hashChildren, isCount, isOdd, isPowerOfTwo } from './merkle.ts';

function fail(message: string): never {
  throw new ToolsealError('PROOF_INVALID', message);
}

function requireProofHashes(proof: readonly Uint8Array[]): void {
  if (!Array.isArray(proof)) fail('proof must be a list of hashes');
  proof.forEach((element, i) => {
    if (!(element instanceof Uint8Array) || element.byteLength !== HASH_SIZE) {
      fail(`proof element ${i} is not a ${HASH_SIZE}-byte hash`);
    }
  });
}

/**
 * RFC 9162 §2.1.3.2: verify that `leafHash` is leaf `index` of the tree of size `treeSize` whose
 * root is `rootHash`. Throws ToolsealError('PROOF_INVALID') on any failure: index >= size, sizes
 * that are not safe integers, hashes of the wrong length, a proof of the wrong length, a wrong root.
 */
export function verifyInclusionProof(
  leafHash: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  rootHash: Uint8Array,
): void {
  if (!isCount(index) || !isCount(treeSize)) fail('index and tree size must be non-negative safe integers');
  // Step 1: leaf_index < tree_size.
  if (index >= treeSize) fail(`leaf index ${index} is not in a tree of size ${treeSize}`);
  if (!(leafHash instanceof Uint8Array) || leafHash.byteLength !== HASH_SIZE)
    fail(`leaf hash is not ${HASH_SIZE} bytes`);
  if (!(rootHash instanceof Uint8Array) || rootHash.byteLength !== HASH_SIZE)
    fail(`root hash is not ${HASH_SIZE} bytes`);
  requireProofHashes(proof);
  // Steps 2-4.
  let fn = index;
  let sn = treeSize - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) fail('inclusion proof is too long');
    if (isOdd(fn) || fn === sn) {
      r = hashChildren(p, r);
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = halve(fn);
          sn = halve(sn);
        }
      }
    } else {
      r = hashChildren(r, p);
    }
    fn = halve(fn);
    sn = halve(sn);
  }
  // Step 5.
  if (sn !== 0) fail('inclusion proof is too short');
  if (!equalBytes(r, rootHash)) fail('inclusion proof does not lead to the root hash');
}

/**
 * RFC 9162 §2.1.4.2: verify that the tree of size `toSize` (root `toRoot`) extends the tree of
 * size `fromSize` (root `fromRoot`). Throws ToolsealError('PROOF_INVALID') on any failure.
 *
 * Edge cases, as the transparency-dev/merkle test vectors pin them:
 *  - fromSize > toSize fails;
 *  - fromSize = 0 always fails (a consistency check from the empty tree proves nothing; a caller
 *    that starts from an empty log should skip the check, as assertCheckpointConsistent does);
 *  - fromSize = toSize > 0 passes only with an empty proof and byte-identical roots;
 *  - otherwise (0 < m < n, the RFC's domain) the proof must be non-empty and 32-byte hashes.
 */
export function verifyConsistencyProof(
  fromSize: number,
  toSize: number,
  fromRoot: Uint8Array,
  toRoot: Uint8Array,
  proof: readonly Uint8Array[],
): void {
  if (!isCount(fromSize) || !isCount(toSize)) fail('tree sizes must be non-negative safe integers');
  if (!(fromRoot instanceof Uint8Array) || !(toRoot instanceof Uint8Array)) fail('roots must be byte arrays');
  if (!Array.isArray(proof)) fail('proof must be a list of hashes');
  if (fromSize > toSize) fail(`tree size went backwards from ${fromSize} to ${toSize}`);
  if (fromSize === 0) fail('a consistency proof from the empty tree proves nothing');
  if (fromSize === toSize) {
    if (proof.length !== 0) fail('trees of equal size need an empty consistency proof');
    if (!equalBytes(fromRoot, toRoot)) fail(`two different roots for tree size ${fromSize}`);
    return;
  }
  // Step 1.
  if (proof.length === 0) fail('consistency proof is empty');
  if (fromRoot.byteLength !== HASH_SIZE || toRoot.byteLength !== HASH_SIZE)
    fail(`root hashes must be ${HASH_SIZE} bytes`);
  requireProofHashes(proof);
  // Step 2: if first is an exact power of 2, prepend first_hash.
  const path = isPowerOfTwo(fromSize) ? [fromRoot, ...proof] : [...proof];
  // Steps 3-4.
  let fn = fromSize - 1;
  let sn = toSize - 1;
  while (isOdd(fn)) {
    fn = halve(fn);
    sn = halve(sn);
  }
  // Step 5.
  const [first, ...rest] = path as [Uint8Array, ...Uint8Array[]];
  let fr = first;
  let sr = first;
  // Step 6.
  for (const c of rest) {
    if (sn === 0) fail('consistency proof is too long');
    if (isOdd(fn) || fn === sn) {
      fr = hashChildren(c, fr);
      sr = hashChildren(c, sr);
      if (!isOdd(fn)) {
        while (!isOdd(fn) && fn !== 0) {
          fn = halve(fn);
          sn = halve(sn);
        }
      }
    } else {
      sr = hashChildren(sr, c);
    }
    fn = halve(fn);
    sn = halve(sn);
  }
  // Step 7.
  if (sn !== 0) fail('consistency proof is too short');
  if (!equalBytes(fr, fromRoot)) fail('consistency proof does not lead to the old root');
  if (!equalBytes(sr, toRoot)) fail('consistency proof does not lead to the new root');
}

function isProofValid(check: () => void): boolean {
  try {
    check();
    return true;
  } catch (error) {
    if (error instanceof ToolsealError && error.code === 'PROOF_INVALID') return false;
    throw error;
  }
}

/** verifyInclusionProof as a boolean. */
export function isInclusionProofValid(
  leafHash: Uint8Array,
  index: number,
  treeSize: number,
  proof: readonly Uint8Array[],
  rootHash: Uint8Array,
): boolean {
  return isProofValid(() => verifyInclusionProof(leafHash, index, treeSize, proof, rootHash));
}

/** verifyConsistencyProof as a boolean. */
export function isConsistencyProofValid(
  fromSize: number,
  toSize: number,
  fromRoot: Uint8Array,
  toRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  return isProofValid(() => verifyConsistencyProof(fromSize, toSize, fromRoot, toRoot, proof));
}

// The frontier: the hashes of the perfect subtrees on the right edge of an RFC 6962 §2.1 Merkle tree (one per set
// bit of its size), from which the tree head of any size is recomputed with O(log n) memory.

import { ToolsealError } from '../core/errors.ts';
import { hashChildren, hashEmpty } from '../log/merkle.ts';

/** Number of set bits of a safe integer (the frontier's length for a tree of that size). */
export function frontierLength(size: number): number {
  let bits = 0;
  for (let n = size; n > 0; n = Math.floor(n / 2)) bits += n % 2;
  return bits;
}

/** Fold one leaf hash into the frontier of a tree of `size` leaves (mutates `frontier`). */
export function appendToFrontier(frontier: Uint8Array[], size: number, leafHash: Uint8Array): void {
  let hash = leafHash;
  let n = size;
  while (n % 2 === 1) {
    const left = frontier.pop();
    if (left === undefined) throw new ToolsealError('INTERNAL', 'frontier is shorter than its size implies');
    hash = hashChildren(left, hash);
    n = (n - 1) / 2;
  }
  frontier.push(hash);
}

/** RFC 6962 MTH of the tree the frontier describes: MTH = H(P_1, H(P_2, ... P_k)), the empty hash for none. */
export function frontierRoot(frontier: readonly Uint8Array[]): Uint8Array {
  let root = frontier[frontier.length - 1];
  if (root === undefined) return hashEmpty();
  for (let i = frontier.length - 2; i >= 0; i--) root = hashChildren(frontier[i]!, root);
  return root;
}

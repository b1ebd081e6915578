// Inclusion proofs (RFC 9162 §2.1.3.2) against one proven checkpoint, remembering the tree nodes a verified proof
// established, so the next proof under the same root stops hashing where it reaches a node already proven.

import { hash } from 'node:crypto';
import { equalBytes } from '../core/bytes.ts';
import { HASH_SIZE, verifyInclusionProof } from '../log/index.ts';

const MAX_NODES = 100_000;

const NODE_PREFIX = 0x01;

/** A node on a verified path: its hash, and the siblings above it up to the root: `siblings` from `above` on. */
interface ProvenNode {
  hash: Uint8Array;
  /** The siblings of the proof that proved it (copied from that proof, shared by the nodes of its path). */
  siblings: readonly Uint8Array[];
  above: number;
}

/**
 * The path nodes (by the leaf range they cover) of every inclusion proof verified against one tree head, each with
 * the sibling hashes that led from it to the root. A proof is accepted exactly when verifyInclusionProof would
 * accept it: where a computed node equals a proven node, the rest of the proof must be exactly the siblings that
 * proved that node (then the rest of the path is the proven one, of the right length, up to the root); anything
 * else is verified in full, and refused by verifyInclusionProof, with its errors.
 */
export class ProvenNodes {
  private readonly nodes = new Map<number | string, ProvenNode>();
  private readonly scratch = Buffer.allocUnsafe(1 + 2 * HASH_SIZE); // every byte is written before each hash
  /** Ranges are keyed start * stride + end while that stays a safe integer, as "start:end" beyond. */
  private readonly stride: number;

  constructor(
    readonly treeSize: number,
    readonly rootHash: Uint8Array,
  ) {
    this.stride = treeSize < 2 ** 26 ? treeSize + 1 : 0;
  }

  /**
   * Throws (PROOF_INVALID, from verifyInclusionProof) unless `leafHash` is leaf `index` under this tree head.
   * `unchanging`: nothing ever writes to the arrays of `proof` (a Verifier's decoded hashes), so they are kept as
   * they are rather than copied, and a later proof holding the same arrays matches them by identity.
   */
  verify(leafHash: Uint8Array, index: number, proof: readonly Uint8Array[], unchanging = false): void {
    const walked = this.walk(leafHash, index, proof);
    if (walked === 'proven') return;
    if (walked !== undefined && equalBytes(walked.root, this.rootHash)) {
      if (this.nodes.size + walked.ranges.length > MAX_NODES) this.nodes.clear();
      // Copies: the caller may reuse its arrays; what is proven must not change with them.
      const siblings = unchanging ? proof.slice() : proof.map((hash) => Uint8Array.from(hash));
      const { ranges, hashes } = walked;
      for (let step = 0; step < ranges.length; step++) {
        this.nodes.set(ranges[step] as number | string, {
          hash: hashes[step] as Uint8Array,
          siblings,
          above: step + 1,
        });
      }
      return;
    }
    verifyInclusionProof(leafHash, index, this.treeSize, proof, this.rootHash); // throws: it is not proven
    throw new Error('unreachable: a proof that did not lead to the root verified');
  }

  /**
   * RFC 9162 §2.1.3.2 steps 1-5 (see verifyInclusionProof), tracking the leaf range [start, end) of each node:
   * 'proven' when the path joins a proven node with the same siblings above it; the computed root and the path
   * otherwise; undefined when the inputs are malformed (verifyInclusionProof then names the problem).
   */
  private walk(
    leafHash: Uint8Array,
    index: number,
    proof: readonly Uint8Array[],
  ): 'proven' | { root: Uint8Array; ranges: (number | string)[]; hashes: Uint8Array[] } | undefined {
    const size = this.treeSize;
    if (!Number.isSafeInteger(index) || index < 0 || index >= size || !isHash(leafHash)) return undefined;
    if (!Array.isArray(proof)) return undefined;
    for (let step = 0; step < proof.length; step++) if (!isHash(proof[step])) return undefined;
    const ranges: (number | string)[] = [];
    const hashes: Uint8Array[] = [];
    let fn = index;
    let sn = size - 1;
    let width = 1; // 2^level: the leaves a full node of this level covers
    let r = leafHash;
    for (let step = 0; step < proof.length; step++) {
      const p = proof[step] as Uint8Array;
      if (sn === 0) return undefined;
      const rightChild = fn % 2 === 1 || fn === sn;
      if (rightChild && fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
          width *= 2;
        }
      }
      r = rightChild ? this.hashChildren(p, r) : this.hashChildren(r, p);
      const start = Math.floor(fn / 2) * width * 2;
      const end = Math.min(start + width * 2, size);
      const range = this.stride === 0 ? `${start}:${end}` : start * this.stride + end;
      const known = this.nodes.get(range);
      if (known !== undefined && equalBytes(known.hash, r)) {
        if (sameHashes(known, proof, step + 1)) return 'proven';
        verifyInclusionProof(leafHash, index, size, proof, this.rootHash); // joined, then left: in full (throws)
        return 'proven';
      }
      ranges.push(range);
      hashes.push(r);
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
      width *= 2;
    }
    if (sn !== 0) return undefined;
    return { root: r, ranges, hashes };
  }

  private hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
    const input = this.scratch;
    input[0] = NODE_PREFIX;
    input.set(left, 1);
    input.set(right, 1 + HASH_SIZE);
    const out = hash('sha256', input, 'buffer') as unknown as Buffer;
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  }
}

/** The siblings above `node` are exactly `proof` from `from` on. */
function sameHashes(node: ProvenNode, proof: readonly Uint8Array[], from: number): boolean {
  const { siblings, above } = node;
  if (proof.length - from !== siblings.length - above) return false;
  for (let i = above, j = from; i < siblings.length; i++, j++) {
    const sibling = siblings[i] as Uint8Array;
    const hash = proof[j] as Uint8Array;
    if (sibling !== hash && !equalBytes(sibling, hash)) return false;
  }
  return true;
}

function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.byteLength === HASH_SIZE;
}

// Inclusion proofs (RFC 9162 §2.1.3.2) against one proven checkpoint, remembering the tree nodes a verified proof
// established (its path and its siblings), so the next proof under the same root stops hashing where it reaches one.

import { hash } from 'node:crypto';
import { equalBytes } from '../core/bytes.ts';
import { HASH_SIZE, verifyInclusionProof } from '../log/index.ts';

const MAX_NODES = 100_000;

const NODE_PREFIX = 0x01;

/**
 * A proven node (by the leaf range it covers): its hash and the sibling hashes that lead from it to the root, in
 * proof order: `next` (when there is one), then `siblings` from `above` on.
 */
interface ProvenNode {
  hash: Uint8Array;
  /** A sibling node's first sibling: the path node beside it (not in `siblings`); undefined for a path node. */
  next: Uint8Array | undefined;
  /** The siblings of the proof that proved it (copied from that proof, shared by the nodes of its path). */
  siblings: readonly Uint8Array[];
  above: number;
}

type RangeKey = number | string;

/**
 * The nodes of every inclusion proof verified against one tree head, by the leaf range [start, end) they cover: the
 * leaf, each node of its path and each sibling of the proof, each with the sibling hashes that lead from it to the
 * root. From a node, RFC 9162 §2.1.3.2 steps 3-5 depend only on its range (a node on the right edge of the tree is
 * the same node at every level it is promoted through) and on the rest of the proof, so a proof is accepted exactly
 * when verifyInclusionProof would accept it: where its leaf, or a node it computes, equals a proven node, the rest of
 * the proof must be exactly the siblings that led that node to the root; anything else is verified in full, and
 * refused by verifyInclusionProof, with its errors.
 */
export class ProvenNodes {
  private readonly nodes = new Map<RangeKey, ProvenNode>();
  private readonly scratch = Buffer.allocUnsafe(1 + 2 * HASH_SIZE); // every byte is written before each hash
  /** Ranges are keyed start * stride + end while that stays a safe integer, as "start:end" beyond. */
  private readonly stride: number;
  // The last walk, step by step (verify is synchronous, so one set of arrays serves every call): the range and hash
  // of the path node each step computed, and the range of the proof's sibling at that step.
  private readonly pathRanges: RangeKey[] = [];
  private readonly pathHashes: Uint8Array[] = [];
  private readonly siblingRanges: RangeKey[] = [];

  constructor(
    readonly treeSize: number,
    readonly rootHash: Uint8Array,
  ) {
    this.stride = treeSize < 2 ** 26 ? treeSize + 1 : 0;
  }

  /**
   * Throws (PROOF_INVALID, from verifyInclusionProof) unless `leafHash` is leaf `index` under this tree head.
   * `unchanging`: nothing ever writes to `leafHash` or the arrays of `proof` (a Verifier's decoded hashes), so they
   * are kept as they are rather than copied, and a later proof holding the same arrays matches them by identity.
   */
  verify(leafHash: Uint8Array, index: number, proof: readonly Uint8Array[], unchanging = false): void {
    const walked = this.walk(leafHash, index, proof);
    if (walked === PROVEN) return;
    if (walked === UNPROVEN) {
      verifyInclusionProof(leafHash, index, this.treeSize, proof, this.rootHash); // throws: it is not proven
      throw new Error('unreachable: a proof that did not lead to the root verified');
    }
    this.remember(leafHash, index, proof, walked, unchanging);
  }

  /**
   * RFC 9162 §2.1.3.2 steps 1-5 (see verifyInclusionProof), tracking the leaf range [start, end) of each node:
   * PROVEN when the leaf is a proven node with the same siblings above it (nothing new to remember); otherwise the
   * steps walked (into pathRanges, pathHashes, siblingRanges) up to the root, or up to a proven node with the same
   * siblings above it, which the proof then reaches; UNPROVEN when the inputs are malformed or the proof does not
   * lead to the root (verifyInclusionProof then names the problem).
   */
  private walk(leafHash: Uint8Array, index: number, proof: readonly Uint8Array[]): number {
    const size = this.treeSize;
    if (!Number.isSafeInteger(index) || index < 0 || index >= size || !isHash(leafHash)) return UNPROVEN;
    if (!Array.isArray(proof)) return UNPROVEN;
    const length = proof.length;
    for (let step = 0; step < length; step++) if (!isHash(proof[step])) return UNPROVEN;
    const leaf = this.nodes.get(this.keyOf(index, index + 1));
    if (leaf !== undefined && equalBytes(leaf.hash, leafHash)) {
      if (!sameHashes(leaf, proof, 0)) verifyInclusionProof(leafHash, index, size, proof, this.rootHash); // throws
      return PROVEN;
    }
    const { pathRanges, pathHashes, siblingRanges } = this;
    let fn = index;
    let sn = size - 1;
    let width = 1; // 2^level: the leaves a full node of this level covers
    let r = leafHash;
    for (let step = 0; step < length; step++) {
      const p = proof[step] as Uint8Array;
      if (sn === 0) return UNPROVEN;
      const rightChild = fn % 2 === 1 || fn === sn;
      if (rightChild && fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
          width *= 2;
        }
      }
      const sibling = rightChild ? fn - 1 : fn + 1;
      siblingRanges[step] = this.keyOf(sibling * width, Math.min((sibling + 1) * width, size));
      r = rightChild ? this.hashChildren(p, r) : this.hashChildren(r, p);
      const start = Math.floor(fn / 2) * width * 2;
      const range = this.keyOf(start, Math.min(start + width * 2, size));
      pathRanges[step] = range;
      pathHashes[step] = r;
      const known = this.nodes.get(range);
      if (known !== undefined && equalBytes(known.hash, r)) {
        if (sameHashes(known, proof, step + 1)) return step + 1;
        verifyInclusionProof(leafHash, index, size, proof, this.rootHash); // joined, then left: in full (throws)
        return PROVEN;
      }
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
      width *= 2;
    }
    if (sn !== 0) return UNPROVEN;
    return equalBytes(r, this.rootHash) ? length : UNPROVEN;
  }

  /**
   * Remember what a walk of `steps` steps proved: the leaf, each path node it computed (the last one is already
   * known when the walk joined a proven node) and each sibling, whose siblings up to the root are the path node
   * beside it, then the rest of the proof.
   */
  private remember(
    leafHash: Uint8Array,
    index: number,
    proof: readonly Uint8Array[],
    steps: number,
    unchanging: boolean,
  ): void {
    const { nodes, pathRanges, pathHashes, siblingRanges } = this;
    if (nodes.size + 2 * steps + 1 > MAX_NODES) nodes.clear();
    // Copies: the caller may reuse its arrays; what is proven must not change with them.
    const siblings = unchanging ? proof.slice() : proof.map((each) => Uint8Array.from(each));
    const leaf = unchanging ? leafHash : Uint8Array.from(leafHash);
    nodes.set(this.keyOf(index, index + 1), { hash: leaf, next: undefined, siblings, above: 0 });
    for (let step = 0; step < steps; step++) {
      nodes.set(pathRanges[step] as RangeKey, {
        hash: pathHashes[step] as Uint8Array,
        next: undefined,
        siblings,
        above: step + 1,
      });
      nodes.set(siblingRanges[step] as RangeKey, {
        hash: siblings[step] as Uint8Array,
        next: step === 0 ? leaf : (pathHashes[step - 1] as Uint8Array),
        siblings,
        above: step + 1,
      });
    }
  }

  private keyOf(start: number, end: number): RangeKey {
    return this.stride === 0 ? `${start}:${end}` : start * this.stride + end;
  }

  private hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
    const input = this.scratch;
    input[0] = NODE_PREFIX;
    input.set(left, 1);
    input.set(right, 1 + HASH_SIZE);
    // As a 'binary' (latin1) string, one character per byte, copied out: a 'buffer' result costs a new ArrayBuffer.
    const text = hash('sha256', input, 'binary');
    const out = new Uint8Array(HASH_SIZE);
    for (let i = 0; i < HASH_SIZE; i++) out[i] = text.charCodeAt(i);
    return out;
  }
}

/** walk: the leaf is already proven with this proof. */
const PROVEN = -1;
/** walk: not proven here (malformed, or not leading to the root). */
const UNPROVEN = -2;

/** The siblings above `node` are exactly `proof` from `from` on. */
function sameHashes(node: ProvenNode, proof: readonly Uint8Array[], from: number): boolean {
  const { next, siblings, above } = node;
  let j = from;
  if (next !== undefined) {
    if (proof.length - from !== 1 + siblings.length - above) return false;
    const hash = proof[j++] as Uint8Array;
    if (next !== hash && !equalBytes(next, hash)) return false;
  } else if (proof.length - from !== siblings.length - above) {
    return false;
  }
  for (let i = above; i < siblings.length; i++, j++) {
    const sibling = siblings[i] as Uint8Array;
    const hash = proof[j] as Uint8Array;
    if (sibling !== hash && !equalBytes(sibling, hash)) return false;
  }
  return true;
}

function isHash(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && value.byteLength === HASH_SIZE;
}

// RFC 6962 / RFC 9162 §2.1 Merkle tree over a store of perfect-subtree hashes: hashing, roots and proofs.
// Verifying proofs is merkle-verify.ts; an in-memory node store is memory-node-store.ts.

// Storage model. A log never rewrites a node: once leaves [i*2^L, (i+1)*2^L) exist, the hash of that
// perfect subtree is fixed forever. The log persists exactly those hashes, addressed (level, index):
// level 0 holds leaf hashes, node (L, i) covers leaves [i*2^L, (i+1)*2^L). A tree of n leaves has
// fewer than 2n such nodes, one append adds 1 + (trailing one-bits of the leaf index) of them
// (amortised 2, worst log2 n + 1), and every other hash (a root for any size, a proof sibling on the
// right edge) is computed from O(log n) of them.
//
// Cost. computeRootHash, generateInclusionProof and generateConsistencyProof each read O(log n)
// nodes and hash O(log n) times: every sibling on the path is a perfect node (one read) except at
// most one on the right edge of the tree, which decomposes into at most log2 n perfect nodes. So
// both proofs cost at most about 2*log2(n) reads — O(log n), not O(log^2 n).
//
// Numbers. Indexes and sizes are JavaScript numbers and must be safe integers (< 2^53); the bit
// arithmetic of RFC 9162 is done with division, never with 32-bit operators.
//
// Errors. Verification failures throw ToolsealError('PROOF_INVALID'); invalid arguments to a
// generator throw 'BAD_REQUEST'; a node missing from a store is 'INTERNAL'.

import { hash } from 'node:crypto';
import { decodeBase64Strict } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';

/** SHA-256 output length: every node hash, root hash and proof element has this many bytes. */
export const HASH_SIZE = 32;

const LEAF_PREFIX = new Uint8Array([0x00]);
const NODE_PREFIX = new Uint8Array([0x01]);

/** Synchronous access to stored perfect-subtree hashes (the SQLite store is synchronous too). */
export interface NodeReader {
  /** The hash of node (level, index); throws when the node does not exist (yet). */
  readNode(level: number, index: number): Uint8Array;
}

/** One perfect-subtree hash to persist. */
export interface MerkleNode {
  level: number;
  index: number;
  hash: Uint8Array;
}

/** An in-memory NodeReader that can grow: for tests, benchmarks and hosts that mirror a log. */
export interface MemoryNodeStore extends NodeReader {
  /** Number of leaves appended so far. */
  readonly size: number;
  /** Append one leaf hash (already hashed with hashLeaf); returns the leaf's index. */
  append(leafHash: Uint8Array): number;
}

/**
 * One-shot SHA-256 of the parts, concatenated (no Hash object per call: verifiers hash a leaf per manifest). The
 * digest is asked for as a 'binary' (latin1) string, one character per byte, and copied out: a 'buffer' result
 * costs a new ArrayBuffer per call, several times the hash of a node.
 */
function digest(...parts: Uint8Array[]): Uint8Array {
  const text = hash('sha256', parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts), 'binary');
  const out = new Uint8Array(HASH_SIZE);
  for (let i = 0; i < HASH_SIZE; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** Leaves up to this size are prefixed in a reused buffer instead of a new one (hashing is synchronous). */
const SCRATCH_SIZE = 16 * 1024;
const scratch = Buffer.allocUnsafe(SCRATCH_SIZE);

/** SHA-256 of `prefix` || `first` || `second`, written into the scratch buffer when they fit. */
function hashPrefixed(prefix: number, first: Uint8Array, second?: Uint8Array): Uint8Array {
  const firstLength = first.byteLength;
  const size = 1 + firstLength + (second === undefined ? 0 : second.byteLength);
  if (size > SCRATCH_SIZE) {
    const head = prefix === 0 ? LEAF_PREFIX : NODE_PREFIX;
    return second === undefined ? digest(head, first) : digest(head, first, second);
  }
  scratch[0] = prefix;
  scratch.set(first, 1);
  if (second !== undefined) scratch.set(second, 1 + firstLength);
  return digest(scratch.subarray(0, size));
}

/** RFC 6962 §2.1: MTH({d(0)}) = SHA-256(0x00 || d(0)). */
export function hashLeaf(data: Uint8Array): Uint8Array {
  return hashPrefixed(0x00, data);
}

/** RFC 6962 §2.1: an interior node is SHA-256(0x01 || left || right). */
export function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  return hashPrefixed(0x01, left, right);
}

/** RFC 6962 §2.1: the hash of an empty tree is SHA-256 of the empty string. */
export function hashEmpty(): Uint8Array {
  return digest();
}

// ---------------------------------------------------------------------------------------------
// Arithmetic on safe integers (no 32-bit bitwise operators: sizes may exceed 2^32).

/** @internal for merkle-verify.ts */
export function isOdd(value: number): boolean {
  return value % 2 === 1;
}

/** @internal for merkle-verify.ts */
export function halve(value: number): number {
  return Math.floor(value / 2);
}

/** @internal for merkle-verify.ts */
export function isPowerOfTwo(value: number): boolean {
  if (value < 1) return false;
  let v = value;
  while (v % 2 === 0) v /= 2;
  return v === 1;
}

/** RFC 9162 §2.1.1: k, the largest power of two smaller than n (n > 1). */
function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function log2OfPowerOfTwo(value: number): number {
  let level = 0;
  let v = value;
  while (v > 1) {
    v /= 2;
    level++;
  }
  return level;
}

/** @internal for merkle-verify.ts */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function requireCount(what: string, value: number): void {
  if (!isCount(value))
    throw new ToolsealError('BAD_REQUEST', `${what} must be a non-negative safe integer, got ${String(value)}`);
}

function requireHash(what: string, hash: Uint8Array): void {
  if (!(hash instanceof Uint8Array) || hash.byteLength !== HASH_SIZE) {
    throw new ToolsealError('BAD_REQUEST', `${what} must be ${HASH_SIZE} bytes`);
  }
}

// ---------------------------------------------------------------------------------------------
// Building the node store.

/**
 * The perfect-subtree nodes that appending leaf number `treeSize` creates: the leaf itself at
 * (0, treeSize), then one parent for each level at which the new node is a right child.
 * Amortised O(1) reads and hashes, worst case log2(n). The reader must already hold every node
 * of the tree of size `treeSize` (a SQLite transaction sees its own earlier writes).
 */
export function computeNodesForAppend(reader: NodeReader, treeSize: number, leafHash: Uint8Array): MerkleNode[] {
  requireCount('treeSize', treeSize);
  requireHash('leafHash', leafHash);
  const nodes: MerkleNode[] = [{ level: 0, index: treeSize, hash: leafHash }];
  let level = 0;
  let index = treeSize;
  let hash = leafHash;
  while (isOdd(index)) {
    hash = hashChildren(reader.readNode(level, index - 1), hash);
    level++;
    index = (index - 1) / 2;
    nodes.push({ level, index, hash });
  }
  return nodes;
}

/**
 * RFC 9162 §2.1.1 MTH(D[start:end]) from stored perfect subtrees. For a range that starts at a
 * multiple of the largest power of two not above its length (every range a root or proof needs,
 * including any right edge D[k:n]), this reads at most log2(n)+1 nodes. Other ranges are allowed and
 * correct, but may fall back to reading leaf hashes (up to end - start reads).
 */
export function computeSubtreeHash(reader: NodeReader, start: number, end: number): Uint8Array {
  requireCount('start', start);
  requireCount('end', end);
  if (end <= start) throw new ToolsealError('BAD_REQUEST', `subtree range [${start}, ${end}) is empty`);
  return subtreeHash(reader, start, end);
}

function subtreeHash(reader: NodeReader, start: number, end: number): Uint8Array {
  const n = end - start;
  if (isPowerOfTwo(n) && start % n === 0) return reader.readNode(log2OfPowerOfTwo(n), start / n);
  const k = largestPowerOfTwoBelow(n);
  return hashChildren(subtreeHash(reader, start, start + k), subtreeHash(reader, start + k, end));
}

/** RFC 9162 §2.1.1 MTH(D[0:treeSize]) for any size, from at most log2(n)+1 perfect nodes. */
export function computeRootHash(reader: NodeReader, treeSize: number): Uint8Array {
  requireCount('treeSize', treeSize);
  return treeSize === 0 ? hashEmpty() : subtreeHash(reader, 0, treeSize);
}

// ---------------------------------------------------------------------------------------------
// Generating proofs.

/**
 * RFC 9162 §2.1.3.1 PATH(m, D[n]): the inclusion proof for leaf `index` in the tree of size
 * `treeSize`, ordered from the leaf's sibling up to the root's child. O(log n) node reads.
 */
export function generateInclusionProof(reader: NodeReader, index: number, treeSize: number): Uint8Array[] {
  requireCount('index', index);
  requireCount('treeSize', treeSize);
  if (index >= treeSize) {
    throw new ToolsealError('BAD_REQUEST', `leaf index ${index} is not in a tree of size ${treeSize}`);
  }
  const topDown: Uint8Array[] = [];
  let start = 0;
  let n = treeSize;
  let m = index;
  while (n > 1) {
    const k = largestPowerOfTwoBelow(n);
    if (m < k) {
      // PATH(m, D[0:k]) : MTH(D[k:n])
      topDown.push(subtreeHash(reader, start + k, start + n));
      n = k;
    } else {
      // PATH(m - k, D[k:n]) : MTH(D[0:k])
      topDown.push(subtreeHash(reader, start, start + k));
      start += k;
      m -= k;
      n -= k;
    }
  }
  return topDown.reverse();
}

/**
 * RFC 9162 §2.1.4.1 PROOF(m, D[n]): the consistency proof from the tree of size `fromSize` to the
 * tree of size `toSize`. O(log n) node reads. The RFC defines it only for 0 < m < n; for m = 0 and
 * m = n the proof is empty (there is nothing to prove; see verifyConsistencyProof for how those are
 * checked).
 */
export function generateConsistencyProof(reader: NodeReader, fromSize: number, toSize: number): Uint8Array[] {
  requireCount('fromSize', fromSize);
  requireCount('toSize', toSize);
  if (fromSize > toSize) {
    throw new ToolsealError('BAD_REQUEST', `no consistency proof from size ${fromSize} to the smaller size ${toSize}`);
  }
  if (fromSize === 0 || fromSize === toSize) return [];
  const topDown: Uint8Array[] = [];
  let start = 0;
  let n = toSize;
  let m = fromSize;
  let wholeOldTree = true; // the RFC's flag b: is D[start:start+m] the entire old tree?
  while (m !== n) {
    const k = largestPowerOfTwoBelow(n);
    if (m <= k) {
      // SUBPROOF(m, D[0:k], b) : MTH(D[k:n])
      topDown.push(subtreeHash(reader, start + k, start + n));
      n = k;
    } else {
      // SUBPROOF(m - k, D[k:n], false) : MTH(D[0:k])
      topDown.push(subtreeHash(reader, start, start + k));
      start += k;
      m -= k;
      n -= k;
      wholeOldTree = false;
    }
  }
  // SUBPROOF(m, D[m], true) = {} ; SUBPROOF(m, D[m], false) = {MTH(D[m])}
  const head = wholeOldTree ? [] : [subtreeHash(reader, start, start + m)];
  return head.concat(topDown.reverse());
}

/** The value of each RFC 4648 §4 base64 symbol by its character code, -1 for any other code below 128. */
const BASE64_VALUES = (() => {
  const values = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i++) values[alphabet.charCodeAt(i)] = i;
  return values;
})();

/** Base64 of a 32-byte hash: 43 symbols and one `=`. */
const HASH_BASE64_LENGTH = 44;

/**
 * A 32-byte hash written in strict RFC 4648 §4 base64 (exactly what decodeBase64Strict reads as 32 bytes), decoded
 * quickly: 43 base64 symbols then `=`, the last symbol's two unused low bits zero (§3.5). Undefined for any other
 * text, which is then decodeBase64Strict's to decide (it may be base64 of another length).
 */
export function decodeHashBase64(text: string): Uint8Array | undefined {
  if (text.length !== HASH_BASE64_LENGTH || text.charCodeAt(43) !== 0x3d /* = */) return undefined;
  const values = BASE64_VALUES;
  const out = new Uint8Array(HASH_SIZE);
  let o = 0;
  for (let i = 0; i < 40; i += 4) {
    // Codes of 128 and more are outside the table: refused before the look-up.
    const ca = text.charCodeAt(i);
    const cb = text.charCodeAt(i + 1);
    const cc = text.charCodeAt(i + 2);
    const cd = text.charCodeAt(i + 3);
    if ((ca | cb | cc | cd) >= 128) return undefined;
    const a = values[ca] as number;
    const b = values[cb] as number;
    const c = values[cc] as number;
    const d = values[cd] as number;
    if ((a | b | c | d) < 0) return undefined;
    out[o++] = (a << 2) | (b >> 4);
    out[o++] = ((b & 0x0f) << 4) | (c >> 2);
    out[o++] = ((c & 0x03) << 6) | d;
  }
  const ca = text.charCodeAt(40);
  const cb = text.charCodeAt(41);
  const cc = text.charCodeAt(42);
  if ((ca | cb | cc) >= 128) return undefined;
  const a = values[ca] as number;
  const b = values[cb] as number;
  const c = values[cc] as number;
  if ((a | b | c) < 0 || (c & 0x03) !== 0) return undefined;
  out[30] = (a << 2) | (b >> 4);
  out[31] = ((b & 0x0f) << 4) | (c >> 2);
  return out;
}

/** decodeBase64Strict(text), quicker for a hash (decodeHashBase64 first): undefined when it is not strict base64. */
export function decodeHashText(text: string): Uint8Array | undefined {
  return decodeHashBase64(text) ?? decodeBase64Strict(text);
}

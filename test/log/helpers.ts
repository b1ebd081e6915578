// Test helpers for the log modules: a naive recursive RFC 6962 MTH, store builders, hex.

import { createHash } from 'node:crypto';
import { ToolsealError, type ErrorCode } from '../../src/core/errors.ts';
import { createMemoryNodeStore, hashLeaf, type MemoryNodeStore } from '../../src/log/index.ts';

export function sha256(...parts: Uint8Array[]): Uint8Array {
  const hasher = createHash('sha256');
  for (const part of parts) hasher.update(part);
  return new Uint8Array(hasher.digest());
}

/** RFC 6962 §2.1 written out literally, independent of src/log/merkle.ts. */
export function naiveRootHash(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return sha256(new Uint8Array([0]), leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha256(new Uint8Array([1]), naiveRootHash(leaves.slice(0, k)), naiveRootHash(leaves.slice(k)));
}

export function buildStore(leaves: readonly Uint8Array[]): MemoryNodeStore {
  const store = createMemoryNodeStore();
  for (const leaf of leaves) store.append(hashLeaf(leaf));
  return store;
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

export function fromBase64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'base64'));
}

export function flipBit(bytes: Uint8Array, bit: number): Uint8Array {
  const copy = bytes.slice();
  copy[bit >> 3]! ^= 1 << (bit & 7);
  return copy;
}

/** The ToolsealError code `fn` throws, or undefined if it returns. */
export function codeOf(fn: () => unknown): ErrorCode | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    if (error instanceof ToolsealError) return error.code;
    throw error;
  }
}

// An in-memory store of RFC 6962 perfect-subtree hashes (for fsck's rebuild, tests and benches).

import { ToolsealError } from '../core/errors.ts';
import { computeNodesForAppend, HASH_SIZE, type MemoryNodeStore, type MerkleNode } from './merkle.ts';

interface LevelBuffer {
  bytes: Uint8Array;
  count: number;
}

/**
 * An in-memory store of perfect-subtree hashes: each level is one growable contiguous buffer
 * (1M leaves take about 64 MB). readNode returns a copy, so callers may mutate what they get.
 */
export function createMemoryNodeStore(): MemoryNodeStore {
  const levels: LevelBuffer[] = [];
  let size = 0;

  function writeNode(node: MerkleNode): void {
    let level = levels[node.level];
    if (level === undefined) {
      level = { bytes: new Uint8Array(HASH_SIZE * 16), count: 0 };
      levels[node.level] = level;
    }
    if (node.index !== level.count) {
      throw new ToolsealError('INTERNAL', `node (${node.level}, ${node.index}) written out of order`);
    }
    if ((level.count + 1) * HASH_SIZE > level.bytes.byteLength) {
      const grown = new Uint8Array(level.bytes.byteLength * 2);
      grown.set(level.bytes);
      level.bytes = grown;
    }
    level.bytes.set(node.hash, level.count * HASH_SIZE);
    level.count++;
  }

  const store: MemoryNodeStore = {
    get size() {
      return size;
    },
    readNode(level: number, index: number): Uint8Array {
      const buffer = levels[level];
      if (buffer === undefined || !Number.isSafeInteger(index) || index < 0 || index >= buffer.count) {
        throw new ToolsealError('INTERNAL', `node (${level}, ${index}) is not in the store`);
      }
      return buffer.bytes.slice(index * HASH_SIZE, (index + 1) * HASH_SIZE);
    },
    append(leafHash: Uint8Array): number {
      for (const node of computeNodesForAppend(store, size, leafHash)) writeNode(node);
      return size++;
    },
  };
  return store;
}

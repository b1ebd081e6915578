// A log of `size` distinct leaves ("leaf 0", "leaf 1", …) in memory (RFC 6962 §2.1 leaf hashes), for the
// inclusion-proof suites.

import { createMemoryNodeStore, hashLeaf, type MemoryNodeStore } from '../../src/log/index.ts';

export function buildLeafStore(size: number): MemoryNodeStore {
  const store = createMemoryNodeStore();
  for (let i = 0; i < size; i++) store.append(hashLeaf(Buffer.from(`leaf ${i}`)));
  return store;
}

// The frontier (src/audit/frontier.ts) against a naive RFC 6962 §2.1 MTH for every tree size up to 130.

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { appendToFrontier, frontierLength, frontierRoot } from '../../src/audit/index.ts';
import { hashLeaf } from '../../src/log/index.ts';
import { naiveRootHash } from '../log/helpers.ts';

describe('frontier', () => {
  it('folds leaves into O(log n) right-edge hashes whose root is RFC 6962 MTH for every size', () => {
    const leaves = Array.from({ length: 130 }, () => randomBytes(1 + Math.floor(Math.random() * 40)));
    const frontier: Uint8Array[] = [];
    expect(Buffer.from(frontierRoot(frontier)).equals(Buffer.from(naiveRootHash([])))).toBe(true);
    leaves.forEach((leaf, size) => {
      appendToFrontier(frontier, size, hashLeaf(leaf));
      expect(frontier).toHaveLength(frontierLength(size + 1));
      expect(
        Buffer.from(frontierRoot(frontier)).equals(Buffer.from(naiveRootHash(leaves.slice(0, size + 1)))),
        `size ${size + 1}`,
      ).toBe(true);
    });
    expect(frontierLength(0)).toBe(0);
    expect(frontierLength(255)).toBe(8);
    expect(frontierLength(2 ** 40)).toBe(1);
  });
});

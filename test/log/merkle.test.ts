// Merkle node store, proof generation and verification: properties against a naive RFC 6962 MTH.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  computeNodesForAppend,
  computeRootHash,
  computeSubtreeHash,
  createMemoryNodeStore,
  generateConsistencyProof,
  generateInclusionProof,
  hashChildren,
  hashEmpty,
  hashLeaf,
  isConsistencyProofValid,
  isInclusionProofValid,
  verifyConsistencyProof,
  verifyInclusionProof,
  type NodeReader,
} from '../../src/log/index.ts';
import { decodeBase64Strict } from '../../src/core/bytes.ts';
import { decodeHashBase64 } from '../../src/log/merkle.ts';
import { buildStore, codeOf, flipBit, hex, naiveRootHash, sha256 } from './helpers.ts';

/** Random leaves, each prefixed with its index so no two are equal (repeated leaves make some "wrong" claims true). */
const leavesArb = (min: number, max: number) =>
  fc
    .array(fc.uint8Array({ minLength: 0, maxLength: 8 }), { minLength: min, maxLength: max })
    .map((leaves) => leaves.map((leaf, i) => new Uint8Array([i >> 8, i & 0xff, ...leaf])));

/** A tree of 1..300 random leaves plus a leaf index in it. */
const treeWithIndex = leavesArb(1, 300).chain((leaves) =>
  fc.record({ leaves: fc.constant(leaves), index: fc.nat({ max: leaves.length - 1 }) }),
);

/** A tree of 2..300 random leaves plus an older size 1..n-1. */
const treeWithOldSize = leavesArb(2, 300).chain((leaves) =>
  fc.record({ leaves: fc.constant(leaves), fromSize: fc.integer({ min: 1, max: leaves.length - 1 }) }),
);

function countingReader(inner: NodeReader): NodeReader & { reads: number } {
  const reader = {
    reads: 0,
    readNode(level: number, index: number): Uint8Array {
      reader.reads++;
      return inner.readNode(level, index);
    },
  };
  return reader;
}

describe('hashing (RFC 6962 §2.1)', () => {
  it('hashLeaf, hashChildren and hashEmpty use the 0x00 / 0x01 prefixes', () => {
    const a = new Uint8Array([1, 2, 3]);
    expect(hex(hashLeaf(a))).toBe(hex(sha256(new Uint8Array([0]), a)));
    const l = hashLeaf(a);
    const r = hashLeaf(new Uint8Array());
    expect(hex(hashChildren(l, r))).toBe(hex(sha256(new Uint8Array([1]), l, r)));
    expect(hex(hashEmpty())).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('node store', () => {
  it('roots from the node store equal the naive MTH for every size', () => {
    fc.assert(
      fc.property(leavesArb(0, 300), (leaves) => {
        const store = buildStore(leaves);
        expect(store.size).toBe(leaves.length);
        // every prefix size, read from the final store
        for (let n = 0; n <= leaves.length; n += 1 + Math.floor(leaves.length / 40)) {
          expect(hex(computeRootHash(store, n))).toBe(hex(naiveRootHash(leaves.slice(0, n))));
        }
        expect(hex(computeRootHash(store, leaves.length))).toBe(hex(naiveRootHash(leaves)));
      }),
      { numRuns: 60 },
    );
  });

  it('computeNodesForAppend creates 1 + (trailing ones of the index) nodes, each a perfect subtree hash', () => {
    const leaves = Array.from({ length: 64 }, (_, i) => new Uint8Array([i]));
    const store = createMemoryNodeStore();
    leaves.forEach((leaf, i) => {
      const nodes = computeNodesForAppend(store, i, hashLeaf(leaf));
      let trailingOnes = 0;
      for (let v = i; v % 2 === 1; v = Math.floor(v / 2)) trailingOnes++;
      expect(nodes).toHaveLength(1 + trailingOnes);
      for (const node of nodes) {
        const span = 2 ** node.level;
        expect(hex(node.hash)).toBe(hex(naiveRootHash(leaves.slice(node.index * span, (node.index + 1) * span))));
      }
      store.append(hashLeaf(leaf));
    });
  });

  it('computeSubtreeHash equals the naive MTH of any range, aligned or not', () => {
    const leaves = Array.from({ length: 37 }, (_, i) => new Uint8Array([i, i ^ 0x5a]));
    const store = buildStore(leaves);
    for (let start = 0; start < leaves.length; start++) {
      for (let end = start + 1; end <= leaves.length; end++) {
        expect(hex(computeSubtreeHash(store, start, end))).toBe(hex(naiveRootHash(leaves.slice(start, end))));
      }
    }
    expect(codeOf(() => computeSubtreeHash(store, 3, 3))).toBe('BAD_REQUEST');
  });

  it('readNode returns copies and refuses nodes that do not exist', () => {
    const store = buildStore([new Uint8Array([1]), new Uint8Array([2])]);
    const node = store.readNode(1, 0);
    node.fill(0);
    expect(hex(store.readNode(1, 0))).not.toBe(hex(node));
    expect(codeOf(() => store.readNode(1, 1))).toBe('INTERNAL');
    expect(codeOf(() => store.readNode(5, 0))).toBe('INTERNAL');
    expect(codeOf(() => store.append(new Uint8Array(31)))).toBe('BAD_REQUEST');
  });

  it('proofs and roots read O(log n) nodes (at most 2*log2(n) + 2)', () => {
    const store = buildStore(Array.from({ length: 5000 }, (_, i) => new Uint8Array([i & 0xff, i >> 8])));
    const bound = 2 * Math.ceil(Math.log2(5000)) + 2;
    for (const size of [1, 2, 3, 255, 256, 257, 1000, 4095, 4096, 4097, 4999, 5000]) {
      const reader = countingReader(store);
      computeRootHash(reader, size);
      expect(reader.reads).toBeLessThanOrEqual(bound);
      for (const index of [0, 1, Math.floor(size / 2), size - 1]) {
        if (index >= size) continue;
        reader.reads = 0;
        generateInclusionProof(reader, index, size);
        expect(reader.reads).toBeLessThanOrEqual(bound);
      }
      for (const from of [1, 2, 3, Math.floor(size / 2), size - 1]) {
        if (from < 1 || from >= size) continue;
        reader.reads = 0;
        generateConsistencyProof(reader, from, size);
        expect(reader.reads).toBeLessThanOrEqual(bound);
      }
    }
  });
});

describe('inclusion proofs (RFC 9162 §2.1.3)', () => {
  it('generated proofs verify against the naive root', () => {
    fc.assert(
      fc.property(treeWithIndex, ({ leaves, index }) => {
        const store = buildStore(leaves);
        const root = naiveRootHash(leaves);
        const proof = generateInclusionProof(store, index, leaves.length);
        verifyInclusionProof(hashLeaf(leaves[index]!), index, leaves.length, proof, root);
      }),
      { numRuns: 200 },
    );
  });

  it('flipping any single bit of a proof hash, the leaf or the root fails', () => {
    fc.assert(
      fc.property(treeWithIndex, fc.nat(), fc.nat({ max: 255 }), ({ leaves, index }, which, bit) => {
        const store = buildStore(leaves);
        const root = computeRootHash(store, leaves.length);
        const leaf = hashLeaf(leaves[index]!);
        const proof = generateInclusionProof(store, index, leaves.length);
        const target = which % (proof.length + 2);
        if (target < proof.length) {
          const bad = proof.map((h, i) => (i === target ? flipBit(h, bit) : h));
          expect(isInclusionProofValid(leaf, index, leaves.length, bad, root)).toBe(false);
        } else if (target === proof.length) {
          expect(isInclusionProofValid(leaf, index, leaves.length, proof, flipBit(root, bit))).toBe(false);
        } else {
          expect(isInclusionProofValid(flipBit(leaf, bit), index, leaves.length, proof, root)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('every bit of every proof hash matters (exhaustive, 13 leaves)', () => {
    const leaves = Array.from({ length: 13 }, (_, i) => new Uint8Array([i]));
    const store = buildStore(leaves);
    const root = computeRootHash(store, 13);
    for (let index = 0; index < 13; index++) {
      const proof = generateInclusionProof(store, index, 13);
      const leaf = hashLeaf(leaves[index]!);
      for (let i = 0; i < proof.length; i++) {
        for (let bit = 0; bit < 256; bit++) {
          const bad = proof.map((h, j) => (j === i ? flipBit(h, bit) : h));
          expect(isInclusionProofValid(leaf, index, 13, bad, root)).toBe(false);
        }
      }
    }
  });

  it('a wrong index, another size with its real root, or a truncated / extended proof fails', () => {
    // The RFC 9162 verifier binds the size only through the root: a proof can be valid for several
    // sizes that share the path's shape and root, so "wrong size" claims use that size's real root.
    fc.assert(
      fc.property(treeWithIndex, fc.nat(), ({ leaves, index }, other) => {
        const n = leaves.length;
        const store = buildStore(leaves);
        const root = computeRootHash(store, n);
        const leaf = hashLeaf(leaves[index]!);
        const proof = generateInclusionProof(store, index, n);
        if (n > 1) {
          const wrongIndex = (index + 1 + (other % (n - 1))) % n;
          expect(isInclusionProofValid(leaf, wrongIndex, n, proof, root)).toBe(false);
        }
        if (n - index > 1) {
          const otherSize = index + 1 + (other % (n - index - 1));
          const same = generateInclusionProof(store, index, otherSize).map(hex).join() === proof.map(hex).join();
          expect(isInclusionProofValid(leaf, index, otherSize, proof, computeRootHash(store, otherSize))).toBe(same);
        }
        expect(isInclusionProofValid(leaf, n + (other % 5), n, proof, root)).toBe(false);
        if (proof.length > 0) expect(isInclusionProofValid(leaf, index, n, proof.slice(1), root)).toBe(false);
        if (proof.length > 0) expect(isInclusionProofValid(leaf, index, n, proof.slice(0, -1), root)).toBe(false);
        expect(isInclusionProofValid(leaf, index, n, [...proof, root], root)).toBe(false);
        expect(isInclusionProofValid(leaf, index, n, [root, ...proof], root)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('generation refuses an index outside the tree', () => {
    const store = buildStore([new Uint8Array([1])]);
    expect(codeOf(() => generateInclusionProof(store, 1, 1))).toBe('BAD_REQUEST');
    expect(codeOf(() => generateInclusionProof(store, -1, 1))).toBe('BAD_REQUEST');
    expect(codeOf(() => generateInclusionProof(store, 0.5, 1))).toBe('BAD_REQUEST');
  });

  it('verification refuses unsafe numbers and wrong-length hashes', () => {
    const leaf = hashLeaf(new Uint8Array([1]));
    expect(codeOf(() => verifyInclusionProof(leaf, 2 ** 64, 2 ** 64 + 1, [], leaf))).toBe('PROOF_INVALID');
    expect(codeOf(() => verifyInclusionProof(leaf, 0, 1, [], leaf.slice(1)))).toBe('PROOF_INVALID');
    expect(codeOf(() => verifyInclusionProof(leaf.slice(1), 0, 1, [], leaf.slice(1)))).toBe('PROOF_INVALID');
    expect(codeOf(() => verifyInclusionProof(leaf, 0, 2, [new Uint8Array(33)], leaf))).toBe('PROOF_INVALID');
    expect(codeOf(() => verifyInclusionProof(leaf, 0, 1, [], leaf))).toBeUndefined();
  });
});

describe('consistency proofs (RFC 9162 §2.1.4)', () => {
  it('generated proofs verify between naive roots', () => {
    fc.assert(
      fc.property(treeWithOldSize, ({ leaves, fromSize }) => {
        const store = buildStore(leaves);
        const proof = generateConsistencyProof(store, fromSize, leaves.length);
        verifyConsistencyProof(
          fromSize,
          leaves.length,
          naiveRootHash(leaves.slice(0, fromSize)),
          naiveRootHash(leaves),
          proof,
        );
      }),
      { numRuns: 200 },
    );
  });

  it('flipping any single bit of a proof hash or of either root fails', () => {
    fc.assert(
      fc.property(treeWithOldSize, fc.nat(), fc.nat({ max: 255 }), ({ leaves, fromSize }, which, bit) => {
        const n = leaves.length;
        const store = buildStore(leaves);
        const oldRoot = computeRootHash(store, fromSize);
        const newRoot = computeRootHash(store, n);
        const proof = generateConsistencyProof(store, fromSize, n);
        const target = which % (proof.length + 2);
        if (target < proof.length) {
          const bad = proof.map((h, i) => (i === target ? flipBit(h, bit) : h));
          expect(isConsistencyProofValid(fromSize, n, oldRoot, newRoot, bad)).toBe(false);
        } else if (target === proof.length) {
          expect(isConsistencyProofValid(fromSize, n, flipBit(oldRoot, bit), newRoot, proof)).toBe(false);
        } else {
          expect(isConsistencyProofValid(fromSize, n, oldRoot, flipBit(newRoot, bit), proof)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('every bit of every proof hash matters (exhaustive, 1..12 -> 13)', () => {
    const store = buildStore(Array.from({ length: 13 }, (_, i) => new Uint8Array([i])));
    const newRoot = computeRootHash(store, 13);
    for (let from = 1; from < 13; from++) {
      const oldRoot = computeRootHash(store, from);
      const proof = generateConsistencyProof(store, from, 13);
      for (let i = 0; i < proof.length; i++) {
        for (let bit = 0; bit < 256; bit++) {
          const bad = proof.map((h, j) => (j === i ? flipBit(h, bit) : h));
          expect(isConsistencyProofValid(from, 13, oldRoot, newRoot, bad)).toBe(false);
        }
      }
    }
  });

  it('other sizes with their real roots, swapped roots, or a truncated / extended proof fail', () => {
    fc.assert(
      fc.property(treeWithOldSize, fc.nat(), ({ leaves, fromSize }, other) => {
        const n = leaves.length;
        const store = buildStore(leaves);
        const oldRoot = computeRootHash(store, fromSize);
        const newRoot = computeRootHash(store, n);
        const proof = generateConsistencyProof(store, fromSize, n);
        const key = proof.map(hex).join();
        const otherFrom = 1 + ((fromSize + other) % (n - 1));
        if (otherFrom !== fromSize) {
          const same = generateConsistencyProof(store, otherFrom, n).map(hex).join() === key;
          expect(isConsistencyProofValid(otherFrom, n, computeRootHash(store, otherFrom), newRoot, proof)).toBe(same);
        }
        if (n - fromSize > 1) {
          const otherTo = fromSize + 1 + (other % (n - fromSize - 1));
          const same = generateConsistencyProof(store, fromSize, otherTo).map(hex).join() === key;
          expect(isConsistencyProofValid(fromSize, otherTo, oldRoot, computeRootHash(store, otherTo), proof)).toBe(
            same,
          );
        }
        expect(isConsistencyProofValid(fromSize, n, newRoot, oldRoot, proof)).toBe(false);
        expect(isConsistencyProofValid(fromSize, n, oldRoot, newRoot, proof.slice(1))).toBe(false);
        expect(isConsistencyProofValid(fromSize, n, oldRoot, newRoot, proof.slice(0, -1))).toBe(false);
        expect(isConsistencyProofValid(fromSize, n, oldRoot, newRoot, [...proof, newRoot])).toBe(false);
        expect(isConsistencyProofValid(fromSize, n, oldRoot, newRoot, [oldRoot, ...proof])).toBe(false);
        expect(isConsistencyProofValid(n, fromSize, newRoot, oldRoot, proof)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('edge sizes: empty proofs for m = 0 and m = n, refusal for m > n', () => {
    const store = buildStore(Array.from({ length: 5 }, (_, i) => new Uint8Array([i])));
    expect(generateConsistencyProof(store, 0, 5)).toEqual([]);
    expect(generateConsistencyProof(store, 5, 5)).toEqual([]);
    expect(codeOf(() => generateConsistencyProof(store, 6, 5))).toBe('BAD_REQUEST');
    const root = computeRootHash(store, 5);
    expect(isConsistencyProofValid(5, 5, root, root, [])).toBe(true);
    expect(isConsistencyProofValid(5, 5, root, computeRootHash(store, 4), [])).toBe(false);
    expect(isConsistencyProofValid(0, 5, hashEmpty(), root, [])).toBe(false);
  });
});

describe('decodeHashBase64: the quick read of a base64 hash', () => {
  const mangled = fc
    .tuple(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.nat(43),
      fc.constantFrom('B', 'f', '-', '_', '=', ' ', 'A', '/', '+', 'é', '\u4e00', '\0', '\u0141'),
    )
    .map(([bytes, at, char]) => {
      const text = Buffer.from(bytes).toString('base64');
      return text.slice(0, at) + char + text.slice(at + 1);
    });
  const text = fc.oneof(
    fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('base64')),
    mangled,
    fc.uint8Array({ minLength: 30, maxLength: 34 }).map((bytes) => Buffer.from(bytes).toString('base64')),
    fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
    fc.string({ minLength: 44, maxLength: 44 }),
  );

  it('property: reads exactly what decodeBase64Strict reads as 32 bytes, and nothing else', () => {
    fc.assert(
      fc.property(text, (candidate) => {
        const strict = decodeBase64Strict(candidate);
        const quick = decodeHashBase64(candidate);
        if (strict !== undefined && strict.byteLength === 32) expect(quick).toEqual(new Uint8Array(strict));
        else expect(quick).toBeUndefined();
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses a last symbol with unused bits set and a missing or doubled pad', () => {
    const canonical = Buffer.alloc(32, 0xab).toString('base64');
    expect(decodeHashBase64(canonical)).toEqual(new Uint8Array(32).fill(0xab));
    expect(decodeHashBase64(`${canonical.slice(0, 42)}t=`)).toBeUndefined(); // 't' has its low bits set
    expect(decodeHashBase64(canonical.slice(0, 43))).toBeUndefined();
    expect(decodeHashBase64(`${canonical.slice(0, 42)}==`)).toBeUndefined();
  });
});

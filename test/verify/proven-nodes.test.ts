// ProvenNodes accepts exactly the inclusion proofs verifyInclusionProof accepts (RFC 9162 §2.1.3.2), also once
// its cache holds the nodes of earlier proofs: every tree shape up to 40 leaves, every leaf, tampered proofs.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import {
  computeRootHash,
  generateInclusionProof,
  hashLeaf,
  isInclusionProofValid,
  type MemoryNodeStore,
} from '../../src/log/index.ts';
import { ProvenNodes } from '../../src/verify/proven-nodes.ts';
import { buildLeafStore } from './leaf-store.ts';

function accepts(nodes: ProvenNodes, leaf: Uint8Array, index: number, proof: Uint8Array[]): boolean {
  try {
    nodes.verify(leaf, index, proof);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolsealError);
    expect((error as ToolsealError).code).toBe('PROOF_INVALID');
    return false;
  }
}

/** Proofs that must fail: each hash changed, one dropped, one added, another leaf, another index. */
function tamperings(proof: Uint8Array[], leaf: Uint8Array, index: number): [Uint8Array, number, Uint8Array[]][] {
  const other = new Uint8Array(32).fill(5);
  const cases: [Uint8Array, number, Uint8Array[]][] = proof.map((_, at) => [
    leaf,
    index,
    proof.map((hash, i) => (i === at ? other : hash)),
  ]);
  cases.push([leaf, index, proof.slice(0, -1)], [leaf, index, [...proof, other]], [other, index, proof]);
  cases.push([leaf, index + 1, proof]);
  return cases;
}

describe('ProvenNodes', () => {
  it('agrees with verifyInclusionProof on every leaf of every tree up to 40 leaves, cold and warm', () => {
    for (let size = 1; size <= 40; size++) {
      const store = buildLeafStore(size);
      const root = computeRootHash(store, size);
      const nodes = new ProvenNodes(size, root);
      for (let round = 0; round < 2; round++) {
        for (let index = 0; index < size; index++) {
          const leaf = hashLeaf(Buffer.from(`leaf ${index}`));
          const proof = generateInclusionProof(store, index, size);
          expect(accepts(nodes, leaf, index, proof), `size ${size} index ${index}`).toBe(true);
          for (const [badLeaf, badIndex, badProof] of tamperings(proof, leaf, index)) {
            const expected = isInclusionProofValid(badLeaf, badIndex, size, badProof, root);
            expect(accepts(nodes, badLeaf, badIndex, badProof), `size ${size} index ${index}`).toBe(expected);
          }
        }
      }
    }
  });
});

describe('ProvenNodes, property: siblings and joined paths kept as proven nodes change nothing it accepts', () => {
  const other = new Uint8Array(32).fill(9);
  /** One check: a leaf and its genuine proof, or a tampered one (a hash changed, dropped, added or swapped; another
   * leaf; another index). */
  const check = fc.tuple(
    fc.nat(),
    fc.constantFrom('genuine', 'genuine', 'genuine', 'changed', 'dropped', 'added', 'swapped', 'leaf', 'index'),
    fc.nat(),
    fc.boolean(),
  );

  it('agrees with verifyInclusionProof on any order of genuine and tampered proofs, in trees up to 70 leaves', () => {
    const stores = new Map<number, { store: MemoryNodeStore; root: Uint8Array }>();
    const treeOf = (size: number) => {
      let tree = stores.get(size);
      if (tree === undefined) {
        const store = buildLeafStore(size);
        tree = { store, root: computeRootHash(store, size) };
        stores.set(size, tree);
      }
      return tree;
    };
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 70 }), fc.array(check, { minLength: 1, maxLength: 30 }), (size, checks) => {
        const { store, root } = treeOf(size);
        const nodes = new ProvenNodes(size, root);
        for (const [at, kind, which, unchanging] of checks) {
          const index = at % size;
          let leaf = hashLeaf(Buffer.from(`leaf ${index}`));
          let claimed = index;
          let proof = generateInclusionProof(store, index, size);
          const position = proof.length === 0 ? 0 : which % proof.length;
          if (kind === 'changed' && proof.length > 0) proof = proof.map((h, i) => (i === position ? other : h));
          if (kind === 'dropped') proof = proof.filter((_, i) => i !== position);
          if (kind === 'added') proof = [...proof.slice(0, position), other, ...proof.slice(position)];
          if (kind === 'swapped' && proof.length > 1) {
            const next = (position + 1) % proof.length;
            proof = proof.map((h, i) =>
              i === position ? (proof[next] as Uint8Array) : i === next ? (proof[position] as Uint8Array) : h,
            );
          }
          if (kind === 'leaf') leaf = hashLeaf(Buffer.from(`leaf ${(index + 1 + (which % size)) % size}`));
          if (kind === 'index') claimed = (index + 1 + (which % size)) % size;
          const expected = isInclusionProofValid(leaf, claimed, size, proof, root);
          let accepted = true;
          try {
            nodes.verify(leaf, claimed, proof, unchanging);
          } catch (error) {
            expect((error as ToolsealError).code).toBe('PROOF_INVALID');
            accepted = false;
          }
          expect(accepted, `size ${size} ${kind} leaf ${index} as ${claimed}`).toBe(expected);
        }
      }),
      { numRuns: 600 },
    );
  });

  it('needs no node hash for a leaf whose hash a verified proof held as its sibling, and one for its neighbour', () => {
    const size = 1000;
    const store = buildLeafStore(size);
    const nodes = new ProvenNodes(size, computeRootHash(store, size));
    const counted = nodes as unknown as { hashChildren: (l: Uint8Array, r: Uint8Array) => Uint8Array };
    const hashChildren = counted.hashChildren.bind(nodes);
    let hashes = 0;
    counted.hashChildren = (left, right) => {
      hashes++;
      return hashChildren(left, right);
    };
    const verifyLeaf = (index: number): number => {
      const before = hashes;
      nodes.verify(hashLeaf(Buffer.from(`leaf ${index}`)), index, generateInclusionProof(store, index, size));
      return hashes - before;
    };
    expect(verifyLeaf(500)).toBe(10); // a tree of 1000 leaves: 10 levels
    expect(verifyLeaf(501)).toBe(0); // leaf 501 was leaf 500's sibling
    expect(verifyLeaf(502)).toBe(1); // [502, 504) was a sibling of leaf 500's path
    expect(verifyLeaf(503)).toBe(0);
    expect(verifyLeaf(501)).toBe(0); // again: the leaf itself is proven
  });
});

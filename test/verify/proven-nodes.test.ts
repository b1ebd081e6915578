// ProvenNodes accepts exactly the inclusion proofs verifyInclusionProof accepts (RFC 9162 §2.1.3.2), also once
// its cache holds the nodes of earlier proofs: every tree shape up to 40 leaves, every leaf, tampered proofs.

import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import {
  computeRootHash,
  createMemoryNodeStore,
  generateInclusionProof,
  hashLeaf,
  isInclusionProofValid,
  type MemoryNodeStore,
} from '../../src/log/index.ts';
import { ProvenNodes } from '../../src/verify/proven-nodes.ts';

function storeOf(size: number): MemoryNodeStore {
  const store = createMemoryNodeStore();
  for (let i = 0; i < size; i++) store.append(hashLeaf(Buffer.from(`leaf ${i}`)));
  return store;
}

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
      const store = storeOf(size);
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

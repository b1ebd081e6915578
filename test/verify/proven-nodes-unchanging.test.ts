// ProvenNodes with `unchanging` proofs (a Verifier's own decoded hashes, kept uncopied and matched by identity) still
// accepts exactly what verifyInclusionProof accepts; the evidence reader's quick hash decoding is decodeBase64Strict.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64Strict, encodeBase64 } from '../../src/core/bytes.ts';
import type { ToolsealError } from '../../src/core/errors.ts';
import { computeRootHash, generateInclusionProof, hashLeaf, isInclusionProofValid } from '../../src/log/index.ts';
import { EvidenceMemory, readEvidence } from '../../src/verify/log-evidence.ts';
import { ProvenNodes } from '../../src/verify/proven-nodes.ts';
import { buildLeafStore } from './leaf-store.ts';

function accepts(nodes: ProvenNodes, leaf: Uint8Array, index: number, proof: Uint8Array[], unchanging: boolean) {
  try {
    nodes.verify(leaf, index, proof, unchanging);
    return true;
  } catch (error) {
    expect((error as ToolsealError).code).toBe('PROOF_INVALID');
    return false;
  }
}

describe('ProvenNodes with unchanging proofs', () => {
  it('agrees with verifyInclusionProof when proofs share hash arrays by identity, tampered or not', () => {
    for (const size of [1, 2, 3, 7, 8, 9, 31, 33]) {
      const store = buildLeafStore(size);
      const root = computeRootHash(store, size);
      const nodes = new ProvenNodes(size, root);
      // One array per distinct hash value, as the evidence reader hands them out.
      const interned = new Map<string, Uint8Array>();
      const intern = (hash: Uint8Array): Uint8Array => {
        const text = encodeBase64(hash);
        let kept = interned.get(text);
        if (kept === undefined) {
          kept = Uint8Array.from(hash);
          interned.set(text, kept);
        }
        return kept;
      };
      const other = intern(new Uint8Array(32).fill(7));
      for (let round = 0; round < 2; round++) {
        for (let index = 0; index < size; index++) {
          const leaf = hashLeaf(Buffer.from(`leaf ${index}`));
          const proof = generateInclusionProof(store, index, size).map(intern);
          expect(accepts(nodes, leaf, index, proof, true), `size ${size} index ${index}`).toBe(true);
          const bad: [Uint8Array, number, Uint8Array[]][] = proof.map((_, at) => [
            leaf,
            index,
            proof.map((hash, i) => (i === at ? other : hash)),
          ]);
          bad.push([leaf, index, proof.slice(0, -1)], [leaf, index, [...proof, other]], [other, index, proof]);
          bad.push([leaf, (index + 1) % Math.max(size, 2), proof], [leaf, index, [...proof].reverse()]);
          for (const [badLeaf, badIndex, badProof] of bad) {
            const valid = isInclusionProofValid(badLeaf, badIndex, size, badProof, root);
            expect(accepts(nodes, badLeaf, badIndex, badProof, true), `size ${size} index ${index}`).toBe(valid);
          }
        }
      }
    }
  });

  it('compares by content when the arrays differ: a copied proof under nodes kept uncopied', () => {
    const size = 16;
    const store = buildLeafStore(size);
    const nodes = new ProvenNodes(size, computeRootHash(store, size));
    const leaf = (i: number) => hashLeaf(Buffer.from(`leaf ${i}`));
    expect(accepts(nodes, leaf(3), 3, generateInclusionProof(store, 3, size), true)).toBe(true);
    const copied = generateInclusionProof(store, 2, size).map((hash) => Uint8Array.from(hash));
    expect(accepts(nodes, leaf(2), 2, copied, false)).toBe(true);
    copied[3] = new Uint8Array(32);
    expect(accepts(nodes, leaf(2), 2, copied, false)).toBe(false);
  });
});

describe('the evidence reader decodes proof hashes as decodeBase64Strict does', () => {
  const outcome = (run: () => Uint8Array[]) => {
    try {
      return { hashes: run().map((hash) => Buffer.from(hash).toString('hex')) };
    } catch (error) {
      return { error: (error as Error).message };
    }
  };
  const expectedOf = (texts: string[]) => {
    const decoded = texts.map((text) => decodeBase64Strict(text));
    const bad = decoded.indexOf(undefined);
    return bad >= 0
      ? { error: `proof hash ${bad} is not base64` }
      : { hashes: decoded.map((hash) => Buffer.from(hash as Uint8Array).toString('hex')) };
  };

  it('property: canonical, non-canonical, padded wrongly, other alphabets and other lengths', () => {
    const text = fc.oneof(
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('base64')),
      fc
        .tuple(
          fc.uint8Array({ minLength: 32, maxLength: 32 }),
          fc.nat(43),
          fc.constantFrom('B', 'f', '-', '_', '=', ' ', 'A', 'é', '\u4e00', '\0'),
        )
        .map(([bytes, at, char]) => {
          const t = Buffer.from(bytes).toString('base64');
          return t.slice(0, at) + char + t.slice(at + 1);
        }),
      fc.uint8Array({ minLength: 31, maxLength: 33 }).map((bytes) => Buffer.from(bytes).toString('base64')),
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
    );
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 4 }), (texts) => {
        const inclusion = { index: 0, hashes: texts, checkpoint: 'x' };
        const expected = expectedOf(texts);
        expect(outcome(() => readEvidence(inclusion).hashes)).toEqual(expected);
        const memory = new EvidenceMemory();
        const reader = (inclusion: Parameters<EvidenceMemory['read']>[0]) => memory.read(inclusion);
        expect(outcome(() => reader(inclusion).hashes)).toEqual(expected);
        expect(outcome(() => reader(inclusion).hashes)).toEqual(expected);
      }),
      { numRuns: 1500 },
    );
  });

  it('marks only evidence of base64 texts read by a reader as unchanging', () => {
    const hash = Buffer.alloc(32, 1).toString('base64');
    const memory = new EvidenceMemory();
    const reader = (inclusion: Parameters<EvidenceMemory['read']>[0]) => memory.read(inclusion);
    expect(reader({ index: 0, hashes: [hash, hash], checkpoint: 'x' }).unchanging).toBe(true);
    expect(reader({ index: 0, hashes: [hash, new Uint8Array(32)], checkpoint: 'x' }).unchanging).toBe(false);
    expect(readEvidence({ index: 0, hashes: [hash], checkpoint: 'x' }).unchanging).toBe(false);
  });

  it('answers a text equal to the one at its position in the previous proof with those bytes, decodes others', () => {
    const text = (fill: number) => Buffer.alloc(32, fill).toString('base64');
    const memory = new EvidenceMemory();
    const reader = (inclusion: Parameters<EvidenceMemory['read']>[0]) => memory.read(inclusion);
    const first = reader({ index: 0, hashes: [text(1), text(2), text(3)], checkpoint: 'x' }).hashes;
    const second = reader({ index: 1, hashes: [text(4), text(2), `${text(3)}`], checkpoint: 'x' }).hashes;
    expect(second[1]).toBe(first[1]);
    expect(second[2]).toBe(first[2]);
    expect(Buffer.from(second[0]!).equals(Buffer.alloc(32, 4))).toBe(true);
    // Another position, or a proof of arrays in between: decoded again, to the same bytes.
    const moved = reader({ index: 2, hashes: [text(2)], checkpoint: 'x' }).hashes;
    expect(moved[0]).not.toBe(second[1]);
    expect(moved[0]).toEqual(second[1]);
    reader({ index: 3, hashes: [new Uint8Array(32)], checkpoint: 'x' });
    const after = reader({ index: 4, hashes: [text(2)], checkpoint: 'x' }).hashes;
    expect(after[0]).toBe(moved[0]);
  });

  it('property: a reader fed proofs (texts repeated, moved, changed; arrays) reads each as readEvidence does', () => {
    const texts = fc.constantFrom(...[0, 1, 2, 3].map((fill) => Buffer.alloc(32, fill).toString('base64')), 'x', '');
    const hash = fc.oneof(texts, fc.constant(new Uint8Array(32).fill(7)));
    fc.assert(
      fc.property(fc.array(fc.array(hash, { maxLength: 5 }), { minLength: 1, maxLength: 6 }), (proofs) => {
        const memory = new EvidenceMemory();
        const reader = (inclusion: Parameters<EvidenceMemory['read']>[0]) => memory.read(inclusion);
        for (const hashes of proofs) {
          const inclusion = { index: 0, hashes, checkpoint: 'x' };
          expect(outcome(() => reader(inclusion).hashes)).toEqual(outcome(() => readEvidence(inclusion).hashes));
        }
      }),
      { numRuns: 500 },
    );
  });
});

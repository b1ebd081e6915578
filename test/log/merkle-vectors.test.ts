// transparency-dev/merkle test data (test/vectors/merkle, see SOURCE.md): roots, inclusion and consistency proofs.

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  computeRootHash,
  createMemoryNodeStore,
  generateConsistencyProof,
  generateInclusionProof,
  hashLeaf,
  isConsistencyProofValid,
  isInclusionProofValid,
  verifyConsistencyProof,
  verifyInclusionProof,
} from '../../src/log/index.ts';
import { codeOf, fromBase64, hex, naiveRootHash } from './helpers.ts';

const VECTORS = fileURLToPath(new URL('../vectors/merkle/', import.meta.url));

function listJsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory()
        ? listJsonFiles(join(dir, entry.name))
        : entry.name.endsWith('.json')
          ? [join(dir, entry.name)]
          : [],
    )
    .sort();
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
}

function decodeProof(value: unknown): Uint8Array[] {
  return value === null ? [] : (value as string[]).map(fromBase64);
}

describe('roots.json', () => {
  const { leafInputsHex, rootsHex } = readJson(join(VECTORS, 'roots.json')) as {
    leafInputsHex: string[];
    rootsHex: string[];
  };
  const leaves = leafInputsHex.map((h) => new Uint8Array(Buffer.from(h, 'hex')));

  it('has a root for every N = 0..8', () => {
    expect(rootsHex).toHaveLength(9);
    expect(leaves).toHaveLength(8);
  });

  rootsHex.forEach((want, n) => {
    it(`root of the first ${n} leaves is byte-exact (node store and naive MTH)`, () => {
      const store = createMemoryNodeStore();
      for (const leaf of leaves.slice(0, n)) store.append(hashLeaf(leaf));
      expect(hex(computeRootHash(store, n))).toBe(want);
      expect(hex(naiveRootHash(leaves.slice(0, n)))).toBe(want);
    });
  });

  it('roots of every smaller size are computable from the full store', () => {
    const store = createMemoryNodeStore();
    for (const leaf of leaves) store.append(hashLeaf(leaf));
    rootsHex.forEach((want, n) => {
      expect(hex(computeRootHash(store, n))).toBe(want);
    });
  });
});

describe('inclusion vectors', () => {
  const files = listJsonFiles(join(VECTORS, 'inclusion'));
  it('found the inclusion vectors', () => expect(files.length).toBeGreaterThan(90));

  for (const file of files) {
    const name = relative(VECTORS, file);
    it(name, () => {
      const v = readJson(file);
      const run = (): void =>
        verifyInclusionProof(
          fromBase64(v.leafHash as string),
          v.leafIdx as number,
          v.treeSize as number,
          decodeProof(v.proof),
          fromBase64(v.root as string),
        );
      if (v.wantErr === true) {
        expect(codeOf(run)).toBe('PROOF_INVALID');
      } else {
        expect(codeOf(run)).toBeUndefined();
      }
      expect(
        isInclusionProofValid(
          fromBase64(v.leafHash as string),
          v.leafIdx as number,
          v.treeSize as number,
          decodeProof(v.proof),
          fromBase64(v.root as string),
        ),
      ).toBe(v.wantErr !== true);
    });
  }
});

describe('consistency vectors', () => {
  const files = listJsonFiles(join(VECTORS, 'consistency'));
  it('found the consistency vectors', () => expect(files.length).toBeGreaterThan(90));

  for (const file of files) {
    const name = relative(VECTORS, file);
    it(name, () => {
      const v = readJson(file);
      const args = [
        v.size1 as number,
        v.size2 as number,
        fromBase64(v.root1 as string),
        fromBase64(v.root2 as string),
        decodeProof(v.proof),
      ] as const;
      const run = (): void => verifyConsistencyProof(...args);
      if (v.wantErr === true) {
        expect(codeOf(run)).toBe('PROOF_INVALID');
      } else {
        expect(codeOf(run)).toBeUndefined();
      }
      expect(isConsistencyProofValid(...args)).toBe(v.wantErr !== true);
    });
  }
});

describe('generated proofs equal the happy-path vectors built over the roots.json leaves', () => {
  const { leafInputsHex, rootsHex } = readJson(join(VECTORS, 'roots.json')) as {
    leafInputsHex: string[];
    rootsHex: string[];
  };
  const store = createMemoryNodeStore();
  for (const h of leafInputsHex) store.append(hashLeaf(new Uint8Array(Buffer.from(h, 'hex'))));
  const happy = (kind: string): string[] =>
    listJsonFiles(join(VECTORS, kind)).filter((f) => f.endsWith('happy-path.json'));

  for (const file of happy('inclusion')) {
    const v = readJson(file);
    const size = v.treeSize as number;
    if (hex(fromBase64(v.root as string)) !== rootsHex[size]) continue;
    it(`inclusion ${relative(VECTORS, file)}: leaf ${String(v.leafIdx)} of ${size}`, () => {
      expect(generateInclusionProof(store, v.leafIdx as number, size).map(hex)).toEqual(decodeProof(v.proof).map(hex));
    });
  }

  for (const file of happy('consistency')) {
    const v = readJson(file);
    const [m, n] = [v.size1 as number, v.size2 as number];
    if (hex(fromBase64(v.root1 as string)) !== rootsHex[m] || hex(fromBase64(v.root2 as string)) !== rootsHex[n])
      continue;
    it(`consistency ${relative(VECTORS, file)}: ${m} -> ${n}`, () => {
      expect(generateConsistencyProof(store, m, n).map(hex)).toEqual(decodeProof(v.proof).map(hex));
    });
  }
});

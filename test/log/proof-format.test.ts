// C2SP tlog-proof v1: format, parse, offline verification.

import { describe, expect, it } from 'vitest';
import {
  computeRootHash,
  formatCheckpoint,
  formatTlogProof,
  formatVerifierString,
  generateInclusionProof,
  hashLeaf,
  parseTlogProof,
  signNote,
  verifyTlogProof,
} from '../../src/log/index.ts';
import { buildStore, codeOf, flipBit, hex } from './helpers.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

const ORIGIN = 'toolseal.example/log';
const { privateKey, publicKey } = generateEd25519KeyPair();
const verifier = formatVerifierString(ORIGIN, publicKey);
const leaves = Array.from({ length: 11 }, (_, i) => new TextEncoder().encode(`entry ${i}`));
const store = buildStore(leaves);
const checkpoint = signNote(formatCheckpoint({ origin: ORIGIN, size: 11, rootHash: computeRootHash(store, 11) }), {
  name: ORIGIN,
  privateKey,
});

describe('tlog-proof text', () => {
  it('has the layout of the spec', () => {
    const proof = generateInclusionProof(store, 6, 11);
    const text = formatTlogProof({ index: 6, proof, checkpoint });
    const lines = text.split('\n');
    expect(lines[0]).toBe('c2sp.org/tlog-proof@v1');
    expect(lines[1]).toBe('index 6');
    expect(lines.slice(2, 2 + proof.length)).toEqual(proof.map((h) => Buffer.from(h).toString('base64')));
    expect(lines[2 + proof.length]).toBe('');
    expect(text.endsWith(`\n\n${checkpoint}`)).toBe(true);
  });

  it('writes the optional extra line before the index', () => {
    const text = formatTlogProof({ index: 0, proof: [], checkpoint, extra: new TextEncoder().encode('vrf') });
    expect(text.startsWith('c2sp.org/tlog-proof@v1\nextra dnJm\nindex 0\n\n')).toBe(true);
    const parsed = parseTlogProof(text);
    expect(Buffer.from(parsed.extra!).toString()).toBe('vrf');
  });

  it('round-trips for every leaf', () => {
    for (let index = 0; index < 11; index++) {
      const proof = generateInclusionProof(store, index, 11);
      const parsed = parseTlogProof(formatTlogProof({ index, proof, checkpoint }));
      expect(parsed.index).toBe(index);
      expect(parsed.proof.map(hex)).toEqual(proof.map(hex));
      expect(parsed.checkpoint).toBe(checkpoint);
      expect(parsed.extra).toBeUndefined();
    }
  });

  it.each([
    ['a wrong header', (t: string) => t.replace('tlog-proof@v1', 'tlog-proof@v2')],
    ['no index line', (t: string) => t.replace('index 6\n', '')],
    ['a leading zero index', (t: string) => t.replace('index 6', 'index 06')],
    ['a negative index', (t: string) => t.replace('index 6', 'index -6')],
    ['a short hash', (t: string) => t.replace(/\nindex 6\n[^\n]+\n/, '\nindex 6\nAAAA\n')],
    ['garbage base64', (t: string) => t.replace(/\nindex 6\n[^\n]+\n/, '\nindex 6\n!!!\n')],
    ['no checkpoint', (t: string) => t.slice(0, t.indexOf('\n\n') + 2)],
    ['no empty line', (t: string) => t.replace(/\n\n/, '\n')],
    ['bad extra', (t: string) => t.replace('index 6', 'extra ***\nindex 6')],
  ])('parse refuses %s', (_, mangle) => {
    const text = formatTlogProof({ index: 6, proof: generateInclusionProof(store, 6, 11), checkpoint });
    expect(codeOf(() => parseTlogProof(mangle(text)))).toBe('PROOF_INVALID');
  });
});

describe('verifyTlogProof', () => {
  it('verifies every leaf offline', () => {
    for (let index = 0; index < 11; index++) {
      const text = formatTlogProof({ index, proof: generateInclusionProof(store, index, 11), checkpoint });
      const verified = verifyTlogProof(text, hashLeaf(leaves[index]!), verifier, { origin: ORIGIN });
      expect(verified.index).toBe(index);
      expect(verified.checkpoint.size).toBe(11);
    }
  });

  it('refuses a wrong leaf, a wrong index, a tampered proof, an unsigned checkpoint or another log', () => {
    const proof = generateInclusionProof(store, 6, 11);
    const text = formatTlogProof({ index: 6, proof, checkpoint });
    expect(codeOf(() => verifyTlogProof(text, hashLeaf(leaves[5]!), verifier))).toBe('PROOF_INVALID');
    expect(codeOf(() => verifyTlogProof(text.replace('index 6', 'index 7'), hashLeaf(leaves[6]!), verifier))).toBe(
      'PROOF_INVALID',
    );
    const tampered = formatTlogProof({
      index: 6,
      proof: proof.map((h, i) => (i === 0 ? flipBit(h, 0) : h)),
      checkpoint,
    });
    expect(codeOf(() => verifyTlogProof(tampered, hashLeaf(leaves[6]!), verifier))).toBe('PROOF_INVALID');
    const otherKey = formatVerifierString(ORIGIN, generateEd25519KeyPair().publicKey);
    expect(codeOf(() => verifyTlogProof(text, hashLeaf(leaves[6]!), otherKey))).toBe('UNKNOWN_KEY');
    expect(codeOf(() => verifyTlogProof(text.replace('\n11\n', '\n12\n'), hashLeaf(leaves[6]!), verifier))).toBe(
      'SIGNATURE_INVALID',
    );
    expect(codeOf(() => verifyTlogProof(text, hashLeaf(leaves[6]!), verifier, { origin: 'other.example/log' }))).toBe(
      'PROOF_INVALID',
    );
  });

  it('format refuses bad input', () => {
    expect(codeOf(() => formatTlogProof({ index: -1, proof: [], checkpoint }))).toBe('BAD_REQUEST');
    expect(codeOf(() => formatTlogProof({ index: 0, proof: [new Uint8Array(31)], checkpoint }))).toBe('BAD_REQUEST');
    expect(codeOf(() => formatTlogProof({ index: 0, proof: [], checkpoint: 'no newline' }))).toBe('BAD_REQUEST');
  });
});

// C2SP tlog-checkpoint: format/parse, signed checkpoints, and the never-fork guard.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  assertCheckpointConsistent,
  computeRootHash,
  formatCheckpoint,
  formatVerifierString,
  generateConsistencyProof,
  hashEmpty,
  parseCheckpoint,
  signCheckpoint,
  verifyCheckpoint,
} from '../../src/log/index.ts';
import { buildStore, codeOf, flipBit, hex } from './helpers.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

const ORIGIN = 'toolseal.example/log';
const root = (byte: number): Uint8Array => new Uint8Array(32).fill(byte);

describe('checkpoint text', () => {
  it('formats the three lines of the spec', () => {
    const rootHash = new Uint8Array(Buffer.from('CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=', 'base64'));
    expect(formatCheckpoint({ origin: 'example.com/behind-the-sofa', size: 20852163, rootHash })).toBe(
      'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n',
    );
  });

  it('round-trips, with and without extension lines', () => {
    fc.assert(
      fc.property(
        fc
          .string({ minLength: 1, maxLength: 30 })
          .filter((s) => !/[\u0000-\u001f]/.test(s) && !/[\uD800-\uDFFF]/.test(s)),
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.array(fc.stringMatching(/^[a-z0-9 ]{1,10}$/), { maxLength: 3 }),
        (origin, size, rootHash, extensions) => {
          const checkpoint =
            extensions.length > 0 ? { origin, size, rootHash, extensions } : { origin, size, rootHash };
          const parsed = parseCheckpoint(formatCheckpoint(checkpoint));
          expect({ ...parsed, rootHash: hex(parsed.rootHash) }).toEqual({ ...checkpoint, rootHash: hex(rootHash) });
        },
      ),
    );
  });

  it.each([
    ['two lines', `${ORIGIN}\n1\n`],
    ['no final newline', `${ORIGIN}\n1\n${Buffer.from(root(1)).toString('base64')}`],
    ['a leading zero', `${ORIGIN}\n01\n${Buffer.from(root(1)).toString('base64')}\n`],
    ['a negative size', `${ORIGIN}\n-1\n${Buffer.from(root(1)).toString('base64')}\n`],
    ['an unsafe size', `${ORIGIN}\n9007199254740993\n${Buffer.from(root(1)).toString('base64')}\n`],
    ['a short root', `${ORIGIN}\n1\n${Buffer.from(root(1).slice(1)).toString('base64')}\n`],
    ['an unpadded root', `${ORIGIN}\n1\n${Buffer.from(root(1)).toString('base64').replace('=', '')}\n`],
    ['an empty origin', `\n1\n${Buffer.from(root(1)).toString('base64')}\n`],
    ['an empty extension line', `${ORIGIN}\n1\n${Buffer.from(root(1)).toString('base64')}\n\n`],
  ])('parse refuses %s', (_, text) => {
    expect(codeOf(() => parseCheckpoint(text))).toBe('PROOF_INVALID');
  });

  it('format refuses bad fields', () => {
    expect(codeOf(() => formatCheckpoint({ origin: '', size: 1, rootHash: root(1) }))).toBe('BAD_REQUEST');
    expect(codeOf(() => formatCheckpoint({ origin: 'a\nb', size: 1, rootHash: root(1) }))).toBe('BAD_REQUEST');
    expect(codeOf(() => formatCheckpoint({ origin: ORIGIN, size: -1, rootHash: root(1) }))).toBe('BAD_REQUEST');
    expect(codeOf(() => formatCheckpoint({ origin: ORIGIN, size: 1, rootHash: root(1).slice(1) }))).toBe('BAD_REQUEST');
    expect(codeOf(() => formatCheckpoint({ origin: ORIGIN, size: 1, rootHash: root(1), extensions: [''] }))).toBe(
      'BAD_REQUEST',
    );
  });
});

describe('signed checkpoints', () => {
  const { privateKey, publicKey } = generateEd25519KeyPair();
  const signer = { name: ORIGIN, privateKey };
  const verifier = formatVerifierString(ORIGIN, publicKey);

  it('sign then verify returns the checkpoint', () => {
    const store = buildStore([new Uint8Array([1]), new Uint8Array([2]), new Uint8Array([3])]);
    const checkpoint = { origin: ORIGIN, size: 3, rootHash: computeRootHash(store, 3) };
    const note = signCheckpoint(checkpoint, signer, undefined, []);
    const verified = verifyCheckpoint(note, verifier, { origin: ORIGIN });
    expect(verified.size).toBe(3);
    expect(hex(verified.rootHash)).toBe(hex(checkpoint.rootHash));
    expect(codeOf(() => verifyCheckpoint(note, verifier, { origin: 'other.example/log' }))).toBe('PROOF_INVALID');
    expect(codeOf(() => verifyCheckpoint(note.replace('\n3\n', '\n4\n'), verifier))).toBe('SIGNATURE_INVALID');
  });

  it('signCheckpoint refuses to sign a rollback', () => {
    expect(
      codeOf(() =>
        signCheckpoint({ origin: ORIGIN, size: 2, rootHash: root(2) }, signer, { size: 3, rootHash: root(3) }, []),
      ),
    ).toBe('LOG_INCONSISTENT');
  });
});

describe('assertCheckpointConsistent', () => {
  const store = buildStore(Array.from({ length: 20 }, (_, i) => new Uint8Array([i])));
  const head = (size: number) => ({ size, rootHash: computeRootHash(store, size) });

  it('accepts the first checkpoint and growth with a valid proof', () => {
    expect(codeOf(() => assertCheckpointConsistent(undefined, head(7), []))).toBeUndefined();
    expect(codeOf(() => assertCheckpointConsistent(undefined, { size: 0, rootHash: hashEmpty() }, []))).toBeUndefined();
    expect(codeOf(() => assertCheckpointConsistent(head(0), head(7), []))).toBeUndefined();
    for (let from = 1; from < 20; from++) {
      for (let to = from; to <= 20; to++) {
        expect(
          codeOf(() => assertCheckpointConsistent(head(from), head(to), generateConsistencyProof(store, from, to))),
        ).toBeUndefined();
      }
    }
  });

  it('refuses a rollback', () => {
    expect(codeOf(() => assertCheckpointConsistent(head(7), head(6), []))).toBe('LOG_INCONSISTENT');
    expect(codeOf(() => assertCheckpointConsistent(head(7), { size: 0, rootHash: hashEmpty() }, []))).toBe(
      'LOG_INCONSISTENT',
    );
  });

  it('refuses a fork: same size, different root', () => {
    expect(
      codeOf(() => assertCheckpointConsistent(head(7), { size: 7, rootHash: flipBit(head(7).rootHash, 0) }, [])),
    ).toBe('LOG_INCONSISTENT');
    expect(codeOf(() => assertCheckpointConsistent(head(7), head(7), []))).toBeUndefined();
  });

  it('refuses a bad, empty or mismatched consistency proof', () => {
    const proof = generateConsistencyProof(store, 7, 12);
    expect(
      codeOf(() =>
        assertCheckpointConsistent(
          head(7),
          head(12),
          proof.map((h, i) => (i === 1 ? flipBit(h, 9) : h)),
        ),
      ),
    ).toBe('LOG_INCONSISTENT');
    expect(codeOf(() => assertCheckpointConsistent(head(7), head(12), []))).toBe('LOG_INCONSISTENT');
    expect(codeOf(() => assertCheckpointConsistent(head(7), head(13), proof))).toBe('LOG_INCONSISTENT');
    // A forked tree of size 12 that keeps the first 7 leaves but changes the rest.
    const fork = buildStore([
      ...Array.from({ length: 7 }, (_, i) => new Uint8Array([i])),
      ...Array.from({ length: 5 }, () => new Uint8Array([99])),
    ]);
    expect(
      codeOf(() => assertCheckpointConsistent(head(7), { size: 12, rootHash: computeRootHash(fork, 12) }, proof)),
    ).toBe('LOG_INCONSISTENT');
    expect(
      codeOf(() =>
        assertCheckpointConsistent(
          head(7),
          { size: 12, rootHash: computeRootHash(fork, 12) },
          generateConsistencyProof(fork, 7, 12),
        ),
      ),
    ).toBeUndefined();
    // A history rewrite: a different size-7 tree cannot be extended to ours.
    const rewritten = buildStore(Array.from({ length: 12 }, (_, i) => new Uint8Array([i === 3 ? 42 : i])));
    expect(
      codeOf(() => assertCheckpointConsistent({ size: 7, rootHash: computeRootHash(rewritten, 7) }, head(12), proof)),
    ).toBe('LOG_INCONSISTENT');
  });

  it('refuses malformed heads and a proof where none applies', () => {
    expect(codeOf(() => assertCheckpointConsistent(undefined, { size: 0, rootHash: root(1) }, []))).toBe(
      'LOG_INCONSISTENT',
    );
    expect(codeOf(() => assertCheckpointConsistent(undefined, { size: 3, rootHash: root(1).slice(1) }, []))).toBe(
      'LOG_INCONSISTENT',
    );
    expect(codeOf(() => assertCheckpointConsistent(undefined, head(3), [root(1)]))).toBe('LOG_INCONSISTENT');
    expect(codeOf(() => assertCheckpointConsistent(head(3), head(3), [root(1)]))).toBe('LOG_INCONSISTENT');
    expect(codeOf(() => assertCheckpointConsistent(head(3), { size: 2.5, rootHash: root(1) }, []))).toBe(
      'LOG_INCONSISTENT',
    );
  });

  it('keeps the proof failure as the cause', () => {
    try {
      assertCheckpointConsistent(head(7), head(12), []);
      expect.unreachable();
    } catch (error) {
      expect((error as Error).cause).toMatchObject({ code: 'PROOF_INVALID' });
    }
  });
});

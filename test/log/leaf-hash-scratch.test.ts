// hashLeaf and hashChildren (RFC 6962 §2.1) hash through a reused buffer up to 16 KiB: the same digests as a fresh
// concatenation at every size around that bound, and results that later calls do not change.

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashChildren, hashLeaf } from '../../src/log/index.ts';

const sha256 = (...parts: Uint8Array[]): Buffer => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

describe('hashLeaf and hashChildren through the scratch buffer', () => {
  it('hash 0x00 || data for sizes around the scratch size, and keep earlier results intact', () => {
    const earlier: [Uint8Array, Buffer][] = [];
    for (const size of [0, 1, 859, 4370, 16 * 1024 - 2, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 70_000]) {
      const data = Buffer.alloc(size, size % 251);
      const leaf = hashLeaf(data);
      expect(Buffer.from(leaf)).toEqual(sha256(Uint8Array.of(0), data));
      earlier.push([leaf, sha256(Uint8Array.of(0), data)]);
    }
    for (const [leaf, expected] of earlier) expect(Buffer.from(leaf)).toEqual(expected);
  });

  it('property: any data, and any children, including views into larger buffers', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), fc.nat(8), (bytes, offset) => {
        const backing = new Uint8Array(bytes.byteLength + offset + 8).fill(0xee);
        backing.set(bytes, offset);
        const view = backing.subarray(offset, offset + bytes.byteLength);
        expect(Buffer.from(hashLeaf(view))).toEqual(sha256(Uint8Array.of(0), bytes));
        const left = hashLeaf(view);
        const right = hashLeaf(bytes.subarray(0, bytes.byteLength >> 1));
        expect(Buffer.from(hashChildren(left, right))).toEqual(sha256(Uint8Array.of(1), left, right));
      }),
      { numRuns: 500 },
    );
  });
});

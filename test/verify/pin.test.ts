// The pin stage: a pinned digest admits exactly those bytes.

import { describe, expect, it } from 'vitest';
import type { Sha256Digest } from '../../src/core/digest.ts';
import { checkPinnedDigest, checkServedPin } from '../../src/verify/pin.ts';
import { throwsWithCode } from './helpers.ts';

const A = `sha256:${'a'.repeat(64)}` as Sha256Digest;
const B = `sha256:${'b'.repeat(64)}` as Sha256Digest;
const NAME = 'io.github.acme/payments';

describe('checkPinnedDigest', () => {
  it('passes without a pin or with the same digest', () => {
    expect(() => checkPinnedDigest(A, {})).not.toThrow();
    expect(() => checkPinnedDigest(A, { name: NAME, version: '1.2.0', digest: A })).not.toThrow();
  });

  it('another digest is PIN_MISMATCH, naming name@version when both are known', () => {
    const named = throwsWithCode(
      () => checkPinnedDigest(A, { name: NAME, version: '1.2.0', digest: B }),
      'PIN_MISMATCH',
    );
    expect(named.message).toBe(`the bytes have digest ${A} but ${NAME}@1.2.0 is pinned to ${B}`);
    const unnamed = throwsWithCode(() => checkPinnedDigest(A, { name: NAME, digest: B }), 'PIN_MISMATCH');
    expect(unnamed.message).toBe(`the bytes have digest ${A} but it is pinned to ${B}`);
  });
});

describe('checkServedPin', () => {
  it('passes without a pin or with the same digest', () => {
    expect(() => checkServedPin(A, undefined, { kind: 'digest', digest: B })).not.toThrow();
    expect(() => checkServedPin(A, A, { kind: 'version', name: NAME, version: '1.2.0' })).not.toThrow();
  });

  it('other served bytes are PIN_MISMATCH, naming the reference', () => {
    const byVersion = throwsWithCode(
      () => checkServedPin(A, B, { kind: 'version', name: NAME, version: '1.2.0' }),
      'PIN_MISMATCH',
    );
    expect(byVersion.message).toBe(
      `the registry served bytes with digest ${A} for ${NAME}@1.2.0, which is pinned to ${B}`,
    );
    const byDigest = throwsWithCode(() => checkServedPin(A, B, { kind: 'digest', digest: A }), 'PIN_MISMATCH');
    expect(byDigest.message).toBe(`the registry served bytes with digest ${A} for ${A}, which is pinned to ${B}`);
  });
});

// SHA-256 digests written `sha256:<64 lowercase hex>` (the OCI / in-toto DigestSet form), always recomputed from bytes.

import { hash } from 'node:crypto';

export type Sha256Digest = `sha256:${string}`;

/** One-shot SHA-256 (no Hash object per call: it runs on every read of the HTTP read path). */
export function computeSha256Hex(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'hex');
}

export function computeDigest(bytes: Uint8Array): Sha256Digest {
  return `sha256:${computeSha256Hex(bytes)}`;
}

const digestPattern = /^sha256:[0-9a-f]{64}$/;

export function isSha256Digest(value: unknown): value is Sha256Digest {
  return typeof value === 'string' && digestPattern.test(value);
}

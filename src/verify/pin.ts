// Pin stage: a pinned digest (lockfile, configuration; FIPS 180-4 sha256) admits exactly those bytes, whatever is signed.

import type { Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { formatManifestRef, type ManifestRef } from '../protocol/manifest-ref.ts';

/** What a pin is checked against: the pinned digest and, for the message, the name@version it pins. */
export interface PinExpectation {
  name?: string;
  version?: string;
  /** The pinned digest; undefined is no pin. */
  digest?: Sha256Digest;
}

/** PIN_MISMATCH when `expected.digest` is set and `digest` (recomputed from the bytes) is another one. */
export function checkPinnedDigest(digest: Sha256Digest, expected: PinExpectation): void {
  if (expected.digest === undefined || expected.digest === digest) return;
  const label =
    expected.name !== undefined && expected.version !== undefined
      ? formatManifestRef(expected.name, expected.version)
      : 'it';
  throw new ToolsealError(
    'PIN_MISMATCH',
    `the bytes have digest ${digest} but ${label} is pinned to ${expected.digest}`,
  );
}

/**
 * PIN_MISMATCH when `pin` is set and the registry served bytes with digest `actual` for `target`: checked as soon
 * as the bytes arrive, since a pin needs no registry evidence.
 */
export function checkServedPin(actual: Sha256Digest, pin: Sha256Digest | undefined, target: ManifestRef): void {
  if (pin === undefined || actual === pin) return;
  const what = target.kind === 'version' ? formatManifestRef(target.name, target.version) : target.digest;
  throw new ToolsealError(
    'PIN_MISMATCH',
    `the registry served bytes with digest ${actual} for ${what}, which is pinned to ${pin}`,
  );
}

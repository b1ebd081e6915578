// Attestation stage: a flattened JWS (RFC 7515 §7.2.2, EdDSA per RFC 8037) signed by a usable key of the JWKS.

import {
  selectUsableKeys,
  verifyAttestationSync,
  type AttestationExpectation,
  type Jwks,
  type JwksKey,
  type VerifiedAttestation,
} from '../attest/index.ts';
import type { Sha256Digest } from '../core/digest.ts';

export interface AttestedSubject extends AttestationExpectation {
  /** sha256 of the bytes, recomputed by the caller: the statement's subject digest must be this one. */
  digest: Sha256Digest;
}

/**
 * Verify `attestation` against the usable keys of `jwks` only (selectUsableKeys: Ed25519 public keys named by
 * their RFC 7638 thumbprint; a key without a numeric nbf is never valid). Throws UNKNOWN_KEY (no usable key with
 * its kid), SIGNATURE_INVALID (not a well-formed JWS, or a bad signature), KEY_NOT_VALID (storedAt outside the
 * key's nbf/exp), SUBJECT_MISMATCH or DIGEST_MISMATCH (the statement is for another name@version or digest).
 */
export function verifyAttestationWithKeys(
  attestation: Uint8Array,
  jwks: Jwks | readonly JwksKey[],
  subject: AttestedSubject,
): VerifiedAttestation {
  return verifyAttestationWithUsableKeys(attestation, selectUsableKeys(jwks).jwks, subject);
}

/** verifyAttestationWithKeys for keys that already went through selectUsableKeys (a Verifier selects them once). */
export function verifyAttestationWithUsableKeys(
  attestation: Uint8Array,
  usable: Jwks,
  subject: AttestedSubject,
): VerifiedAttestation {
  return verifyAttestationSync(attestation, usable, subject);
}

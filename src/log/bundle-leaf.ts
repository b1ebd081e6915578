// The bundle leaf (issue 26): the Rekor v2 hashedrekord v0.0.2 entry (sigstore/protobuf-specs rekor/v2) a Sigstore
// bundle's DSSE signature is logged as, checked against the in-toto Statement it signs (DSSE protocol.md PAE) and the
// registry's P-256 bundle keys (RFC 7518 §3.4). Pure: the audit walking the log and fsck over the store both call
// checkBundleLeaf; neither trusts the leaf's own public key without finding it among the published bundle keys.

import { createHash } from 'node:crypto';
import { encodePae, IN_TOTO_PAYLOAD_TYPE, verifyP256 } from '../attest/dsse.ts';
import { exportSpkiDer, selectUsableBundleKeys, type UsableBundleKey } from '../attest/p256-jwk.ts';
import { type HashedRekordFacts, parseHashedRekordBody } from '../attest/rekor-entry.ts';
import { encodeHex, equalBytes } from '../core/bytes.ts';

/** Why a bundle leaf is refused: its form, the statement it names, the key, the signature, the key's window. */
export type BundleLeafProblemCode = 'BUNDLE_ENTRY_INVALID' | 'UNKNOWN_KEY' | 'SIGNATURE_INVALID' | 'KEY_NOT_VALID';

export type BundleLeafCheck =
  | { ok: true; kid: string; facts: HashedRekordFacts }
  | { ok: false; code: BundleLeafProblemCode; message: string };

export interface BundleLeafInput {
  /** The leaf data exactly as logged (the JCS hashedrekord v0.0.2 body). */
  leaf: Uint8Array;
  /** The exact statement bytes the bundle's DSSE envelope carries (the JWS payload of the same version). */
  statement: Uint8Array;
  /** The registry's bundle keys: a JWKS or a list of JWKs; only P-256 keys named by their thumbprint count. */
  bundleKeys: unknown;
  /**
   * When the bundle was signed (seconds since the epoch; the bundle's integratedTime), if known: the key must have
   * been valid then (nbf ≤ at < exp). The log alone does not say it, so an auditor walking entries passes none.
   */
  at?: number;
}

/**
 * SHA-256 of PAE("application/vnd.in-toto+json", statement), hex: the digest a bundle leaf records for `statement`,
 * and the key an auditor pairs bundle leaves with attestations by.
 */
export function computeStatementPaeDigest(statement: Uint8Array): string {
  return createHash('sha256').update(encodePae(IN_TOTO_PAYLOAD_TYPE, statement)).digest('hex');
}

/**
 * Check one bundle leaf: a well-formed hashedrekord v0.0.2 body (BUNDLE_ENTRY_INVALID), over SHA-256 of the PAE of
 * exactly `statement` (BUNDLE_ENTRY_INVALID), naming a published bundle key (UNKNOWN_KEY), whose ECDSA signature
 * over the PAE verifies (SIGNATURE_INVALID), valid at `at` when given (KEY_NOT_VALID).
 */
export function checkBundleLeaf(input: BundleLeafInput): BundleLeafCheck {
  const facts = parseHashedRekordBody(input.leaf);
  if (typeof facts === 'string') return { ok: false, code: 'BUNDLE_ENTRY_INVALID', message: `the leaf ${facts}` };
  const pae = encodePae(IN_TOTO_PAYLOAD_TYPE, input.statement);
  if (encodeHex(facts.digest) !== createHash('sha256').update(pae).digest('hex')) {
    return { ok: false, code: 'BUNDLE_ENTRY_INVALID', message: 'the leaf does not log this statement' };
  }
  const key = findBundleKey(selectUsableBundleKeys(input.bundleKeys), facts.publicKeySpki);
  if (key === undefined) {
    return { ok: false, code: 'UNKNOWN_KEY', message: 'the leaf names a key that is not a published bundle key' };
  }
  if (!verifyP256(pae, key.publicKey, facts.signature)) {
    return { ok: false, code: 'SIGNATURE_INVALID', message: `the signature by bundle key ${key.kid} does not verify` };
  }
  const { at } = input;
  if (at !== undefined && !(key.nbf <= at && (key.exp === undefined || at < key.exp))) {
    return { ok: false, code: 'KEY_NOT_VALID', message: `bundle key ${key.kid} was not valid at ${at}` };
  }
  return { ok: true, kid: key.kid, facts };
}

function findBundleKey(keys: Map<string, UsableBundleKey>, spki: Uint8Array): UsableBundleKey | undefined {
  for (const key of keys.values()) if (equalBytes(exportSpkiDer(key.publicKey), spki)) return key;
  return undefined;
}

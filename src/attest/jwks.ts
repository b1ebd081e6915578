// Reading a JWKS someone else sent (RFC 7517 §5), the one filter every verifier uses: only Ed25519 public keys
// (RFC 8037 §2) whose `kid` is their RFC 7638 thumbprint, so a kid names exactly one key. The P-256 bundle keys the
// same JWKS publishes (issue 26, RFC 7518 §6.2) are left out without a problem: selectUsableBundleKeys reads them.

import { computeKid, type Jwks, type JwksKey } from './jwk.ts';

export interface UsableJwks {
  /** The usable keys. A key without a numeric `nbf` is kept with `nbf: +Infinity`: it can never be shown valid. */
  jwks: Jwks;
  /** Why each other entry was left out, or flagged (one line each, with its position). */
  problems: string[];
}

/** RFC 7638 thumbprints already computed, by public key `x` (the only input besides the constant crv/kty). */
const thumbprints = new Map<string, string>();

function thumbprintOf(x: string): string {
  let kid = thumbprints.get(x);
  if (kid === undefined) {
    kid = computeKid({ crv: 'Ed25519', x });
    if (thumbprints.size > 1000) thumbprints.clear();
    thumbprints.set(x, kid);
  }
  return kid;
}

/**
 * Keep the usable keys of `source` (a JWKS or a list of keys; anything else has none). Rebuilt on every call (a
 * few keys, thumbprints memoised), so a JWKS object a host updates in place is seen.
 */
export function selectUsableKeys(source: Jwks | readonly JwksKey[] | unknown): UsableJwks {
  const keys: readonly unknown[] = Array.isArray(source)
    ? source
    : Array.isArray((source as Jwks | undefined)?.keys)
      ? (source as Jwks).keys
      : [];
  const usable: JwksKey[] = [];
  const problems: string[] = [];
  keys.forEach((key, index) => {
    if (isBundleKeyEntry(key)) return;
    const why = whyUnusable(key);
    if (why !== undefined) {
      problems.push(`JWKS key ${index} ${why}`);
      return;
    }
    const { nbf, exp } = key as Record<string, unknown>;
    const finiteNbf = typeof nbf === 'number' && Number.isFinite(nbf);
    if (!finiteNbf) problems.push(`JWKS key ${index} has no numeric nbf: it is never valid`);
    const entry: JwksKey = { ...(key as JwksKey), nbf: finiteNbf ? nbf : Number.POSITIVE_INFINITY };
    if (exp !== undefined) entry.exp = typeof exp === 'number' && !Number.isNaN(exp) ? exp : Number.NEGATIVE_INFINITY;
    usable.push(entry);
  });
  return { jwks: { keys: usable }, problems };
}

/** An EC P-256 signing key for ES256: a Sigstore bundle key, not an attestation key. */
function isBundleKeyEntry(key: unknown): boolean {
  if (typeof key !== 'object' || key === null || Array.isArray(key)) return false;
  const { kty, crv, alg } = key as Record<string, unknown>;
  return kty === 'EC' && crv === 'P-256' && (alg === undefined || alg === 'ES256') && !('d' in key);
}

const BASE64URL_X = /^[A-Za-z0-9_-]{43}$/;

function whyUnusable(key: unknown): string | undefined {
  if (typeof key !== 'object' || key === null || Array.isArray(key)) return 'is not an object';
  const { kty, crv, x, kid, use, alg } = key as Record<string, unknown>;
  if (kty !== 'OKP' || crv !== 'Ed25519' || typeof x !== 'string' || typeof kid !== 'string') {
    return 'is not an Ed25519 public key with a kid';
  }
  if (!BASE64URL_X.test(x) || Buffer.from(x, 'base64url').toString('base64url') !== x) return 'has a malformed x';
  if ('d' in key) return 'holds private key material';
  if ((use !== undefined && use !== 'sig') || (alg !== undefined && alg !== 'EdDSA' && alg !== 'Ed25519')) {
    return 'is not a signing key for EdDSA';
  }
  if (thumbprintOf(x) !== kid) return `(${kid}) is not named by its RFC 7638 thumbprint`;
  return undefined;
}

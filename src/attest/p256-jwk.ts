// ECDSA P-256 bundle keys as JWKs (RFC 7518 §6.2): RFC 7638 thumbprints as kids, the public JWKS entry with nbf/exp,
// the SubjectPublicKeyInfo DER (RFC 5480) a Sigstore verifier reads. Bundles are signed with P-256, not Ed25519:
// sigstore-go and sigstore-js prehash Ed25519 DSSE differently, ECDSA P-256 with SHA-256 verifies in both.
// No I/O: private key files live in src/keys/.

import { createHash, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ToolsealError } from '../core/errors.ts';

/** JWS `alg` of ECDSA P-256 with SHA-256 (RFC 7518 §3.4). */
export const BUNDLE_SIGNING_ALG = 'ES256';

export interface BundlePublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: typeof BUNDLE_SIGNING_ALG;
  use: 'sig';
}

export interface BundleSigningKey {
  kid: string;
  /** node:crypto key: signing is synchronous, so a publish can sign inside its database transaction. */
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicJwk: BundlePublicJwk;
}

/** A bundle key and the window in which the registry signed with it (seconds since the epoch), as for Ed25519. */
export interface BundleKeyValidity {
  kid: string;
  publicJwk: BundlePublicJwk;
  notBefore: number;
  notAfter: number | null;
}

/** A JWKS entry: the public key plus `nbf` and, once retired, `exp` (seconds since the epoch). */
export type BundleJwksKey = BundlePublicJwk & { nbf: number; exp?: number };

/** RFC 7638 §3.2 for an EC key: SHA-256 over `{"crv","kty","x","y"}` in that order, no whitespace, base64url. */
export function computeBundleKid(jwk: { x: string; y: string }): string {
  const members = JSON.stringify({ crv: 'P-256', kty: 'EC', x: jwk.x, y: jwk.y });
  return createHash('sha256').update(members).digest('base64url');
}

/** The bundle signing key of a P-256 private key object; its kid is its RFC 7638 thumbprint. */
export function bundleKeyFromPrivate(privateKey: KeyObject): BundleSigningKey {
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ec') {
    throw new ToolsealError('BAD_REQUEST', 'a bundle key is an ECDSA P-256 private key');
  }
  const publicKey = createPublicKey(privateKey);
  const jwk = publicKey.export({ format: 'jwk' });
  if (jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
    throw new ToolsealError('BAD_REQUEST', 'a bundle key is an ECDSA P-256 private key');
  }
  const kid = computeBundleKid({ x: jwk.x, y: jwk.y });
  return {
    kid,
    privateKey,
    publicKey,
    publicJwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid, alg: BUNDLE_SIGNING_ALG, use: 'sig' },
  };
}

/** A new P-256 bundle key, in memory only (tests; src/keys saves one to a keys folder). */
export function createBundleSigningKey(): BundleSigningKey {
  return bundleKeyFromPrivate(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
}

/** The JWKS entries of bundle keys, with nbf and (once retired) exp, like buildJwks for Ed25519. */
export function buildBundleJwksKeys(keys: readonly BundleKeyValidity[]): BundleJwksKey[] {
  return keys.map((key) =>
    key.notAfter === null
      ? { ...key.publicJwk, nbf: key.notBefore }
      : { ...key.publicJwk, nbf: key.notBefore, exp: key.notAfter },
  );
}

/**
 * The public key of a JWK that is a P-256 key named by its RFC 7638 thumbprint, or why not (a kid names exactly one
 * key, as for Ed25519 in jwks.ts).
 */
export function importBundlePublicJwk(jwk: unknown): KeyObject | string {
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return 'is not an object';
  const { kty, crv, x, y, kid } = jwk as Record<string, unknown>;
  if (kty !== 'EC' || crv !== 'P-256' || typeof x !== 'string' || typeof y !== 'string' || typeof kid !== 'string') {
    return 'is not a P-256 public key with a kid';
  }
  if ('d' in jwk) return 'holds private key material';
  if (computeBundleKid({ x, y }) !== kid) return `(${kid}) is not named by its RFC 7638 thumbprint`;
  try {
    return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' });
  } catch {
    return 'is not a point on P-256';
  }
}

/** The DER SubjectPublicKeyInfo (RFC 5480 §2) of a public key: `rawBytes` of a Sigstore PublicKey, PEM for cosign. */
export function exportSpkiDer(publicKey: KeyObject): Uint8Array {
  // Exported once per key object: an export costs more than the P-256 signature a publish makes (issue 24's bench).
  let der = exportedSpki.get(publicKey);
  if (der === undefined) {
    der = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }));
    exportedSpki.set(publicKey, der);
  }
  return der.slice();
}

const exportedSpki = new WeakMap<KeyObject, Uint8Array>();

/** The PEM public key (RFC 7468 §13) `cosign … --key` reads. */
export function exportSpkiPem(publicKey: KeyObject): string {
  return String(publicKey.export({ format: 'pem', type: 'spki' }));
}

/** A usable bundle key: its public key object and the window (seconds) in which the registry signed with it. */
export interface UsableBundleKey {
  kid: string;
  publicKey: KeyObject;
  nbf: number;
  exp?: number;
}

/**
 * The P-256 bundle keys of a JWKS (or a list of keys): only public P-256 keys named by their RFC 7638 thumbprint, with
 * a numeric nbf (a key without one is never valid, as in selectUsableKeys). Other entries (the Ed25519 JWS keys of
 * the same JWKS) are left out.
 */
export function selectUsableBundleKeys(source: unknown): Map<string, UsableBundleKey> {
  const keys: readonly unknown[] = Array.isArray(source)
    ? source
    : Array.isArray((source as { keys?: unknown } | undefined)?.keys)
      ? ((source as { keys: unknown[] }).keys as unknown[])
      : [];
  const usable = new Map<string, UsableBundleKey>();
  for (const entry of keys) {
    const publicKey = importBundlePublicJwk(entry);
    if (typeof publicKey === 'string') continue;
    const { kid, nbf, exp } = entry as Record<string, unknown>;
    const key: UsableBundleKey = {
      kid: kid as string,
      publicKey,
      nbf: typeof nbf === 'number' && Number.isFinite(nbf) ? nbf : Number.POSITIVE_INFINITY,
    };
    if (exp !== undefined) key.exp = typeof exp === 'number' && !Number.isNaN(exp) ? exp : Number.NEGATIVE_INFINITY;
    usable.set(key.kid, key);
  }
  return usable;
}

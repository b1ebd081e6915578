// Ed25519 keys as JWKs (RFC 8037): RFC 7638 thumbprints as kids, the public JWKS with nbf/exp, key objects. No I/O:
// private key files live in src/keys/.

import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { generateEd25519KeyPair } from '../core/ed25519-keys.ts';

/** JWS `alg` for Ed25519 (RFC 8037 §3.1). jose also knows `Ed25519` (RFC 9864); we sign with `EdDSA`. */
export const SIGNING_ALG = 'EdDSA';

export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: typeof SIGNING_ALG;
  use: 'sig';
}

export interface SigningKey {
  kid: string;
  /** node:crypto key: signing is synchronous, so a publish signs inside its database transaction. */
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicJwk: PublicJwk;
}

/** A public key and the window in which the registry signed with it (seconds since the epoch). */
export interface KeyValidity {
  kid: string;
  publicJwk: PublicJwk;
  notBefore: number;
  notAfter: number | null;
}

/** A JWKS entry: the public key plus `nbf` and, once retired, `exp` (seconds since the epoch). */
export type JwksKey = PublicJwk & { nbf: number; exp?: number };

export interface Jwks {
  keys: JwksKey[];
}

/** RFC 7638 §3.2: SHA-256 over `{"crv","kty","x"}` in lexicographic order, no whitespace, base64url. */
export function computeKid(jwk: { crv: string; x: string }): string {
  const members = JSON.stringify({ crv: jwk.crv, kty: 'OKP', x: jwk.x });
  return createHash('sha256').update(members).digest('base64url');
}

export function buildJwks(keys: readonly KeyValidity[]): Jwks {
  return {
    keys: keys.map((key) =>
      key.notAfter === null
        ? { ...key.publicJwk, nbf: key.notBefore }
        : { ...key.publicJwk, nbf: key.notBefore, exp: key.notAfter },
    ),
  };
}

/** The signing key for a private key object whose thumbprint is `kid`. */
export function signingKeyFromPrivate(privateKey: KeyObject, kid: string): SigningKey {
  const publicKey = createPublicKey(privateKey);
  const jwk = publicKey.export({ format: 'jwk' });
  return {
    kid,
    privateKey,
    publicKey,
    publicJwk: { kty: 'OKP', crv: 'Ed25519', x: String(jwk.x), kid, alg: SIGNING_ALG, use: 'sig' },
  };
}

/** A new Ed25519 signing key, in memory only (tests, benches; generateSigningKey saves one to a keys folder). */
export function createSigningKey(): SigningKey {
  const { privateKey } = generateEd25519KeyPair();
  const x = String(privateKey.export({ format: 'jwk' }).x);
  return signingKeyFromPrivate(privateKey, computeKid({ crv: 'Ed25519', x }));
}

/** The raw 32-byte Ed25519 public key (RFC 8032 §5.1.5), for the log's note verifier. */
export function rawPublicKey(key: SigningKey): Uint8Array {
  return Buffer.from(key.publicJwk.x, 'base64url');
}

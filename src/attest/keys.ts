// Ed25519 signing keys: generation, files under the keys folder, RFC 7638 thumbprints, and the public JWKS.

import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ToolsealError } from '../core/errors.ts';

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

export type KeyRole = 'attestation' | 'log';

/** Where the private key `kid` lives in `keysDir`. */
export function signingKeyFile(keysDir: string, kid: string): string {
  return join(keysDir, `${kid}.private.jwk.json`);
}

/** RFC 7638 §3.2: SHA-256 over `{"crv","kty","x"}` in lexicographic order, no whitespace, base64url. */
export function computeKid(jwk: { crv: string; x: string }): string {
  const members = JSON.stringify({ crv: jwk.crv, kty: 'OKP', x: jwk.x });
  return createHash('sha256').update(members).digest('base64url');
}

function writePrivateKeyFile(file: string, content: object): void {
  const temporary = `${file}.tmp`;
  writeFileSync(temporary, JSON.stringify(content, null, 2) + '\n', { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/** Generate a key pair and write the private JWK (mode 0600) into `keysDir` as `<kid>.private.jwk.json`. */
export function generateSigningKey(keysDir: string): SigningKey {
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const kid = computeKid({ crv: String(jwk.crv), x: String(jwk.x) });
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  writePrivateKeyFile(signingKeyFile(keysDir, kid), { ...jwk, kid, alg: SIGNING_ALG });
  return fromPrivateKey(privateKey, kid);
}

/** Load the private key `kid` from `keysDir`; refuses a file whose key does not match its kid. */
export function loadSigningKey(keysDir: string, kid: string): SigningKey {
  const privateKey = readPrivateJwk(signingKeyFile(keysDir, kid), `the private key for kid ${kid}`);
  const actual = computeKid(privateKey.export({ format: 'jwk' }) as { crv: string; x: string });
  if (actual !== kid) throw new ToolsealError('INTERNAL', `the key file for kid ${kid} holds another key (${actual})`);
  return fromPrivateKey(privateKey, kid);
}

/**
 * The log's checkpoint key: one file `log.private.jwk.json`. It is created only when `mayCreate` (a log
 * with no entries yet): a missing key for an existing log is refused, never silently replaced, since a new
 * key would continue the same tree under another identity and break every pinned verifier.
 */
export function loadOrCreateLogKey(keysDir: string, mayCreate = true): SigningKey {
  const file = join(keysDir, 'log.private.jwk.json');
  let privateKey: KeyObject;
  try {
    privateKey = readPrivateJwk(file, 'the log key');
  } catch (error) {
    if (!(error instanceof ToolsealError) || !(error.cause && (error.cause as { code?: string }).code === 'ENOENT'))
      throw error;
    if (!mayCreate)
      throw new ToolsealError(
        'INTERNAL',
        'the log key is missing from the keys folder, but this log already has entries; restore it (or point --keys at the right folder)',
      );
    ({ privateKey } = generateKeyPairSync('ed25519'));
    mkdirSync(keysDir, { recursive: true, mode: 0o700 });
    writePrivateKeyFile(file, { ...privateKey.export({ format: 'jwk' }), use: 'tlog-checkpoint' });
  }
  const jwk = privateKey.export({ format: 'jwk' }) as { crv: string; x: string };
  return fromPrivateKey(privateKey, computeKid(jwk));
}

function readPrivateJwk(file: string, what: string): KeyObject {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new ToolsealError('INTERNAL', `${what} is missing from the keys folder`, { cause });
  }
  try {
    const jwk = JSON.parse(text) as { kty?: string; crv?: string; x?: string; d?: string };
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.d !== 'string')
      throw new Error('not an Ed25519 private JWK');
    return createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', x: String(jwk.x), d: jwk.d }, format: 'jwk' });
  } catch (cause) {
    throw new ToolsealError('INTERNAL', `${what} in the keys folder is not an Ed25519 private JWK`, { cause });
  }
}

function fromPrivateKey(privateKey: KeyObject, kid: string): SigningKey {
  const publicKey = createPublicKey(privateKey);
  const jwk = publicKey.export({ format: 'jwk' });
  return {
    kid,
    privateKey,
    publicKey,
    publicJwk: { kty: 'OKP', crv: 'Ed25519', x: String(jwk.x), kid, alg: SIGNING_ALG, use: 'sig' },
  };
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

/** The raw 32-byte Ed25519 public key (RFC 8032 §5.1.5), for the log's note verifier. */
export function rawPublicKey(key: SigningKey): Uint8Array {
  return Buffer.from(key.publicJwk.x, 'base64url');
}

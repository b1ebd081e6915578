// Private key files in the keys folder (JWK, mode 0600): attestation keys as `<kid>.private.jwk.json`, the log's
// checkpoint key as `log.private.jwk.json`. The only module that reads or writes key files.

import { createPrivateKey, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { computeKid, SIGNING_ALG, type SigningKey, signingKeyFromPrivate } from '../attest/jwk.ts';
import { ToolsealError } from '../core/errors.ts';
import { generateEd25519KeyPair } from '../core/ed25519-keys.ts';

/** The log key's file name in the keys folder. */
export const LOG_KEY_FILE = 'log.private.jwk.json';

/** Where the private key `kid` lives in `keysDir`. */
export function signingKeyFile(keysDir: string, kid: string): string {
  return join(keysDir, `${kid}.private.jwk.json`);
}

/** Is the log's key file in `keysDir`? */
export function hasLogKeyFile(keysDir: string): boolean {
  return existsSync(join(keysDir, LOG_KEY_FILE));
}

function writePrivateKeyFile(file: string, content: object): void {
  const temporary = `${file}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

/** Generate a key pair and write the private JWK (mode 0600) into `keysDir` as `<kid>.private.jwk.json`. */
export function generateSigningKey(keysDir: string): SigningKey {
  const { privateKey } = generateEd25519KeyPair();
  const jwk = privateKey.export({ format: 'jwk' });
  const kid = computeKid({ crv: String(jwk.crv), x: String(jwk.x) });
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  writePrivateKeyFile(signingKeyFile(keysDir, kid), { ...jwk, kid, alg: SIGNING_ALG });
  return signingKeyFromPrivate(privateKey, kid);
}

/** Load the private key `kid` from `keysDir`; refuses a file whose key does not match its kid. */
export function loadSigningKey(keysDir: string, kid: string): SigningKey {
  const privateKey = readPrivateJwk(signingKeyFile(keysDir, kid), `the private key for kid ${kid}`);
  const actual = computeKid(privateKey.export({ format: 'jwk' }) as { crv: string; x: string });
  if (actual !== kid) throw new ToolsealError('INTERNAL', `the key file for kid ${kid} holds another key (${actual})`);
  return signingKeyFromPrivate(privateKey, kid);
}

/**
 * The log's checkpoint key: one file `log.private.jwk.json`. It is created only when `mayCreate` (a log
 * with no entries yet): a missing key for an existing log is refused, never silently replaced, since a new
 * key would continue the same tree under another identity and break every pinned verifier.
 */
export function loadOrCreateLogKey(keysDir: string, mayCreate = true): SigningKey {
  const file = join(keysDir, LOG_KEY_FILE);
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
    ({ privateKey } = generateEd25519KeyPair());
    mkdirSync(keysDir, { recursive: true, mode: 0o700 });
    writePrivateKeyFile(file, { ...privateKey.export({ format: 'jwk' }), use: 'tlog-checkpoint' });
  }
  const jwk = privateKey.export({ format: 'jwk' }) as { crv: string; x: string };
  return signingKeyFromPrivate(privateKey, computeKid(jwk));
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

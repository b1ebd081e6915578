// The registry's ECDSA P-256 Sigstore bundle keys in the keys folder (issue 26; RFC 7518 §6.2 JWKs, RFC 7638 kids):
// each private key as `<kid>.bundle.private.jwk.json` (mode 0600), and `bundle-keys.json`, the public keys with the
// windows the registry signed in (seconds since the epoch; the last one active, `notAfter` null). Generated on first
// start like the Ed25519 key, rotated by `keys rotate`; both files written durably (writeKeysFolderFile), the key
// before the list, so a crash never leaves the list naming a key that is not on disk.

import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type BundleKeyValidity,
  type BundleSigningKey,
  bundleKeyFromPrivate,
  computeBundleKid,
  createBundleSigningKey,
} from '../attest/p256-jwk.ts';
import { ToolsealError } from '../core/errors.ts';
import { writeKeysFolderFile } from './checkpoint-file.ts';

/** The list of bundle keys and their windows, in the keys folder. */
export const BUNDLE_KEYS_FILE = 'bundle-keys.json';

/** Where the private bundle key `kid` lives in `keysDir`. */
export function bundleKeyFile(keysDir: string, kid: string): string {
  return join(keysDir, bundleKeyFileName(kid));
}

function bundleKeyFileName(kid: string): string {
  return `${kid}.bundle.private.jwk.json`;
}

/** The bundle keys of a registry: the one it signs with now, and every key with its window (for the JWKS). */
export interface BundleKeys {
  active: BundleSigningKey;
  /** Oldest first; the last is the active key (notAfter null). */
  keys: BundleKeyValidity[];
}

/**
 * The bundle keys in `keysDir`, created (a first key valid from `nowSeconds`) when there are none yet. A list that
 * is unreadable, inconsistent, or names an active key whose private file is missing or holds another key is
 * refused (INTERNAL), never replaced: a new key would silently orphan the bundles already served.
 */
export function loadOrCreateBundleKeys(keysDir: string, nowSeconds: number): BundleKeys {
  const keys = readBundleKeyList(keysDir);
  if (keys !== undefined) return { active: loadActiveBundleKey(keysDir, keys), keys };
  requireSeconds(nowSeconds);
  const active = createBundleSigningKey();
  writePrivateBundleKey(keysDir, active);
  const first: BundleKeyValidity[] = [
    { kid: active.kid, publicJwk: active.publicJwk, notBefore: nowSeconds, notAfter: null },
  ];
  writeBundleKeyList(keysDir, first);
  return { active, keys: first };
}

/**
 * Rotate: a new bundle key valid from `nowSeconds`, the active one retired at that second (it stays in the list, so
 * bundles it signed still verify). Refused (BAD_REQUEST) when the folder has no bundle keys or `nowSeconds` is not
 * after the active key's notBefore.
 */
export function rotateBundleKey(keysDir: string, nowSeconds: number): { retired: string; active: string } {
  requireSeconds(nowSeconds);
  const keys = readBundleKeyList(keysDir);
  if (keys === undefined) throw new ToolsealError('BAD_REQUEST', 'the keys folder has no bundle keys to rotate');
  const current = keys[keys.length - 1] as BundleKeyValidity;
  if (nowSeconds <= current.notBefore) {
    throw new ToolsealError('BAD_REQUEST', `the active bundle key ${current.kid} became valid at ${current.notBefore}`);
  }
  loadActiveBundleKey(keysDir, keys);
  const next = createBundleSigningKey();
  writePrivateBundleKey(keysDir, next);
  const rotated: BundleKeyValidity[] = [
    ...keys.slice(0, -1),
    { ...current, notAfter: nowSeconds },
    { kid: next.kid, publicJwk: next.publicJwk, notBefore: nowSeconds, notAfter: null },
  ];
  writeBundleKeyList(keysDir, rotated);
  return { retired: current.kid, active: next.kid };
}

/** The public bundle keys with their windows (what the JWKS and the trusted root keyring publish); undefined: none. */
export function readBundleKeyList(keysDir: string): BundleKeyValidity[] | undefined {
  let text: string;
  try {
    text = readFileSync(join(keysDir, BUNDLE_KEYS_FILE), 'utf8');
  } catch (cause) {
    if ((cause as { code?: string }).code === 'ENOENT') return undefined;
    throw new ToolsealError('INTERNAL', 'the bundle key list in the keys folder cannot be read', { cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new ToolsealError('INTERNAL', 'the bundle key list in the keys folder is not JSON', { cause });
  }
  const why = checkBundleKeyList(value);
  if (why !== undefined) throw new ToolsealError('INTERNAL', `the bundle key list in the keys folder ${why}`);
  return (value as { keys: BundleKeyValidity[] }).keys;
}

/** Undefined when `value` is {keys: [...]} of thumbprint-named P-256 keys in adjoining windows, the last open. */
function checkBundleKeyList(value: unknown): string | undefined {
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) return 'has no keys';
  let previousEnd: number | undefined;
  for (const [index, entry] of keys.entries()) {
    const { kid, publicJwk, notBefore, notAfter } = (entry ?? {}) as Record<string, unknown>;
    const jwk = (publicJwk ?? {}) as Record<string, unknown>;
    if (jwk['kty'] !== 'EC' || jwk['crv'] !== 'P-256' || typeof jwk['x'] !== 'string' || typeof jwk['y'] !== 'string')
      return `key ${index} is not a P-256 public key`;
    if ('d' in jwk) return `key ${index} holds private key material`;
    if (typeof kid !== 'string' || computeBundleKid({ x: jwk['x'], y: jwk['y'] }) !== kid || jwk['kid'] !== kid)
      return `key ${index} is not named by its RFC 7638 thumbprint`;
    if (!Number.isSafeInteger(notBefore) || (previousEnd !== undefined && notBefore !== previousEnd))
      return `key ${index} does not start when the key before it was retired`;
    const last = index === keys.length - 1;
    if (last ? notAfter !== null : !Number.isSafeInteger(notAfter) || (notAfter as number) <= (notBefore as number))
      return last ? 'does not end with the active key' : `key ${index} has no end after its start`;
    previousEnd = notAfter as number;
  }
  return undefined;
}

function loadActiveBundleKey(keysDir: string, keys: readonly BundleKeyValidity[]): BundleSigningKey {
  return loadBundleSigningKey(keysDir, (keys[keys.length - 1] as BundleKeyValidity).kid, 'the active bundle key');
}

/**
 * The private bundle key `kid` (a retired one too: a publish in the second a rotation retired it at is still signed
 * by it). INTERNAL when its file is missing, not P-256, or holds another key.
 */
export function loadBundleSigningKey(keysDir: string, kid: string, role = 'the bundle key'): BundleSigningKey {
  let privateKey: KeyObject;
  try {
    const jwk = JSON.parse(readFileSync(bundleKeyFile(keysDir, kid), 'utf8')) as Record<string, unknown>;
    if (jwk['kty'] !== 'EC' || jwk['crv'] !== 'P-256' || typeof jwk['d'] !== 'string') throw new Error('not P-256');
    privateKey = createPrivateKey({
      key: { kty: 'EC', crv: 'P-256', x: String(jwk['x']), y: String(jwk['y']), d: jwk['d'] },
      format: 'jwk',
    });
  } catch (cause) {
    throw new ToolsealError('INTERNAL', `${role} ${kid} is missing from the keys folder or not P-256`, {
      cause,
    });
  }
  const key = bundleKeyFromPrivate(privateKey);
  if (key.kid !== kid) {
    throw new ToolsealError('INTERNAL', `the key file for bundle key ${kid} holds another key (${key.kid})`);
  }
  return key;
}

function writePrivateBundleKey(keysDir: string, key: BundleSigningKey): void {
  const jwk = { ...key.privateKey.export({ format: 'jwk' }), kid: key.kid, alg: key.publicJwk.alg, use: 'sig' };
  writeKeysFolderFile(keysDir, bundleKeyFileName(key.kid), `${JSON.stringify(jwk, null, 2)}\n`, 'a bundle key');
}

function writeBundleKeyList(keysDir: string, keys: readonly BundleKeyValidity[]): void {
  writeKeysFolderFile(keysDir, BUNDLE_KEYS_FILE, `${JSON.stringify({ keys }, null, 2)}\n`, 'the bundle key list');
}

function requireSeconds(nowSeconds: number): void {
  if (!Number.isSafeInteger(nowSeconds) || nowSeconds < 0) {
    throw new ToolsealError('BAD_REQUEST', 'the time must be whole seconds since the epoch');
  }
}

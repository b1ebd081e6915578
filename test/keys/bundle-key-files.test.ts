// The P-256 bundle keys in the keys folder (src/keys/bundle-key-files.ts, issue 26): created once, reloaded the same,
// rotated with adjoining windows, published as JWKS entries and a keyring, and every broken folder refused.

import { createPublicKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  buildBundleJwksKeys,
  buildRegistryTrustMaterial,
  createSigningKey,
  deriveLogOrigin,
  exportSpkiDer,
} from '../../src/attest/index.ts';
import {
  BUNDLE_KEYS_FILE,
  bundleKeyFile,
  loadOrCreateBundleKeys,
  readBundleKeyList,
  rotateBundleKey,
} from '../../src/keys/bundle-key-files.ts';

const folders: string[] = [];
function keysFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolseal-bundle-keys-'));
  folders.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const T0 = 1_780_000_000;

describe('bundle key files', () => {
  it('creates one key on first start (private file 0600) and loads the same key after', () => {
    const dir = keysFolder();
    expect(readBundleKeyList(dir)).toBeUndefined();
    const first = loadOrCreateBundleKeys(dir, T0);
    expect(first.keys).toEqual([
      { kid: first.active.kid, publicJwk: first.active.publicJwk, notBefore: T0, notAfter: null },
    ]);
    expect(statSync(bundleKeyFile(dir, first.active.kid)).mode & 0o777).toBe(0o600);
    const again = loadOrCreateBundleKeys(dir, T0 + 500);
    expect(again.active.kid).toBe(first.active.kid);
    expect(again.keys).toEqual(first.keys);
    expect(exportSpkiDer(again.active.publicKey)).toEqual(exportSpkiDer(first.active.publicKey));
  });

  it('rotates: the old key retired at the second the new one starts; the JWKS and keyring carry both', () => {
    const dir = keysFolder();
    const first = loadOrCreateBundleKeys(dir, T0);
    const rotation = rotateBundleKey(dir, T0 + 100);
    expect(rotation.retired).toBe(first.active.kid);
    const second = rotateBundleKey(dir, T0 + 200);
    expect(second.retired).toBe(rotation.active);
    const loaded = loadOrCreateBundleKeys(dir, T0 + 300);
    expect(loaded.active.kid).toBe(second.active);
    expect(loaded.keys.map((key) => [key.kid, key.notBefore, key.notAfter])).toEqual([
      [first.active.kid, T0, T0 + 100],
      [rotation.active, T0 + 100, T0 + 200],
      [second.active, T0 + 200, null],
    ]);
    const jwks = buildBundleJwksKeys(loaded.keys);
    expect(jwks.map((key) => [key.kid, key.kty, key.crv, key.alg, key.nbf, key.exp])).toEqual([
      [first.active.kid, 'EC', 'P-256', 'ES256', T0, T0 + 100],
      [rotation.active, 'EC', 'P-256', 'ES256', T0 + 100, T0 + 200],
      [second.active, 'EC', 'P-256', 'ES256', T0 + 200, undefined],
    ]);
    const logKey = createSigningKey();
    const publicUrl = 'https://registry.example:8443/base';
    const { trustedRoot, keyring } = buildRegistryTrustMaterial({
      publicUrl,
      logOrigin: deriveLogOrigin(publicUrl),
      logPublicKey: logKey.publicKey,
      logNotBefore: T0,
      bundleKeys: loaded.keys,
    });
    expect(trustedRoot.tlogs.map((log) => log.baseUrl)).toEqual([publicUrl]);
    expect(keyring[first.active.kid]?.validFor).toEqual({
      start: new Date(T0 * 1000).toISOString(),
      end: new Date((T0 + 100) * 1000).toISOString(),
    });
    expect(keyring[second.active]?.validFor).toEqual({ start: new Date((T0 + 200) * 1000).toISOString() });
    expect(keyring[second.active]?.rawBytes).toBe(
      Buffer.from(exportSpkiDer(createPublicKey(loaded.active.privateKey))).toString('base64'),
    );
  });

  it('refuses a trust root whose log origin is not the public URL host', () => {
    expect(() =>
      buildRegistryTrustMaterial({
        publicUrl: 'https://registry.example',
        logOrigin: 'registry.example/log',
        logPublicKey: createSigningKey().publicKey,
        logNotBefore: T0,
        bundleKeys: [],
      }),
    ).toThrow(/is not the host name of https:\/\/registry.example/);
  });

  it('refuses to rotate a folder without bundle keys, or at a time not after the active key started', () => {
    const dir = keysFolder();
    expect(() => rotateBundleKey(dir, T0)).toThrow(/no bundle keys to rotate/);
    loadOrCreateBundleKeys(dir, T0);
    expect(() => rotateBundleKey(dir, T0)).toThrow(/became valid at 1780000000/);
  });

  it('refuses, never replaces, a missing or swapped active key file and a broken list', () => {
    const dir = keysFolder();
    const { active } = loadOrCreateBundleKeys(dir, T0);
    const file = bundleKeyFile(dir, active.kid);
    const saved = readFileSync(file);
    rmSync(file);
    expect(() => loadOrCreateBundleKeys(dir, T0 + 1)).toThrow(`the active bundle key ${active.kid} is missing`);
    const other = keysFolder();
    const stranger = loadOrCreateBundleKeys(other, T0).active;
    writeFileSync(file, readFileSync(bundleKeyFile(other, stranger.kid)));
    expect(() => loadOrCreateBundleKeys(dir, T0 + 1)).toThrow(`holds another key (${stranger.kid})`);
    writeFileSync(file, saved);
    const list = join(dir, BUNDLE_KEYS_FILE);
    const good = JSON.parse(readFileSync(list, 'utf8'));
    const cases: [unknown, string][] = [
      [{ keys: [] }, 'has no keys'],
      [{ keys: [{ ...good.keys[0], notAfter: T0 + 5 }] }, 'does not end with the active key'],
      [{ keys: [{ ...good.keys[0], kid: stranger.kid }] }, 'key 0 is not named by its RFC 7638 thumbprint'],
      [{ keys: [{ ...good.keys[0], publicJwk: { ...good.keys[0].publicJwk, d: 'x' } }] }, 'holds private key'],
    ];
    for (const [content, why] of cases) {
      writeFileSync(list, JSON.stringify(content));
      expect(() => loadOrCreateBundleKeys(dir, T0 + 1)).toThrow(why);
    }
    writeFileSync(list, JSON.stringify(good));
    expect(loadOrCreateBundleKeys(dir, T0 + 1).active.kid).toBe(active.kid);
  });
});

// The offline cache (src/verify/manifest-cache.ts) and the lockfile's key pins (src/verify/key-pins.ts) against a
// real registry: what was verified is kept; with the registry gone only a locked fetch starts from the cache, and only
// once everything verifies again offline; keys other than the pinned ones are KEY_NOT_PINNED, online and offline.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../../src/client/registry-client.ts';
import type { RegistryKeyPins } from '../../src/lock/lockfile.ts';
import { describeRegistryKeys } from '../../src/verify/key-pins.ts';
import {
  fetchVerifiedOrCached,
  type OfflineStart,
  readCachedManifest,
  resolveCacheDir,
} from '../../src/verify/manifest-cache.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { cleanupTempDirs, makeTempDir, manifestBytes } from '../helpers/registry-helpers.ts';
import { rejectsWithCode } from './helpers.ts';

const NAME = 'io.github.acme/widgets';
const REF = `${NAME}@1.0.0`;

let server: RunningRegistryServer;
let url: string;
let pins: RegistryKeyPins;
let digest: `sha256:${string}`;
const cacheDir = makeTempDir('toolseal-cache-');

beforeAll(async () => {
  const root = makeTempDir();
  server = await startRegistryServer({ dataDir: join(root, 'data'), keysDir: join(root, 'keys'), port: 0 });
  url = server.url;
  const { token } = await server.registry.createPublisher('io.github.acme');
  await server.registry.publish(manifestBytes({ version: '1.0.0' }), await server.registry.authenticate(token));
  const client = new RegistryClient(url);
  pins = describeRegistryKeys(await client.jwks(), await client.logKey());
  const first = await fetchVerifiedOrCached(url, REF, { cacheDir });
  digest = first.digest;
});

afterAll(async () => {
  await server?.close();
  cleanupTempDirs();
});

function cachedFiles(): string[] {
  return readdirSync(join(cacheDir, 'manifests')).map((file) => join(cacheDir, 'manifests', file));
}

describe('while the registry answers', () => {
  it('keeps what it verified, with all of its evidence, in one private file per registry and manifest', async () => {
    const [file, ...more] = cachedFiles();
    expect(more).toEqual([]);
    const entry = JSON.parse(readFileSync(file!, 'utf8')) as Record<string, unknown>;
    expect(entry).toMatchObject({ cacheVersion: 1, registry: url, manifest: REF, digest, logKey: pins.logKey });
    expect(Object.keys(entry).sort()).toEqual(
      [
        'attestation',
        'bytes',
        'cacheVersion',
        'digest',
        'inclusion',
        'jwks',
        'logKey',
        'manifest',
        'registry',
        'status',
      ]
        .slice()
        .sort(),
    );
  });

  it('pinned keys verify; another attestation key or another log key is KEY_NOT_PINNED', async () => {
    const ok = await fetchVerifiedOrCached(url, REF, { cacheDir, registryKeys: pins, lock: { digest } });
    expect(ok.digest).toBe(digest);
    const otherKid = 'A'.repeat(43);
    const wrongKey = await rejectsWithCode(
      fetchVerifiedOrCached(url, REF, { cacheDir, registryKeys: { ...pins, attestationKeys: [otherKid] } }),
      'KEY_NOT_PINNED',
    );
    expect(wrongKey.message).toMatch(/run toolseal pin again/);
    const otherLogKey = pins.logKey.replace(/\+[0-9a-f]{8}\+/, '+00000000+');
    expect(otherLogKey).not.toBe(pins.logKey);
    await rejectsWithCode(
      fetchVerifiedOrCached(url, REF, { cacheDir, registryKeys: { ...pins, logKey: otherLogKey } }),
      'KEY_NOT_PINNED',
    );
  });
});

describe('when the registry is gone', () => {
  let offline: string;
  beforeAll(async () => {
    offline = url;
    await server.close();
  });

  it('a locked fetch starts from the cached copy, verified again offline, and says so', async () => {
    const starts: OfflineStart[] = [];
    const result = await fetchVerifiedOrCached(offline, REF, {
      cacheDir,
      lock: { digest },
      registryKeys: pins,
      onOfflineStart: (start) => starts.push(start),
    });
    expect([result.digest, result.name, result.version, result.registry]).toEqual([digest, NAME, '1.0.0', offline]);
    expect(Buffer.from(result.bytes).toString('utf8')).toContain('"1.0.0"');
    expect(starts).toEqual([{ registry: offline, manifest: REF, digest, reason: expect.stringMatching(/could not/) }]);
  });

  it('a fetch that is not locked, or a manifest never cached, stays FETCH_FAILED', async () => {
    await rejectsWithCode(fetchVerifiedOrCached(offline, REF, { cacheDir }), 'FETCH_FAILED');
    const missing = await rejectsWithCode(
      fetchVerifiedOrCached(offline, `${NAME}@9.9.9`, { cacheDir, lock: { digest } }),
      'FETCH_FAILED',
    );
    expect(missing.message).toMatch(/no verified copy of io\.github\.acme\/widgets@9\.9\.9 is cached/);
  });

  it('the cached copy is held to the lockfile: another digest, or keys other than the pinned ones, refuse', async () => {
    await rejectsWithCode(
      fetchVerifiedOrCached(offline, REF, { cacheDir, lock: { digest: `sha256:${'1'.repeat(64)}` } }),
      'PIN_MISMATCH',
    );
    await rejectsWithCode(
      fetchVerifiedOrCached(offline, REF, {
        cacheDir,
        lock: { digest },
        registryKeys: { ...pins, attestationKeys: ['B'.repeat(43)] },
      }),
      'KEY_NOT_PINNED',
    );
  });

  it('a cached copy that was altered does not verify, and a damaged file is FETCH_FAILED', async () => {
    const [file] = cachedFiles();
    const original = readFileSync(file!, 'utf8');
    try {
      const entry = JSON.parse(original) as Record<string, unknown>;
      const bytes = Buffer.from(entry['bytes'] as string, 'base64')
        .toString('utf8')
        .replace('1.0.0', '1.0.1');
      writeFileSync(file!, JSON.stringify({ ...entry, bytes: Buffer.from(bytes).toString('base64') }));
      // Without a digest pin the altered bytes are still not the digest the attestation signs.
      await rejectsWithCode(readCachedManifest(cacheDir, offline, REF, {}), 'DIGEST_MISMATCH');
      await rejectsWithCode(readCachedManifest(cacheDir, offline, REF, { lock: { digest } }), 'PIN_MISMATCH');
      writeFileSync(file!, '{"cacheVersion":1,"cacheVersion":1}');
      await rejectsWithCode(readCachedManifest(cacheDir, offline, REF, { lock: { digest } }), 'FETCH_FAILED');
    } finally {
      writeFileSync(file!, original);
    }
  });
});

describe('resolveCacheDir', () => {
  it('TOOLSEAL_CACHE_DIR, else an absolute XDG_CACHE_HOME/toolseal, else ~/.cache/toolseal', async () => {
    expect(resolveCacheDir({ TOOLSEAL_CACHE_DIR: '/c', XDG_CACHE_HOME: '/x' })).toBe('/c');
    expect(resolveCacheDir({ XDG_CACHE_HOME: '/x' })).toBe('/x/toolseal');
    expect(resolveCacheDir({ XDG_CACHE_HOME: 'relative', HOME: '/home/u' })).toMatch(/\.cache\/toolseal$/);
  });
});

// `toolseal pin` pins the registry's keys and warms the offline cache; `toolseal guard --locked` starts from that
// cache when the registry is down (saying so on stderr), and refuses a registry at the same address that changed
// keys (KEY_NOT_PINNED) before its server starts.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lockfile } from '../../src/lock/lockfile.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { cleanupTempDirs, makeTempDir, manifestBytes, runCli } from '../helpers/registry-helpers.ts';

const REF = 'io.github.acme/widgets@1.0.0';
// A "server" that proves it was started: it writes a line on stderr and exits 0.
const SERVER = ['--', process.execPath, '-e', 'process.stderr.write("server started\\n")'];

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function startWithManifest(port = 0): Promise<RunningRegistryServer> {
  const root = makeTempDir();
  const server = await startRegistryServer({ dataDir: join(root, 'data'), keysDir: join(root, 'keys'), port });
  const { token } = await server.registry.createPublisher('io.github.acme');
  await server.registry.publish(manifestBytes({ version: '1.0.0' }), await server.registry.authenticate(token));
  return server;
}

describe('guard --locked without the registry', () => {
  let cwd: string;
  let server: RunningRegistryServer | undefined;
  let url: string;
  let digest: string;

  beforeAll(async () => {
    cwd = makeTempDir('toolseal-offline-');
    server = await startWithManifest();
    url = server.url;
    const pinned = await runCli(['pin', REF, '--registry', url], { cwd });
    expect(pinned.code, pinned.stderr).toBe(0);
    const answer = JSON.parse(pinned.stdout) as { keys: string; digest: string };
    expect(answer.keys).toBe('added');
    digest = answer.digest;
  });

  afterAll(async () => {
    await server?.close();
    cleanupTempDirs();
  });

  it("pin records the registry's attestation-key thumbprints and log key in the lockfile", async () => {
    const lock = JSON.parse(readFileSync(join(cwd, 'toolseal.lock'), 'utf8')) as Lockfile;
    expect(Object.keys(lock)).toEqual(['lockfileVersion', 'registry', 'registryKeys', 'manifests']);
    const keys = lock.registryKeys?.[url];
    const kid = lock.manifests[REF]?.kid;
    expect(keys?.attestationKeys).toContain(kid);
    const logKey = await (await fetch(`${url}/v1/log/key`)).text();
    expect(keys?.logKey).toBe(logKey.trim());
    const again = await runCli(['pin', REF, '--registry', url], { cwd });
    expect(JSON.parse(again.stdout)).toMatchObject({ change: 'unchanged', keys: 'unchanged' });
  });

  it('starts from the cache, verified again offline, and says so; without --locked it fails closed', async () => {
    await server!.close();
    server = undefined;
    const locked = await runCli(['guard', '--manifest', REF, '--locked', ...SERVER], { cwd });
    expect(locked.code, locked.stderr).toBe(0);
    expect(locked.stderr).toContain('server started');
    const lines = jsonLines(locked.stderr);
    expect(lines[0]).toMatchObject({ event: 'offline', registry: url, manifest: REF, digest });
    expect(lines[0]!['message']).toMatch(/verified again offline/);
    expect(lines[1]).toMatchObject({ event: 'verified', digest, locked: true });

    const unlocked = await runCli(['guard', '--manifest', REF, '--registry', url, ...SERVER], { cwd });
    expect(unlocked.code).toBe(1);
    expect(jsonLines(unlocked.stderr)[0]).toMatchObject({ code: 'FETCH_FAILED' });
    expect(unlocked.stderr).not.toContain('server started');
  });

  it('a registry at the same address with other keys is KEY_NOT_PINNED, the same bytes notwithstanding', async () => {
    server = await startWithManifest(Number(new URL(url).port));
    expect(server.url).toBe(url);
    for (const args of [
      ['verify', REF, '--locked'],
      ['guard', '--manifest', REF, '--locked', ...SERVER],
    ]) {
      const result = await runCli(args, { cwd });
      expect(result.code, result.stderr).toBe(1);
      expect(jsonLines(result.stderr).at(-1)).toMatchObject({ code: 'KEY_NOT_PINNED' });
      expect(result.stderr).not.toContain('server started');
    }
    // Pinning again is the explicit way to trust the new keys.
    const repinned = await runCli(['pin', REF, '--registry', url], { cwd });
    expect(JSON.parse(repinned.stdout)).toMatchObject({ keys: 'updated', digest });
    expect((await runCli(['verify', REF, '--locked'], { cwd })).code).toBe(0);
  });
});

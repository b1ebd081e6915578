// One server per data folder: a second `toolseal serve` on the folder refuses to start with DATA_DIR_LOCKED naming
// the holder's pid and start time; a lock left by a killed server is taken over; a graceful stop releases it.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { startRegistryServer } from '../../src/server/index.ts';
import {
  cleanupTempDirs,
  makeTempDir,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '../helpers/registry-helpers.ts';

const servers: ServerProcess[] = [];
afterAll(() => {
  for (const server of servers) server.kill();
  cleanupTempDirs();
});

async function startRejection(promise: Promise<unknown>): Promise<ToolsealError> {
  const error = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(ToolsealError);
  return error as ToolsealError;
}

describe('toolseal serve on a data folder another server holds', () => {
  it('refuses with DATA_DIR_LOCKED naming the pid; after kill -9 of the holder a new server starts; SIGTERM releases', async () => {
    const root = makeTempDir();
    const dataDir = join(root, 'data');
    const args = ['--port', '0', '--data', dataDir, '--keys', join(root, 'keys'), '--pipeline-workers', '1'];
    const first = await startServerProcess(args);
    servers.push(first);
    const lockFile = join(dataDir, 'server.lock');
    const held = readFileSync(lockFile, 'utf8');
    expect(JSON.parse(held)).toEqual({ pid: first.child.pid, startedAt: expect.any(String) });

    const second = await runCli(['serve', ...args]);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    const error = JSON.parse(second.stderr) as { code: string; message: string };
    expect(error.code).toBe('DATA_DIR_LOCKED');
    expect(error.message).toContain(`pid ${first.child.pid}, started ${JSON.parse(held).startedAt}`);
    expect(error.message).toContain(dataDir);
    expect(second.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(lockFile, 'utf8')).toBe(held);
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);

    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(existsSync(lockFile)).toBe(true); // a crash leaves it: the next start finds it stale
    const third = await startServerProcess(args);
    servers.push(third);
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: third.child.pid });
    expect((await fetch(`${third.url}/healthz`)).status).toBe(200);
    third.child.kill('SIGTERM');
    expect(await third.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(lockFile)).toBe(false);
  });
});

describe('startRegistryServer and the data-folder lock', () => {
  it('a second server in the same process is refused before it opens anything; close() releases the lock', async () => {
    const root = makeTempDir();
    const options = { dataDir: join(root, 'data'), keysDir: join(root, 'keys'), port: 0 };
    const first = await startRegistryServer(options);
    const error = await startRejection(startRegistryServer({ ...options, keysDir: join(root, 'other-keys') }));
    expect(error.code).toBe('DATA_DIR_LOCKED');
    expect(error.message).toContain(`pid ${process.pid}`);
    expect(existsSync(join(root, 'other-keys'))).toBe(false);
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    await first.close();
    expect(existsSync(join(options.dataDir, 'server.lock'))).toBe(false);
    const again = await startRegistryServer(options);
    await again.close();
  });

  it('a lock naming this pid but not held by this process (a reused pid) is stale; an unreadable one is refused', async () => {
    const root = makeTempDir();
    const options = { dataDir: join(root, 'data'), keysDir: join(root, 'keys'), port: 0 };
    const first = await startRegistryServer(options);
    await first.close();
    const lockFile = join(options.dataDir, 'server.lock');
    writeFileSync(lockFile, JSON.stringify({ pid: process.pid, startedAt: '2000-01-01T00:00:00.000Z' }));
    const taken = await startRegistryServer(options);
    expect(JSON.parse(readFileSync(lockFile, 'utf8')).startedAt).not.toBe('2000-01-01T00:00:00.000Z');
    await taken.close();
    writeFileSync(lockFile, 'not json');
    const error = await startRejection(startRegistryServer(options));
    expect(error.code).toBe('DATA_DIR_LOCKED');
    expect(error.message).toContain('server.lock');
    expect(readFileSync(lockFile, 'utf8')).toBe('not json');
  });

  it(':memory: takes no lock: two in-memory servers run side by side', async () => {
    const keysDir = makeTempDir();
    const [a, b] = await Promise.all([
      startRegistryServer({ dataDir: ':memory:', keysDir: join(keysDir, 'a'), port: 0 }),
      startRegistryServer({ dataDir: ':memory:', keysDir: join(keysDir, 'b'), port: 0 }),
    ]);
    await Promise.all([a.close(), b.close()]);
  });
});

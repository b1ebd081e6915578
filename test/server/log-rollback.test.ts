// The rollback guard (issue 25 §1) on real `toolseal serve` processes: a database that lost its tail, or holds another
// log of the same size, is refused on start (LOG_ROLLBACK naming both sizes) and by fsck (exit 1); the checkpoint
// file beside the keys follows every acknowledged publish.

import { copyFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHECKPOINT_FILE } from '../../src/keys/checkpoint-file.ts';
import { parseCheckpoint } from '../../src/log/checkpoint.ts';
import { bodyOf } from '../../src/registry/transparency-log.ts';
import {
  cleanupTempDirs,
  makeTempDir,
  manifestBytes,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '../helpers/registry-helpers.ts';

const NAME = 'io.github.acme/rollback';
const servers: ServerProcess[] = [];
afterAll(() => {
  for (const server of servers) server.kill();
  cleanupTempDirs();
});

async function publish(server: ServerProcess, token: string, version: string, description: string): Promise<void> {
  const response = await fetch(`${server.url}/v1/manifests`, {
    method: 'POST',
    body: manifestBytes({ name: NAME, version, description }),
    headers: { Authorization: `Bearer ${token}` },
  });
  expect(response.status, await response.clone().text()).toBe(201);
}

async function servedSize(server: ServerProcess): Promise<number> {
  const note = await (await fetch(`${server.url}/v1/log/checkpoint`)).text();
  return parseCheckpoint(bodyOf(note)).size;
}

function fileSize(keysDir: string): number {
  return parseCheckpoint(bodyOf(readFileSync(join(keysDir, CHECKPOINT_FILE), 'utf8'))).size;
}

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  expect(await server.exited).toEqual({ code: 0, signal: null });
}

/** Copy the SQLite database files (toolseal.db and any -wal/-shm) from one data folder to another, replacing them. */
function copyDatabase(from: string, to: string): void {
  for (const name of readdirSync(to)) if (name.startsWith('toolseal.db')) rmSync(join(to, name));
  for (const name of readdirSync(from))
    if (name.startsWith('toolseal.db')) copyFileSync(join(from, name), join(to, name));
}

/** Start `serve` and expect it to refuse: the error it printed. */
async function expectRefusedStart(args: string[]): Promise<string> {
  const error = await startServerProcess(args).then(
    (server) => {
      servers.push(server);
      throw new Error(`the server started on a rolled-back database at ${server.url}`);
    },
    (refusal: Error) => refusal.message,
  );
  return error;
}

describe('rollback guard', () => {
  it('refuses to serve a database that lost its tail, or that holds another log of the same size', async () => {
    const root = makeTempDir();
    const dataDir = join(root, 'data');
    const keysDir = join(root, 'keys');
    const backupDir = join(root, 'backup');
    // With a writer thread: publishes are committed (and the checkpoint file written) on it.
    const args = ['--port', '0', '--data', dataDir, '--keys', keysDir, '--pipeline-workers', '1'];
    const first = await startServerProcess([...args, '--dev']);
    servers.push(first);
    const token = readFileSync(join(dataDir, 'dev-token.txt'), 'utf8').trim();
    await publish(first, token, '1.0.0', 'one');
    await publish(first, token, '1.0.1', 'two');
    const older = await servedSize(first);
    expect(fileSize(keysDir)).toBe(older);
    await stop(first);
    cpSync(dataDir, backupDir, { recursive: true });

    const second = await startServerProcess(args);
    servers.push(second);
    for (const version of ['1.0.2', '1.0.3', '1.0.4', '1.0.5']) await publish(second, token, version, `v${version}`);
    const newer = await servedSize(second);
    expect(newer).toBe(older + 8); // an attestation and a Sigstore bundle leaf per publish
    // Acknowledged publishes are in the file beside the keys before the answer.
    expect(fileSize(keysDir)).toBe(newer);
    await stop(second);

    // Keep the newer database to build a fork from, then restore the older copy: the log went back.
    const newerDir = join(root, 'newer');
    cpSync(dataDir, newerDir, { recursive: true });
    copyDatabase(backupDir, dataDir);
    const refusal = await expectRefusedStart(args);
    expect(refusal).toContain('LOG_ROLLBACK');
    expect(refusal).toContain(`has ${older} entries`);
    expect(refusal).toContain(`checkpoint of size ${newer}`);
    const fsck = await runCli(['fsck', '--data', dataDir, '--keys', keysDir]);
    expect(fsck.code, fsck.stdout + fsck.stderr).toBe(1);
    expect(fsck.stdout).toMatch(new RegExp(`PROBLEM LOG_ROLLBACK log: .*has ${older} entries.*size ${newer}`));
    // Nothing repaired it: the file still names the newer size, and a second start is refused again.
    expect(fileSize(keysDir)).toBe(newer);
    expect(await expectRefusedStart(args)).toContain('LOG_ROLLBACK');

    // A fork of the same size: the older copy extended with other publishes under the same log key (a keys folder
    // copy without the checkpoint file, as if an attacker held the key and the old database).
    const forkKeys = join(root, 'fork-keys');
    cpSync(keysDir, forkKeys, { recursive: true });
    rmSync(join(forkKeys, CHECKPOINT_FILE));
    const forkArgs = ['--port', '0', '--data', dataDir, '--keys', forkKeys, '--pipeline-workers', '1'];
    const fork = await startServerProcess(forkArgs);
    servers.push(fork);
    // First start without a file: it is written from the database's latest checkpoint.
    expect(fileSize(forkKeys)).toBe(older);
    for (const version of ['1.0.2', '1.0.3', '1.0.4', '1.0.5']) await publish(fork, token, version, `fork ${version}`);
    expect(await servedSize(fork)).toBe(newer);
    await stop(fork);
    const forkRefusal = await expectRefusedStart(args);
    expect(forkRefusal).toContain('LOG_ROLLBACK');
    expect(forkRefusal).toContain(`another root at size ${newer}`);
    const forkFsck = await runCli(['fsck', '--data', dataDir, '--keys', keysDir]);
    expect(forkFsck.code).toBe(1);
    expect(forkFsck.stdout).toContain(`PROBLEM LOG_ROLLBACK log:`);
    expect(forkFsck.stdout).toContain(`another root at size ${newer}`);

    // The newer database itself is still accepted with the original keys, and fsck passes on it.
    copyDatabase(newerDir, dataDir);
    const third = await startServerProcess(args);
    servers.push(third);
    expect(await servedSize(third)).toBe(newer);
    await stop(third);
    const clean = await runCli(['fsck', '--data', dataDir, '--keys', keysDir]);
    expect(clean.code, clean.stdout).toBe(0);
    expect(existsSync(join(keysDir, CHECKPOINT_FILE))).toBe(true);
  }, 120_000);
});

// The data folder lock is taken over whenever its holder is not a live toolseal server of this folder: a zombie not
// yet reaped, a pid reused by a process started after the lock; a live holder is still refused (DATA_DIR_LOCKED).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCK_FILE_NAME, lockDataDir, readProcessStatus } from '../../src/server/data-dir-lock.ts';

const children: ChildProcess[] = [];
const folders: string[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolseal-lock-'));
  folders.push(dir);
  return dir;
}

/**
 * A `sleep` whose background child has exited and is never reaped: resolves the zombie's pid. The child outlives the
 * shell's `exec` (it exits after a second), so the shell can never reap it first; `sleep` never reaps.
 */
function startZombieParent(): Promise<number> {
  const child = spawn('sh', ['-c', 'sh -c "sleep 1; exit 0" & echo $!; exec sleep 60'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  children.push(child);
  return new Promise((resolve) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
  });
}

function startSleeper(): ChildProcess {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  children.push(child);
  return child;
}

async function waitFor(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('the process never reached the awaited state');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function writeLock(dir: string, pid: number, startedAt: string): void {
  writeFileSync(join(dir, LOCK_FILE_NAME), `${JSON.stringify({ pid, startedAt })}\n`);
}

describe.runIf(process.platform === 'linux')('data folder lock takeover', () => {
  it('takes over a lock held by a zombie', async () => {
    const zombie = await startZombieParent();
    await waitFor(() => readProcessStatus(zombie)?.state === 'Z');
    expect(() => process.kill(zombie, 0)).not.toThrow(); // kill(pid, 0) alone would call it alive
    const dir = folder();
    writeLock(dir, zombie, new Date().toISOString());
    const lock = lockDataDir(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('takes over a lock whose pid now belongs to a process started after the lock was taken', async () => {
    const sleeper = startSleeper();
    await waitFor(() => readProcessStatus(sleeper.pid as number) !== undefined);
    const dir = folder();
    writeLock(dir, sleeper.pid as number, new Date(Date.now() - 3_600_000).toISOString());
    const lock = lockDataDir(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('still refuses a live holder that started before it took the lock', async () => {
    const sleeper = startSleeper();
    await waitFor(() => readProcessStatus(sleeper.pid as number) !== undefined);
    const dir = folder();
    const startedAt = new Date(Date.now() + 1000).toISOString();
    writeLock(dir, sleeper.pid as number, startedAt);
    expect(() => lockDataDir(dir)).toThrow(expect.objectContaining({ code: 'DATA_DIR_LOCKED' }));
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), 'utf8'))).toEqual({ pid: sleeper.pid, startedAt });
  });
});

// The latest checkpoint the registry signed, kept beside its keys (`<keys>/log-checkpoint`), outside the database:
// a database that lost its tail (or was swapped) is caught on start by comparing with it (issue 25 §1; C2SP
// tlog-checkpoint for the note itself). Written atomically: temporary file, fsync, rename, fsync of the folder. Every
// thread and process that moves it forward does its read-compare-write under one lock file (withCheckpointFileLock),
// so two writers can never leave the smaller checkpoint there.

import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';
import { ToolsealError } from '../core/errors.ts';
import { writeFileAtomic } from '../lock/atomic-file.ts';

/** The checkpoint file's name in the keys folder. */
export const CHECKPOINT_FILE = 'log-checkpoint';

/** Where the signed checkpoint file lives in `keysDir`. */
export function checkpointFileOf(keysDir: string): string {
  return join(keysDir, CHECKPOINT_FILE);
}

/** The signed checkpoint note in `keysDir`, or undefined when there is none yet. */
export function readCheckpointFile(keysDir: string): string | undefined {
  try {
    return readFileSync(checkpointFileOf(keysDir), 'utf8');
  } catch (cause) {
    if ((cause as { code?: string }).code === 'ENOENT') return undefined;
    throw new ToolsealError('INTERNAL', 'the log checkpoint file in the keys folder cannot be read', { cause });
  }
}

/** Replace the checkpoint file with `note`, durably, before returning (synchronous: called before a publish answers). */
export function writeCheckpointFile(keysDir: string, note: string): void {
  writeKeysFolderFile(keysDir, CHECKPOINT_FILE, note, 'the log checkpoint file');
}

/** The checkpoint note in `keysDir` (readCheckpointFile) read off the event loop. */
export async function readCheckpointFileAsync(keysDir: string): Promise<string | undefined> {
  try {
    return await readFile(checkpointFileOf(keysDir), 'utf8');
  } catch (cause) {
    if ((cause as { code?: string }).code === 'ENOENT') return undefined;
    throw new ToolsealError('INTERNAL', 'the log checkpoint file in the keys folder cannot be read', { cause });
  }
}

/**
 * writeCheckpointFile off the event loop (issue 24 §4: a publish batch's two fsyncs no longer stall the reads of the
 * process): the same temporary file, fsync, rename and folder fsync (writeFileAtomic), durable once it resolves.
 */
export async function writeCheckpointFileAsync(keysDir: string, note: string): Promise<void> {
  try {
    await mkdir(keysDir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(checkpointFileOf(keysDir), note, 0o600);
  } catch (cause) {
    throw new ToolsealError('INTERNAL', 'the log checkpoint file in the keys folder cannot be written', { cause });
  }
}

/**
 * Replace `name` in `keysDir` with `data` durably (mode 0600): a temporary file beside it, fsync, rename, fsync of the
 * folder. Readers see the old content or the new, never a torn one. INTERNAL naming `what` when it cannot be written.
 */
export function writeKeysFolderFile(keysDir: string, name: string, data: string, what: string): void {
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  const file = join(keysDir, name);
  const temporary = join(keysDir, `.${name}.${process.pid}.${threadId}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fd = openSync(temporary, 'wx', 0o600);
    try {
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, file);
  } catch (cause) {
    rmSync(temporary, { force: true });
    throw new ToolsealError('INTERNAL', `${what} in the keys folder cannot be written`, { cause });
  }
  try {
    const dir = openSync(keysDir, 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic there.
  }
}

/** The lock file beside the checkpoint file: it exists while one writer reads, compares and replaces the checkpoint. */
const LOCK_FILE = `${CHECKPOINT_FILE}.lock`;
/** A lock older than this is a crashed writer's (a holder keeps it for one fsynced write, milliseconds). */
const STALE_LOCK_MS = 5_000;
/** Give up (INTERNAL) after waiting this long for a live holder. */
const LOCK_TIMEOUT_MS = 30_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Run `update` (a read-compare-write of the checkpoint file) while holding the folder's checkpoint lock, taken with an
 * exclusive create (O_EXCL) by any thread or process; a lock whose holder process is gone, or older than 5 s, is
 * taken over. Synchronous, like the write it guards.
 */
export function withCheckpointFileLock<T>(keysDir: string, update: () => T): T {
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  const lock = join(keysDir, LOCK_FILE);
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    let fd: number | undefined;
    try {
      fd = openSync(lock, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
    } catch (cause) {
      if (fd !== undefined) closeSync(fd);
      if ((cause as { code?: string }).code !== 'EEXIST')
        throw new ToolsealError('INTERNAL', 'the log checkpoint lock in the keys folder cannot be taken', { cause });
      if (isStaleLock(lock)) rmSync(lock, { force: true });
      else if (Date.now() > deadline)
        throw new ToolsealError('INTERNAL', 'the log checkpoint lock in the keys folder is held for too long');
      else Atomics.wait(sleeper, 0, 0, 1);
      continue;
    }
    closeSync(fd);
    try {
      return update();
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

/**
 * withCheckpointFileLock off the event loop: the same lock file, waited for with timers rather than Atomics.wait, so
 * a process that waits for another's write keeps serving (issue 24 §4).
 */
export async function withCheckpointFileLockAsync<T>(keysDir: string, update: () => Promise<T>): Promise<T> {
  await mkdir(keysDir, { recursive: true, mode: 0o700 });
  const lock = join(keysDir, LOCK_FILE);
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      try {
        await handle.writeFile(`${process.pid}\n`);
      } finally {
        await handle.close();
      }
    } catch (cause) {
      if ((cause as { code?: string }).code !== 'EEXIST')
        throw new ToolsealError('INTERNAL', 'the log checkpoint lock in the keys folder cannot be taken', { cause });
      if (isStaleLock(lock)) await rm(lock, { force: true });
      else if (Date.now() > deadline)
        throw new ToolsealError('INTERNAL', 'the log checkpoint lock in the keys folder is held for too long');
      else await sleep(1);
      continue;
    }
    try {
      return await update();
    } finally {
      await rm(lock, { force: true });
    }
  }
}

function isStaleLock(lock: string): boolean {
  try {
    if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) return true;
    const pid = Number.parseInt(readFileSync(lock, 'utf8'), 10);
    if (!Number.isSafeInteger(pid) || pid <= 0) return false; // being written: its holder is alive
    try {
      process.kill(pid, 0);
      return false;
    } catch (error) {
      return (error as { code?: string }).code === 'ESRCH';
    }
  } catch {
    return false; // gone already: the next attempt takes it
  }
}

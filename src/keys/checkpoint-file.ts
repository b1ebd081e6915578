// The latest checkpoint the registry signed, kept beside its keys (`<keys>/log-checkpoint`), outside the database:
// a database that lost its tail (or was swapped) is caught on start by comparing with it (issue 25 §1; C2SP
// tlog-checkpoint for the note itself). Written atomically: temporary file, fsync, rename, fsync of the folder.

import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { ToolsealError } from '../core/errors.ts';

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

// Write a file so that readers see either the old content or the new, never a torn one (temp file, fsync, rename).

import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Write `data` to `path` atomically: a temporary file beside it (same directory, so same file system) is
 * written and fsynced, then renamed over `path`; the directory is fsynced where the platform allows.
 * `mode` applies to a newly created file (default 0o644 before umask).
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  const directory = dirname(path);
  const temporary = join(directory, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx', mode);
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw error;
  }
  try {
    const dir = await open(directory, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  } catch {
    // Some platforms (Windows) cannot open or fsync a directory; the rename is still atomic there.
  }
}

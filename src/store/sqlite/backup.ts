// An online backup of a data folder's database (SQLite's backup API, https://sqlite.org/backup.html, through
// better-sqlite3): a consistent snapshot taken beside a running server (WAL readers never block its writer),
// written under a temporary name, checked with PRAGMA integrity_check, fsynced and renamed into place.

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { ToolsealError } from '../../core/errors.ts';
import { runIntegrityCheck } from './integrity-check.ts';
import { databaseFileOf } from './sqlite-store.ts';
import { translateStorageError } from './storage-errors.ts';

export interface DatabaseBackup {
  /** Size of the backup file in bytes. */
  bytes: number;
  /** Pages copied. */
  pages: number;
  /** The log size (entries) and publishes (versions) the snapshot holds. */
  logEntries: number;
  versions: number;
}

/**
 * Back up the database of `dataDir` to the single file `outFile` (replaced atomically when it exists). The file is
 * a complete database: copy it to `<data>/toolseal.db` in an empty data folder to restore. NOT_FOUND when the folder
 * holds no database; INTEGRITY_ERROR (and no file) when the copy fails SQLite's check.
 */
export async function backupDatabase(dataDir: string, outFile: string): Promise<DatabaseBackup> {
  const source = databaseFileOf(dataDir);
  if (dataDir === ':memory:' || !existsSync(source)) {
    throw new ToolsealError('NOT_FOUND', `no registry database in ${dataDir}`);
  }
  const temporary = join(
    dirname(outFile),
    `.${basename(outFile)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  const client = new Database(source, { fileMustExist: true });
  try {
    client.pragma('busy_timeout = 5000');
    const { totalPages } = await client.backup(temporary);
    const copy = new Database(temporary, { fileMustExist: true });
    let counts: { logEntries: number; versions: number };
    try {
      const problems = runIntegrityCheck(copy);
      if (problems.length > 0) throw new ToolsealError('INTEGRITY_ERROR', `the backup is corrupt: ${problems[0]}`);
      // A single file: the copy keeps no -wal beside it.
      copy.pragma('journal_mode = DELETE');
      counts = {
        logEntries: copy.prepare('SELECT count(*) FROM log_entries').pluck().get() as number,
        versions: copy.prepare('SELECT count(*) FROM manifest_versions').pluck().get() as number,
      };
    } finally {
      copy.close();
    }
    await syncFile(temporary);
    await rename(temporary, outFile);
    return { bytes: (await stat(outFile)).size, pages: totalPages, ...counts };
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => undefined);
    throw translateStorageError(error, () => undefined);
  } finally {
    client.close();
  }
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

// SQLite failures the registry answers with codes of its own (result codes: https://sqlite.org/rescode.html):
// no room left — SQLITE_FULL (the disk, or the database's max_page_count), an I/O error while the disk has no space
// left, ENOSPC — is STORAGE_FULL; a damaged file — SQLITE_CORRUPT*, SQLITE_NOTADB — is INTEGRITY_ERROR. The
// transaction that failed has been rolled back by then, so nothing of it is written. Anything else passes through.

import { statfsSync } from 'node:fs';
import { ToolsealError } from '../../core/errors.ts';
import { truncateText } from '../../core/text.ts';

/** Below this much free space, an I/O error on a write is taken as the disk being full. */
const NEARLY_FULL_BYTES = 1024 * 1024;

/** Free bytes on the file system holding `dataDir` (undefined for `:memory:` or when it cannot be asked). */
export function measureFreeBytes(dataDir: string): number | undefined {
  if (dataDir === ':memory:') return undefined;
  try {
    const stats = statfsSync(dataDir);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

/**
 * `error` as the registry should report it: STORAGE_FULL or INTEGRITY_ERROR (with the original as the cause), or
 * `error` itself. `freeBytes` is asked only for an SQLITE_IOERR, whose cause SQLite does not say.
 */
export function translateStorageError(error: unknown, freeBytes: () => number | undefined): unknown {
  if (error instanceof ToolsealError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return error;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || (code.startsWith('SQLITE_IOERR') && isNearlyFull(freeBytes()))) {
    return new ToolsealError(
      'STORAGE_FULL',
      "the registry's storage is full: nothing was written; free some space (or raise the database's size limit) and retry",
      { cause: error },
    );
  }
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    // SQLite's own text ("database disk image is malformed", "file is not a database") names no path.
    const detail = error instanceof Error ? truncateText(error.message, 200) : code;
    return new ToolsealError('INTEGRITY_ERROR', `the database is corrupt: ${detail}`, { cause: error });
  }
  return error;
}

function isNearlyFull(free: number | undefined): boolean {
  return free !== undefined && free < NEARLY_FULL_BYTES;
}

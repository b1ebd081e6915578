// SQLite's own structural check (PRAGMA integrity_check: pages, b-trees, indexes, https://sqlite.org/pragma.html),
// on an open store or, for a file too damaged to open as a store, read-only on the file itself (for fsck).

import Database from 'better-sqlite3';

/** At most this many problems are listed (SQLite stops there). */
const MAX_PROBLEMS = 20;

/**
 * One line per problem SQLite finds; none when the structure is intact. Damage that stops the check is one line,
 * SQLite's message ("database disk image is malformed", "file is not a database": no path).
 */
export function runIntegrityCheck(client: Database.Database): string[] {
  try {
    const rows = client.pragma(`integrity_check(${MAX_PROBLEMS})`) as { integrity_check: string }[];
    const problems = rows.map((row) => row.integrity_check);
    return problems.length === 1 && problems[0] === 'ok' ? [] : problems;
  } catch (error) {
    return [messageOf(error)];
  }
}

/** The integrity check of a database file opened read-only (nothing is migrated or written). */
export function inspectDatabaseFile(file: string): string[] {
  let client: Database.Database;
  try {
    client = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    return [messageOf(error)];
  }
  try {
    return runIntegrityCheck(client);
  } finally {
    client.close();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

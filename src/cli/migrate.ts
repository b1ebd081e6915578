// `toolseal migrate`: apply the committed migrations (drizzle/ for SQLite, drizzle-pg/ for PostgreSQL, issue 16 §1)
// to the registry's database; `serve` does the same on start.

import { parseArgs } from 'node:util';
import { migrateRegistry } from '../server/index.ts';
import { resolveDatabaseUrl, resolveDataDir } from './config.ts';
import { type ExitCode, writeStdout } from './output.ts';

export const migrateUsage = `toolseal migrate [--database URL | --data DIR]
  Applies the committed migrations to the registry's database, creating it if needed (idempotent; serve also
  does this on start): PostgreSQL at --database (postgres://…, or pglite:[DIR]; or TOOLSEAL_DATABASE_URL),
  else SQLite under --data (default data/, or TOOLSEAL_DATA). Prints the database (never its password).`;

export async function runMigrateCommand(args: string[]): Promise<ExitCode> {
  const { values } = parseArgs({ args, options: { database: { type: 'string' }, data: { type: 'string' } } });
  const where = resolveDatabaseUrl(values.database) ?? resolveDataDir(values.data);
  const { database, dialect } = await migrateRegistry(where);
  await writeStdout(`migrated ${dialect} database ${database}\n`);
  return 0;
}

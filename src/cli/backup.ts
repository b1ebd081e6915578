// `toolseal backup`: an online backup of the registry database to one file (src/server/admin.ts; issue 16 §1).

import { parseArgs } from 'node:util';
import { backupRegistry } from '../server/index.ts';
import { resolveDataDir, resolveUserPath } from './config.ts';
import { type ExitCode, UsageError, writeStdout } from './output.ts';

export const backupUsage = `toolseal backup --out FILE [--data DIR]
  Copies the registry database of --data (default data/, or TOOLSEAL_DATA) to FILE with SQLite's online
  backup: a consistent snapshot, safe while toolseal serve runs on the folder, checked with SQLite's integrity
  check and written atomically (FILE is replaced). The keys folder is not in it: back it up separately. To
  restore, copy FILE to toolseal.db in an empty data folder and start the registry there with the same keys
  (then toolseal fsck). Prints one JSON object: the file, its size, the log entries and versions it holds.`;

export async function runBackupCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { data: { type: 'string' }, out: { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  if (values.out === undefined || values.out === '') throw new UsageError('--out FILE is required');
  const backup = await backupRegistry({ dataDir: resolveDataDir(values.data), out: resolveUserPath(values.out) });
  await writeStdout(`${JSON.stringify({ backup: values.out, ...backup })}\n`);
  return 0;
}

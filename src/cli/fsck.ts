// `toolseal fsck`: re-verify every stored digest, attestation and log entry; non-zero exit on any problem.

import { parseArgs } from 'node:util';
import { checkRegistry } from '../server/index.ts';
import { resolveDatabaseUrl, resolveDataDir, resolveKeysDir } from './config.ts';
import { type ExitCode, writeStdout } from './output.ts';

export const fsckUsage = `toolseal fsck [--data DIR | --database URL] [--keys DIR] [--json]
  Checks the database's own structure (SQLite's integrity check), then re-verifies every stored row: bytes
  against their digest, every attestation's signature and subject, that every attestation is in the log, the
  log's tree against its leaves, and every checkpoint (its signature too, when the log key is in --keys).
  --database URL (or TOOLSEAL_DATABASE_URL): a PostgreSQL registry; its structure check is that every
  immutability trigger is in place (and amcheck's B-tree check of every index, when the extension is installed).
  Exit 0 when all is intact, 1 on any problem (a damaged file is INTEGRITY_ERROR "the database is corrupt").`;

export async function runFsckCommand(args: string[]): Promise<ExitCode> {
  const { values } = parseArgs({
    args,
    options: {
      data: { type: 'string' },
      database: { type: 'string' },
      keys: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  // No database is NOT_FOUND (printed as one JSON line, exit 1, like every refusal).
  const where = resolveDatabaseUrl(values.database) ?? resolveDataDir(values.data);
  const report = await checkRegistry({ dataDir: where, keysDir: resolveKeysDir(values.keys) });
  if (values.json) {
    await writeStdout(`${JSON.stringify(report)}\n`);
  } else {
    const c = report.checked;
    const lines = [
      `checked ${c.blobs} blobs, ${c.versions} versions, ${c.logEntries} log entries, ${c.logNodes} log nodes, ${c.checkpoints} checkpoints (${c.checkpointSignatures} signatures), ${c.approvals} approvals`,
      ...report.problems.map((p) => `PROBLEM ${p.code} ${p.where}: ${p.message}`),
      report.ok ? 'fsck: all intact' : `fsck: ${report.problems.length} problem(s)`,
    ];
    await writeStdout(`${lines.join('\n')}\n`);
  }
  return report.ok ? 0 : 1;
}

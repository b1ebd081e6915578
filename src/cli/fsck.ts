// `toolseal fsck`: re-verify every stored digest, attestation and log entry; non-zero exit on any problem.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runFsck, TransparencyLog } from '../registry/index.ts';
import { resolveDataDir, resolveKeysDir } from './config.ts';
import { writeStdout, type ExitCode } from './output.ts';
import { loadOrCreateLogKey } from '../keys/key-files.ts';
import { openStore } from '../store/sqlite/index.ts';

export const fsckUsage = `toolseal fsck [--data DIR] [--keys DIR] [--json]
  Re-verifies every stored row: bytes against their digest, every attestation's signature and subject,
  that every attestation is in the log, the log's tree against its leaves, and every checkpoint (its
  signature too, when the log key is in --keys). Exit 0 when all is intact, 1 on any problem.`;

export async function runFsckCommand(args: string[]): Promise<ExitCode> {
  const { values } = parseArgs({
    args,
    options: { data: { type: 'string' }, keys: { type: 'string' }, json: { type: 'boolean' } },
  });
  const dataDir = resolveDataDir(values.data);
  if (!existsSync(join(dataDir, 'toolseal.db'))) {
    process.stderr.write(JSON.stringify({ code: 'NOT_FOUND', message: `no registry database in ${dataDir}` }) + '\n');
    return 1;
  }
  const store = openStore({ dataDir });
  try {
    const keysDir = resolveKeysDir(values.keys);
    const logStore = store.latestCheckpoint();
    let verifier: string | undefined;
    if (existsSync(join(keysDir, 'log.private.jwk.json')) && logStore) {
      const origin = logStore.note.slice(0, logStore.note.indexOf('\n'));
      verifier = new TransparencyLog(store, loadOrCreateLogKey(keysDir, false), origin, () => new Date())
        .verifierString;
    }
    const report = await runFsck(store, verifier);
    if (values.json) {
      await writeStdout(JSON.stringify(report) + '\n');
    } else {
      const c = report.checked;
      const lines = [
        `checked ${c.blobs} blobs, ${c.versions} versions, ${c.logEntries} log entries, ${c.logNodes} log nodes, ${c.checkpoints} checkpoints (${c.checkpointSignatures} signatures)`,
        ...report.problems.map((p) => `PROBLEM ${p.code} ${p.where}: ${p.message}`),
        report.ok ? 'fsck: all intact' : `fsck: ${report.problems.length} problem(s)`,
      ];
      await writeStdout(lines.join('\n') + '\n');
    }
    return report.ok ? 0 : 1;
  } finally {
    store.close();
  }
}

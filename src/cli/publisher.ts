// `toolseal publisher add|list|revoke|rotate-token`: manage the publishers of a data folder. A token is printed once
// (only its hash is stored); a revocation or a rotation holds at once, also for a server already running on the folder.

import { parseArgs } from 'node:util';
import { addPublisher, listPublishers, revokePublisher, rotatePublisherToken } from '../server/index.ts';
import { resolveDatabaseUrl, resolveDataDir } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';

export const publisherUsage = `toolseal publisher add NAMESPACE [--data DIR]
  Creates a publisher owning NAMESPACE (reverse-DNS, e.g. io.github.acme; unique case-insensitively)
  and prints only its bearer token on stdout. The token is shown once; only its hash is stored.
toolseal publisher list [--data DIR]
  Prints one JSON object: every publisher's namespace, creation time and whether (and when) it was revoked;
  never a token or a token hash.
toolseal publisher revoke NAMESPACE [--data DIR]
  Revokes the publisher: its token is refused (401) from now on, also by a running server; its manifests
  stay served. Prints one JSON object (revoking again keeps the first time: "alreadyRevoked": true).
toolseal publisher rotate-token NAMESPACE [--data DIR]
  Gives the publisher a new token and prints only it; the old token is refused from now on.
--database URL (or TOOLSEAL_DATABASE_URL) instead of --data: the publishers of a PostgreSQL registry.`;

export async function runPublisherCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { data: { type: 'string' }, database: { type: 'string' } },
    allowPositionals: true,
  });
  const [action, namespace, ...rest] = positionals;
  const dataDir = resolveDatabaseUrl(values.database) ?? resolveDataDir(values.data);
  if (action === 'list' && namespace === undefined) {
    await writeStdout(`${JSON.stringify({ publishers: await listPublishers(dataDir) })}\n`);
    return 0;
  }
  if (namespace === undefined || rest.length > 0) throw new UsageError(publisherUsage);
  if (action === 'add') {
    await writeStdout(`${(await addPublisher(dataDir, namespace)).token}\n`);
  } else if (action === 'rotate-token') {
    await writeStdout(`${(await rotatePublisherToken(dataDir, namespace)).token}\n`);
  } else if (action === 'revoke') {
    await writeStdout(`${JSON.stringify(await revokePublisher(dataDir, namespace))}\n`);
  } else {
    throw new UsageError(publisherUsage);
  }
  return 0;
}

// `toolseal operator add|list|revoke` and `toolseal host add|list|revoke` (issue 13 §3, docs/approvals.md): the
// approval service's principals of a data folder. A token is printed once (only its hash is stored); a revocation
// holds at once, also for a server already running on the folder.

import { parseArgs } from 'node:util';
import { addPrincipal, listPrincipals, type PrincipalKind, revokePrincipal } from '../server/index.ts';
import { resolveDatabaseUrl, resolveDataDir } from './config.ts';
import { type ExitCode, UsageError, writeStdout } from './output.ts';

export const operatorUsage = `toolseal operator add NAME [--data DIR]
  Creates an operator (who approves or denies approval requests; NAME: 1 to 64 of a-z, 0-9, '.', '_', '-')
  and prints only its bearer token on stdout (tso_…). The token is shown once; only its hash is stored.
toolseal operator list [--data DIR]
  Prints one JSON object: every operator's name, creation time and whether (and when) it was revoked.
toolseal operator revoke NAME [--data DIR]
  Revokes the operator: its token is refused (401) from now on, also by a running server.
--database URL (or TOOLSEAL_DATABASE_URL) instead of --data: the operators of a PostgreSQL registry.`;

export const hostUsage = `toolseal host add NAME [--data DIR]
  Creates a host (whose guard asks for and consumes approvals; NAME is the audience its approvals are for)
  and prints only its bearer token on stdout (tsh_…). The token is shown once; only its hash is stored.
toolseal host list [--data DIR]
  Prints one JSON object: every host's name, creation time and whether (and when) it was revoked.
toolseal host revoke NAME [--data DIR]
  Revokes the host: its token is refused (401) from now on, also by a running server.
--database URL (or TOOLSEAL_DATABASE_URL) instead of --data: the hosts of a PostgreSQL registry.`;

export function runOperatorCommand(args: string[]): Promise<ExitCode> {
  return runPrincipalCommand('operator', operatorUsage, args);
}

export function runHostCommand(args: string[]): Promise<ExitCode> {
  return runPrincipalCommand('host', hostUsage, args);
}

async function runPrincipalCommand(kind: PrincipalKind, usage: string, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { data: { type: 'string' }, database: { type: 'string' } },
    allowPositionals: true,
  });
  const [action, name, ...rest] = positionals;
  const dataDir = resolveDatabaseUrl(values.database) ?? resolveDataDir(values.data);
  if (action === 'list' && name === undefined) {
    await writeStdout(`${JSON.stringify({ [`${kind}s`]: await listPrincipals(dataDir, kind) })}\n`);
    return 0;
  }
  if (name === undefined || rest.length > 0) throw new UsageError(usage);
  if (action === 'add') {
    const { token } = await addPrincipal(dataDir, kind, name);
    process.stderr.write(`toolseal: the ${kind} token for ${name} is shown once; keep it (only its hash is stored)\n`);
    await writeStdout(`${token}\n`);
  } else if (action === 'revoke') {
    await writeStdout(`${JSON.stringify(await revokePrincipal(dataDir, kind, name))}\n`);
  } else {
    throw new UsageError(usage);
  }
  return 0;
}

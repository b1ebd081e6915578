// `toolseal keys rotate`: a new signing key becomes active; the old one is retired but kept in the JWKS.

import { parseArgs } from 'node:util';
import { rotateSigningKey } from '../server/index.ts';
import { resolveDatabaseUrl, resolveDataDir, resolveKeysDir } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';

export const keysUsage = `toolseal keys rotate [--data DIR | --database URL] [--keys DIR]
  Generates a new Ed25519 signing key and makes it active; the previous key is retired (it stays in
  /.well-known/jwks.json with its validity window). The rotation is recorded in the transparency log.
  Prints {"retired": kid, "active": kid}. A running server picks the new key up on its next publish.
  DIR is relative to the folder the command was run from. --database URL (or TOOLSEAL_DATABASE_URL) instead
  of --data: a PostgreSQL registry.`;

export async function runKeysCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { data: { type: 'string' }, database: { type: 'string' }, keys: { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length !== 1 || positionals[0] !== 'rotate')
    throw new UsageError(`expected the subcommand rotate, got ${JSON.stringify(positionals.join(' '))}`);
  const result = await rotateSigningKey({
    dataDir: resolveDatabaseUrl(values.database) ?? resolveDataDir(values.data),
    keysDir: resolveKeysDir(values.keys),
    origin: process.env['TOOLSEAL_ORIGIN'] ?? 'http://127.0.0.1',
  });
  await writeStdout(`${JSON.stringify(result)}\n`);
  return 0;
}

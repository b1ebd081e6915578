// `toolseal publisher add NAMESPACE`: create a publisher and print its token, once.

import { parseArgs } from 'node:util';
import { createPublisher } from '../registry/index.ts';
import { resolveDataDir } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { openStore } from '../store/sqlite/index.ts';

export const publisherUsage = `toolseal publisher add NAMESPACE [--data DIR]
  Creates a publisher owning NAMESPACE (reverse-DNS, e.g. io.github.acme; unique case-insensitively)
  and prints only its bearer token on stdout. The token is shown once; only its hash is stored.`;

export async function runPublisherCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({ args, options: { data: { type: 'string' } }, allowPositionals: true });
  const [action, namespace, ...rest] = positionals;
  if (action !== 'add' || namespace === undefined || rest.length > 0) throw new UsageError(publisherUsage);
  const store = openStore({ dataDir: resolveDataDir(values.data) });
  try {
    const { token } = createPublisher(store, namespace);
    await writeStdout(token + '\n');
    return 0;
  } finally {
    store.close();
  }
}

// `toolseal publisher add NAMESPACE`: create a publisher and print its token, once.

import { parseArgs } from 'node:util';
import { addPublisher } from '../server/index.ts';
import { resolveDataDir } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';

export const publisherUsage = `toolseal publisher add NAMESPACE [--data DIR]
  Creates a publisher owning NAMESPACE (reverse-DNS, e.g. io.github.acme; unique case-insensitively)
  and prints only its bearer token on stdout. The token is shown once; only its hash is stored.`;

export async function runPublisherCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({ args, options: { data: { type: 'string' } }, allowPositionals: true });
  const [action, namespace, ...rest] = positionals;
  if (action !== 'add' || namespace === undefined || rest.length > 0) throw new UsageError(publisherUsage);
  const { token } = await addPublisher(resolveDataDir(values.data), namespace);
  await writeStdout(`${token}\n`);
  return 0;
}

// `toolseal witness init|serve`: a C2SP tlog-witness (https://c2sp.org/tlog-witness) for any Ed25519 note-signed log.

import { parseArgs } from 'node:util';
import { initWitness, startWitnessServer } from '../witness/index.ts';
import { resolveUserPath } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';

export const witnessUsage = `toolseal witness init --data DIR --name NAME
  Creates a witness key in DIR (never replaced) and prints its vkey (C2SP signed-note, type 0x04): the line to put
  in a tlog-policy file as \`witness <name> <vkey> <url>\`.
toolseal witness serve --data DIR --listen 127.0.0.1:PORT --log VKEY [--log VKEY ...]
  Serves POST /add-checkpoint (C2SP tlog-witness) for the logs whose note keys are given (the key name is the
  log's origin; \`curl <registry>/v1/log/key\` or the operator gives it). Cosigns each checkpoint consistent with
  the last one it cosigned for that log; its state (DIR/witness-state.txt) is fsynced before it answers.`;

function parseListen(text: string | undefined): { host: string; port: number } {
  const match = text === undefined ? null : /^(\[[0-9a-fA-F:.]+\]|[^:]+):([0-9]{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65_535) throw new UsageError('--listen must be HOST:PORT, for example 127.0.0.1:7380');
  return { host: (match[1] as string).replace(/^\[|\]$/g, ''), port };
}

export async function runWitnessCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      data: { type: 'string' },
      name: { type: 'string' },
      listen: { type: 'string' },
      log: { type: 'string', multiple: true },
    },
    allowPositionals: true,
  });
  const [sub, ...extra] = positionals;
  if (extra.length > 0 || (sub !== 'init' && sub !== 'serve'))
    throw new UsageError(`expected the subcommand init or serve, got ${JSON.stringify(positionals.join(' '))}`);
  if (values.data === undefined) throw new UsageError('--data DIR is required');
  const dataDir = resolveUserPath(values.data);
  if (sub === 'init') {
    if (values.name === undefined) throw new UsageError('--name NAME is required');
    await writeStdout(`${initWitness(dataDir, values.name)}\n`);
    return 0;
  }
  const { host, port } = parseListen(values.listen);
  const witness = await startWitnessServer({ dataDir, host, port, logs: values.log ?? [] });
  try {
    await writeStdout(`toolseal witness listening on ${witness.url}\n  vkey: ${witness.vkey}\n`);
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    await writeStdout(`toolseal witness: ${signal} received, stopping\n`);
  } finally {
    await witness.close();
  }
  return 0;
}

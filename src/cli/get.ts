// `toolseal get NAME@VERSION -o FILE`: verify a manifest fully, then write exactly its signed bytes (atomically).

import { parseArgs } from 'node:util';
import { fetchVerified, lockKey, writeFileAtomic } from '../host/index.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { describeVerified, hostCommandOptions, resolveHostTarget } from './verify.ts';

export const getUsage = `toolseal get NAME@VERSION --registry URL -o FILE [--locked] [--lock FILE] [--log-key KEY] [--jwks FILE]
  Fetches and fully verifies NAME@VERSION (as toolseal verify does; --locked also requires the lockfile's
  digest), then writes the verified bytes to FILE exactly as signed, atomically. Nothing is written when a
  check fails. TOOLSEAL_REGISTRY may stand for --registry. Prints one JSON object.`;

export async function runGetCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...hostCommandOptions, output: { type: 'string', short: 'o' } },
    allowPositionals: true,
  });
  if (positionals.length !== 1 || values.output === undefined || values.output === '') throw new UsageError(getUsage);
  const locked = values.locked === true;
  const target = await resolveHostTarget(positionals[0], values, getUsage, { locked, useLock: false });
  const result = await fetchVerified(target.registry, lockKey(target.name, target.version), target.options);
  await writeFileAtomic(values.output, result.bytes);
  await writeStdout(`${JSON.stringify({ written: values.output, locked, ...describeVerified(result) })}\n`);
  return 0;
}

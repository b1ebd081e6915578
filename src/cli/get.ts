// `toolseal get NAME@VERSION -o FILE`: verify a manifest fully, then write exactly its signed bytes (atomically).

import { parseArgs } from 'node:util';
import { fetchVerified, lockKey } from '../host/index.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { writeUserFileAtomic } from './user-files.ts';
import { checkOneReference, describeVerified, hostCommandOptions, resolveHostTarget, warnIfYanked } from './verify.ts';

export const getUsage = `toolseal get NAME@VERSION --registry URL -o FILE [--locked] [--lock FILE] [--log-key KEY] [--jwks FILE] [--witness-policy FILE]
  Fetches and fully verifies NAME@VERSION (as toolseal verify does; --locked also requires the lockfile's
  digest), then writes the verified bytes to FILE exactly as signed, atomically. Nothing is written when a
  check fails. A version the registry reports yanked is still written, with a warning line on stderr.
  TOOLSEAL_REGISTRY may stand for --registry. Relative paths are relative to the folder the command was
  run from. Prints one JSON object (with the registry's "status").`;

export async function runGetCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...hostCommandOptions, output: { type: 'string', short: 'o' } },
    allowPositionals: true,
  });
  checkOneReference(positionals);
  if (values.output === undefined || values.output === '') throw new UsageError('-o FILE is required');
  const locked = values.locked === true;
  const target = await resolveHostTarget(positionals[0], values, getUsage, { locked, useLock: false });
  const result = await fetchVerified(target.registry, lockKey(target.name, target.version), target.options);
  await writeUserFileAtomic(values.output, result.bytes, '-o');
  await writeStdout(`${JSON.stringify({ written: values.output, locked, ...describeVerified(result) })}\n`);
  warnIfYanked(result, locked);
  return 0;
}

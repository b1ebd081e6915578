// `toolseal get NAME@VERSION -o FILE`: verify a manifest fully, then write exactly its signed bytes (atomically).

import { parseArgs } from 'node:util';
import { fetchVerified, lockKey } from '../host/index.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { writeUserFileAtomic } from './user-files.ts';
import { fetchVerifiedBundle, type FetchVerifiedBundleOptions } from '../verify/index.ts';
import {
  checkOneReference,
  describeVerified,
  describeVerifiedBundle,
  type HostCommandValues,
  hostCommandOptions,
  refuseJwsOnlyFlags,
  resolveHostTarget,
  warnIfYanked,
} from './verify.ts';

export const getUsage = `toolseal get NAME@VERSION --registry URL -o FILE [--bundle FILE] [--locked] [--lock FILE] [--log-key KEY] [--jwks FILE] [--witness-policy FILE]
  Fetches and fully verifies NAME@VERSION (as toolseal verify does; --locked also requires the lockfile's
  digest), then writes the verified bytes to FILE exactly as signed, atomically. Nothing is written when a
  check fails. A version the registry reports yanked is still written, with a warning line on stderr.
  TOOLSEAL_REGISTRY may stand for --registry. Relative paths are relative to the folder the command was
  run from. Prints one JSON object (with the registry's "status").
  --bundle FILE  verify with the version's Sigstore bundle (GET …/{version}/bundle, docs/sigstore.md) instead of
                 the JWS, and write the bundle to FILE too (for cosign or @sigstore/verify). --locked pins the
                 lockfile's digest; not with --witness-policy yet.`;

export async function runGetCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...hostCommandOptions, output: { type: 'string', short: 'o' }, bundle: { type: 'string' } },
    allowPositionals: true,
  });
  checkOneReference(positionals);
  if (values.output === undefined || values.output === '') throw new UsageError('-o FILE is required');
  if (values.bundle !== undefined) {
    if (values.bundle === '') throw new UsageError('--bundle FILE needs a file');
    return runGetBundle(positionals[0], { ...values, output: values.output, bundle: values.bundle }, getUsage);
  }
  const locked = values.locked === true;
  const target = await resolveHostTarget(positionals[0], values, getUsage, { locked, useLock: false });
  const result = await fetchVerified(target.registry, lockKey(target.name, target.version), target.options);
  await writeUserFileAtomic(values.output, result.bytes, '-o');
  await writeStdout(`${JSON.stringify({ written: values.output, locked, ...describeVerified(result) })}\n`);
  warnIfYanked(result, locked);
  return 0;
}

/**
 * `get NAME@VERSION -o FILE --bundle FILE`: fetch the bytes and GET …/{version}/bundle, verify the bundle, then
 * write both atomically (nothing is written when a check fails). --locked pins the lockfile's digest.
 */
export async function runGetBundle(
  ref: string | undefined,
  values: HostCommandValues & { bundle: string; output: string },
  usage: string,
): Promise<ExitCode> {
  refuseJwsOnlyFlags(values);
  const locked = values.locked === true;
  const target = await resolveHostTarget(ref, values, usage, { locked, useLock: false });
  const options: FetchVerifiedBundleOptions = {};
  if (values['log-key'] !== undefined) options.logKey = values['log-key'];
  if (target.options.jwks !== undefined) options.jwks = target.options.jwks;
  if (target.options.timeoutMs !== undefined) options.timeoutMs = target.options.timeoutMs;
  if (target.options.lock !== undefined) options.expectedDigest = target.options.lock.digest;
  const result = await fetchVerifiedBundle(target.registry, `${target.name}@${target.version}`, options);
  await writeUserFileAtomic(values.output, result.bytes, '-o');
  await writeUserFileAtomic(values.bundle, result.bundle, '--bundle');
  const line = { written: values.output, bundle: values.bundle, locked, ...describeVerifiedBundle(result) };
  await writeStdout(`${JSON.stringify(line)}\n`);
  return 0;
}

// `toolseal pin NAME@VERSION`: verify a manifest fully, then add or update its entry in the lockfile.

import { parseArgs } from 'node:util';
import { emptyLockfile, fetchVerified, lockKey, setLockEntry, writeLockfile } from '../host/index.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { describeVerified, hostCommandOptions, resolveHostTarget } from './verify.ts';

export const pinUsage = `toolseal pin NAME@VERSION --registry URL [--lock FILE] [--log-key KEY] [--jwks FILE]
  Fetches and fully verifies NAME@VERSION (as toolseal verify does), then records its digest, signing kid,
  log index and registry in the lockfile (default ./toolseal.lock), written atomically. Pinning an entry
  again replaces it; the output says whether the digest changed. TOOLSEAL_REGISTRY may stand for --registry.
  Prints one JSON object.`;

export async function runPinCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({ args, options: hostCommandOptions, allowPositionals: true });
  if (positionals.length !== 1) throw new UsageError(pinUsage);
  if (values.locked) throw new UsageError(`pin does not take --locked\n${pinUsage}`);
  const target = await resolveHostTarget(positionals[0], values, pinUsage, { locked: false, useLock: true });
  const result = await fetchVerified(target.registry, lockKey(target.name, target.version), target.options);
  const previous = target.lockEntry;
  const lock = setLockEntry(target.lock ?? emptyLockfile(result.registry), result.name, result.version, {
    digest: result.digest,
    kid: result.kid,
    logIndex: result.logIndex,
    registry: result.registry,
  });
  await writeLockfile(target.lockPath, lock);
  const same =
    previous !== undefined &&
    previous.digest === result.digest &&
    previous.kid === result.kid &&
    previous.logIndex === result.logIndex &&
    previous.registry === result.registry;
  const change = previous === undefined ? 'added' : same ? 'unchanged' : 'updated';
  await writeStdout(
    `${JSON.stringify({
      pinned: true,
      change,
      ...(previous !== undefined && previous.digest !== result.digest ? { previousDigest: previous.digest } : {}),
      lock: target.lockPath,
      ...describeVerified(result),
    })}\n`,
  );
  return 0;
}

// `toolseal pin NAME@VERSION`: verify a manifest fully, then add or update its entry in the lockfile. A version the
// registry reports yanked is not pinned (VERSION_YANKED) unless --allow-yanked (cargo's yank semantics).

import { parseArgs } from 'node:util';
import { ToolsealError } from '../core/errors.ts';
import { normaliseRegistryUrl, RegistryClient } from '../client/registry-client.ts';
import { emptyLockfile, lockKey, setLockEntry, writeLockfile } from '../host/index.ts';
import { getRegistryKeyPins, setRegistryKeyPins } from '../lock/lockfile.ts';
import { describeRegistryKeys } from '../verify/key-pins.ts';
import { fetchVerifiedOrCached } from '../verify/manifest-cache.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { withUserFile } from './user-files.ts';
import { checkOneReference, describeVerified, hostCommandOptions, resolveHostTarget, warnIfYanked } from './verify.ts';

export const pinUsage = `toolseal pin NAME@VERSION --registry URL [--lock FILE] [--log-key KEY] [--jwks FILE] [--witness-policy FILE] [--allow-yanked]
  Fetches and fully verifies NAME@VERSION (as toolseal verify does), then records its digest, signing kid,
  log index and registry in the lockfile (default ./toolseal.lock), written atomically, with the registry's
  attestation-key thumbprints and log key ("registryKeys": what --locked then accepts from that registry; the
  output's "keys" says whether they were added, unchanged or updated). With --witness-policy the policy's
  sha256 is pinned too ("witnessPolicy"): verify/guard --locked then refuse to run without that very policy
  (KEY_NOT_PINNED), so a pinned host keeps the witness quorum it pinned with. The verified manifest is also kept in
  the offline cache (see toolseal guard). Pinning an entry again replaces it; the output says whether the
  digest changed. TOOLSEAL_REGISTRY may stand for --registry.
  A version the registry reports yanked is refused (VERSION_YANKED, the lockfile is left as it was) unless
  --allow-yanked; entries already pinned keep verifying with --locked. Relative paths are relative to the
  folder the command was run from. Prints one JSON object (with the registry's "status").`;

export async function runPinCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...hostCommandOptions, 'allow-yanked': { type: 'boolean' } },
    allowPositionals: true,
  });
  checkOneReference(positionals);
  if (values.locked) throw new UsageError('pin does not take --locked');
  const target = await resolveHostTarget(positionals[0], values, pinUsage, { locked: false, useLock: true });
  const allowYanked = values['allow-yanked'] === true;
  const ref = lockKey(target.name, target.version);
  // The keys the manifest is verified with are the keys pinned: the registry's now (trust on first use), unless
  // --jwks or --log-key name them.
  const registryClient = new RegistryClient(normaliseRegistryUrl(target.registry), target.options);
  const [jwks, logKey] = await Promise.all([
    target.options.jwks ?? registryClient.jwks(),
    target.options.logKey ?? registryClient.logKey(),
  ]);
  const result = await fetchVerifiedOrCached(target.registry, ref, {
    ...target.options,
    jwks,
    logKey,
    yanked: allowYanked ? 'allow' : 'refuse',
  }).catch((error: unknown) => {
    if (error instanceof ToolsealError && error.code === 'VERSION_YANKED')
      throw new ToolsealError('VERSION_YANKED', `${error.message}; not pinned (--allow-yanked pins it anyway)`);
    throw error;
  });
  const previous = target.lockEntry;
  const keys = describeRegistryKeys(jwks, logKey, target.options.witnessPolicy);
  const previousKeys = getRegistryKeyPins(target.lock, result.registry);
  const keysChanged =
    previousKeys !== undefined &&
    (previousKeys.logKey !== keys.logKey ||
      previousKeys.attestationKeys.join() !== keys.attestationKeys.join() ||
      previousKeys.witnessPolicy !== keys.witnessPolicy);
  const entries = setLockEntry(target.lock ?? emptyLockfile(result.registry), result.name, result.version, {
    digest: result.digest,
    kid: result.kid,
    logIndex: result.logIndex,
    registry: result.registry,
  });
  const lock = setRegistryKeyPins(entries, result.registry, keys);
  await withUserFile(target.lockPath, '--lock', (path) => writeLockfile(path, lock), 'write');
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
      keys: previousKeys === undefined ? 'added' : keysChanged ? 'updated' : 'unchanged',
      lock: target.lockPath,
      ...describeVerified(result),
    })}\n`,
  );
  warnIfYanked(result, true);
  return 0;
}

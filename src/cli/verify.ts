// `toolseal verify NAME@VERSION`: fetch and fully verify a manifest (signature, digest, subject, key window, log
// inclusion); with --locked, refuse anything that is not the lockfile's pinned digest. Shared by pin and get.

import { parseArgs } from 'node:util';
import { ToolsealError } from '../core/errors.ts';
import { parseStrict } from '../pipeline/index.ts';
import {
  DEFAULT_LOCKFILE_NAME,
  fetchVerified,
  getLockEntry,
  lockKey,
  parseManifestRef,
  readLockfile,
  type FetchVerifiedOptions,
  type FetchedManifest,
  type Jwks,
  type LockEntry,
  type Lockfile,
} from '../host/index.ts';
import { parsePositiveInteger, resolveRegistryUrl } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { readUserFile, withUserFile } from './user-files.ts';
import { escapePointerToken } from '../core/json-pointer.ts';
import {
  createVerifier,
  type FetchedBundle,
  type FetchVerifiedBundleOptions,
  fetchVerifiedBundle,
  parseWitnessPolicy,
  type WitnessPolicy,
} from '../verify/index.ts';
import { fetchVerifiedOrCached } from '../verify/manifest-cache.ts';
import { getRegistryKeyPins } from '../lock/lockfile.ts';
import { normaliseRegistryUrl } from '../client/registry-client.ts';
import { parsePublisherClaimArgument, type PublisherClaimExpectation } from '../verify/publisher-claim.ts';

export const verifyUsage = `toolseal verify NAME@VERSION --registry URL [--locked] [--lock FILE] [--log-key KEY] [--jwks FILE] [--witness-policy FILE]
toolseal verify --locked --all [--registry URL] [--lock FILE] [--log-key KEY] [--jwks FILE] [--witness-policy FILE]
toolseal verify NAME@VERSION --bundle FILE [--manifest FILE] [--registry URL] [--log-key KEY] [--jwks FILE]
  Fetches NAME@VERSION and its attestation and verifies: the Ed25519 signature (key by kid, valid when the
  registry stored it), sha256 of the bytes against the attestation, the subject name@version, and the
  attestation's inclusion in the transparency log under a checkpoint signed by the log key.
  --locked      also require the digest pinned in the lockfile (PIN_MISMATCH otherwise, and for a missing entry)
  --all         with --locked: verify every entry of the lockfile, in its order, with one verifier (a checkpoint
                is verified once, a newer one only with a consistency proof from it; keys fetched once per
                registry). Prints one JSON object per entry, {"verified": false, ..., "error": {code, message}}
                for one that fails (the others still run); exits 1 when any failed. The registry of each entry
                is --registry, TOOLSEAL_REGISTRY, the entry's, then the lockfile's.
  --lock FILE   the lockfile (default ./${DEFAULT_LOCKFILE_NAME})
  --log-key K   pin the log's note verifier key (else fetched from the registry: trust on first use)
  --witness-policy FILE  a C2SP tlog-policy: the checkpoint must carry its witness quorum (else WITNESS_QUORUM)
  --jwks FILE   pin the attestation keys (else the registry's JWKS is fetched: trust on first use)
  --timeout MS  per-request timeout (default 10000)
  --bundle FILE verify a Sigstore bundle v0.3 (docs/sigstore.md) instead of the JWS: the DSSE signature by a
                P-256 bundle key of the JWKS, the statement, and the hashedrekord leaf rebuilt from the bundle proven
                in the log. --manifest FILE: the bytes (else fetched). With --manifest, --jwks and --log-key nothing
                is fetched. Not with --locked, --all or --witness-policy yet.
  --expect-publisher-claim NAME=VALUE  (repeatable) the attestation's provenance must carry exactly this claim
                (repository, workflow_ref, sha, run_id, environment, issuer, subject, publisher, method), else
                PUBLISHER_MISMATCH: e.g. repository=acme/payments-mcp (docs/trusted-publishing.md)
  TOOLSEAL_REGISTRY may stand for --registry; the lockfile's registry is the last fallback. Relative paths are
  relative to the folder the command was run from (also under npm run).
  Prints one JSON object, with the registry's "status" ("active" or "yanked", and "yankReason"); a yanked
  version still verifies (a warning line goes to stderr). The status is the registry's word, not proven.`;

/** Options every host command shares (pin, verify, get). */
export const hostCommandOptions = {
  registry: { type: 'string' },
  lock: { type: 'string' },
  locked: { type: 'boolean' },
  'log-key': { type: 'string' },
  jwks: { type: 'string' },
  timeout: { type: 'string' },
  'witness-policy': { type: 'string' },
  'expect-publisher-claim': { type: 'string', multiple: true },
} as const;

export interface HostCommandValues {
  registry?: string | undefined;
  lock?: string | undefined;
  locked?: boolean | undefined;
  'log-key'?: string | undefined;
  jwks?: string | undefined;
  timeout?: string | undefined;
  'witness-policy'?: string | undefined;
  'expect-publisher-claim'?: string[] | undefined;
}

export interface HostCommandTarget {
  name: string;
  version: string;
  lockPath: string;
  lock: Lockfile | undefined;
  lockEntry: LockEntry | undefined;
  registry: string;
  options: FetchVerifiedOptions;
}

/** The one NAME@VERSION argument pin, verify and get take. */
export function checkOneReference(positionals: readonly string[]): void {
  if (positionals.length === 0) throw new UsageError('missing NAME@VERSION');
  if (positionals.length > 1) throw new UsageError(`expected one NAME@VERSION, got ${positionals.length} arguments`);
}

/**
 * Parse NAME@VERSION, the registry and the pinned keys; the lockfile is read when it is needed (`useLock`: pin and
 * --locked) or when no registry is given (its registry is the fallback). With `locked`, the entry must exist.
 */
export async function resolveHostTarget(
  ref: string | undefined,
  values: HostCommandValues,
  usage: string,
  mode: { locked: boolean; useLock: boolean },
): Promise<HostCommandTarget> {
  if (ref === undefined) throw new UsageError(usage);
  let parsed: ReturnType<typeof parseManifestRef>;
  try {
    parsed = parseManifestRef(ref);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (parsed.kind !== 'version') throw new UsageError('expected NAME@VERSION, not a digest');
  const { name, version } = parsed;
  const lockPath = values.lock ?? DEFAULT_LOCKFILE_NAME;
  const explicitRegistry = values.registry ?? process.env['TOOLSEAL_REGISTRY'];
  const lock =
    mode.useLock || mode.locked || explicitRegistry === undefined
      ? await withUserFile(lockPath, '--lock', readLockfile)
      : undefined;
  const lockEntry = getLockEntry(lock, name, version);
  if (mode.locked) {
    const pointer = `/manifests/${escapePointerToken(lockKey(name, version))}`;
    if (lock === undefined)
      throw new ToolsealError(
        'PIN_MISMATCH',
        `--locked: there is no lockfile at ${lockPath}; run toolseal pin ${lockKey(name, version)} first`,
      );
    if (lockEntry === undefined)
      throw new ToolsealError('PIN_MISMATCH', `--locked: ${lockKey(name, version)} is not pinned in ${lockPath}`, {
        pointer,
      });
  }
  // --registry, then TOOLSEAL_REGISTRY, then where the lockfile says the entry (or the project) comes from.
  const registry = resolveRegistryUrl(explicitRegistry ?? lockEntry?.registry ?? lock?.registry);
  const options: FetchVerifiedOptions = {};
  if (values['log-key'] !== undefined) options.logKey = values['log-key'];
  if (values.jwks !== undefined) options.jwks = await readJwksFile(values.jwks);
  if (values['witness-policy'] !== undefined)
    options.witnessPolicy = await readWitnessPolicyFile(values['witness-policy']);
  const timeout = parsePositiveInteger(values.timeout, '--timeout');
  if (timeout !== undefined) options.timeoutMs = timeout;
  const publisherClaims = readPublisherClaimFlags(values['expect-publisher-claim']);
  if (publisherClaims !== undefined) options.expectPublisherClaim = publisherClaims;
  if (mode.locked && lockEntry !== undefined) options.lock = lockEntry;
  // --locked also holds the registry to the keys pinned with the entry (KEY_NOT_PINNED for any other).
  const registryKeys = mode.locked ? getRegistryKeyPins(lock, normaliseRegistryUrl(registry)) : undefined;
  if (registryKeys !== undefined) options.registryKeys = registryKeys;
  return { name, version, lockPath, lock, lockEntry, registry, options };
}

/** `--expect-publisher-claim NAME=VALUE`, repeated (issue 28 §3): what the attestation's provenance must say. */
export function readPublisherClaimFlags(flags: readonly string[] | undefined): PublisherClaimExpectation | undefined {
  if (flags === undefined || flags.length === 0) return undefined;
  let expected: PublisherClaimExpectation = {};
  for (const flag of flags) {
    try {
      expected = parsePublisherClaimArgument(flag, expected);
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
  }
  return expected;
}

/** A C2SP tlog-policy file (`--witness-policy FILE`), relative to the user's folder; refusals name the line. */
export async function readWitnessPolicyFile(path: string): Promise<WitnessPolicy> {
  return parseWitnessPolicy(new Uint8Array(await readUserFile(path, '--witness-policy')));
}

/** A pinned JWKS file (`--jwks FILE`), read strictly, relative to the user's folder. */
export async function readJwksFile(path: string): Promise<Jwks> {
  const value = parseStrict(await readUserFile(path, '--jwks'), { maxBytes: 1024 * 1024, maxDepth: 16 }).value;
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray(value['keys'])) {
    throw new UsageError(`--jwks ${path} is not a JWKS ({"keys": [...]})`);
  }
  return value as unknown as Jwks;
}

/** The facts every host command prints about a verified manifest (the status as the registry reports it). */
export function describeVerified(result: FetchedManifest): Record<string, unknown> {
  return {
    name: result.name,
    version: result.version,
    digest: result.digest,
    size: result.bytes.byteLength,
    kid: result.kid,
    storedAt: result.storedAt,
    logIndex: result.logIndex,
    checkpoint: { origin: result.checkpoint.origin, size: result.checkpoint.size },
    registry: result.registry,
    ...(result.status === undefined ? {} : { status: result.status }),
    ...(result.yankReason === undefined ? {} : { yankReason: result.yankReason }),
  };
}

/**
 * A yanked version that is used anyway (verify, get, a --locked entry, pin --allow-yanked): one warning line of
 * JSON on stderr (cargo's yank semantics: an existing lock entry keeps working, a new pin is refused).
 */
export function warnIfYanked(result: FetchedManifest, locked: boolean): void {
  if (result.status !== 'yanked') return;
  const ref = lockKey(result.name, result.version);
  const reason = result.yankReason === undefined ? '' : ` (${JSON.stringify(result.yankReason)})`;
  const advice = locked ? 'the lock entry still verifies; move to another version' : 'do not pin it';
  process.stderr.write(
    `${JSON.stringify({ warning: 'VERSION_YANKED', message: `${ref} is yanked by the registry${reason}; ${advice}` })}\n`,
  );
}

export async function runVerifyCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      ...hostCommandOptions,
      all: { type: 'boolean' },
      bundle: { type: 'string' },
      manifest: { type: 'string' },
    },
    allowPositionals: true,
  });
  if (values.bundle !== undefined) {
    checkOneReference(positionals);
    return runVerifyBundle(positionals[0], { ...values, bundle: values.bundle });
  }
  if (values.manifest !== undefined) throw new UsageError('--manifest FILE goes with --bundle FILE');
  if (values.all === true) return runVerifyAll(positionals, values);
  checkOneReference(positionals);
  const locked = values.locked === true;
  const target = await resolveHostTarget(positionals[0], values, verifyUsage, { locked, useLock: false });
  const result = await fetchVerified(target.registry, lockKey(target.name, target.version), target.options);
  await writeStdout(`${JSON.stringify({ verified: true, locked, ...describeVerified(result) })}\n`);
  warnIfYanked(result, locked);
  return 0;
}

/** `verify --locked --all`: every lockfile entry through one verifier (src/verify/verifier.ts), one line each. */
async function runVerifyAll(positionals: readonly string[], values: HostCommandValues): Promise<ExitCode> {
  if (positionals.length > 0) throw new UsageError('--all verifies the whole lockfile: give no NAME@VERSION');
  if (values.locked !== true) throw new UsageError('--all verifies the lockfile: use it with --locked');
  const lockPath = values.lock ?? DEFAULT_LOCKFILE_NAME;
  const lock = await withUserFile(lockPath, '--lock', readLockfile);
  if (lock === undefined)
    throw new ToolsealError('PIN_MISMATCH', `--locked: there is no lockfile at ${lockPath}; run toolseal pin first`);
  const explicitRegistry = values.registry ?? process.env['TOOLSEAL_REGISTRY'];
  const options: FetchVerifiedOptions = {};
  if (values['log-key'] !== undefined) options.logKey = values['log-key'];
  if (values.jwks !== undefined) options.jwks = await readJwksFile(values.jwks);
  if (values['witness-policy'] !== undefined)
    options.witnessPolicy = await readWitnessPolicyFile(values['witness-policy']);
  const timeout = parsePositiveInteger(values.timeout, '--timeout');
  if (timeout !== undefined) options.timeoutMs = timeout;
  const publisherClaims = readPublisherClaimFlags(values['expect-publisher-claim']);
  if (publisherClaims !== undefined) options.expectPublisherClaim = publisherClaims;
  const verifier = createVerifier();
  let failed = false;
  for (const [key, entry] of Object.entries(lock.manifests)) {
    const registry = resolveRegistryUrl(explicitRegistry ?? entry.registry ?? lock.registry);
    try {
      const registryKeys = getRegistryKeyPins(lock, normaliseRegistryUrl(registry));
      const result = await verifier.fetchVerified(registry, key, {
        ...options,
        lock: entry,
        ...(registryKeys === undefined ? {} : { registryKeys }),
      });
      await writeStdout(`${JSON.stringify({ verified: true, locked: true, ...describeVerified(result) })}\n`);
      warnIfYanked(result, true);
    } catch (error) {
      if (!(error instanceof ToolsealError)) throw error;
      failed = true;
      const { name, version } = parseLockKey(key);
      const line = { verified: false, locked: true, name, version, registry, error: error.toJSON() };
      await writeStdout(`${JSON.stringify(line)}\n`);
    }
  }
  return failed ? 1 : 0;
}

/** `namespace/name@version` of a lockfile key (as written by lockKey), for the failure line. */
function parseLockKey(key: string): { name: string; version: string } {
  const at = key.lastIndexOf('@');
  return at < 0 ? { name: key, version: '' } : { name: key.slice(0, at), version: key.slice(at + 1) };
}

/**
 * The manifest guard starts from (stdio and HTTP): fetched and verified, and kept in the offline cache; with
 * --locked and the registry unreachable, the cached copy verified again offline, said on stderr as one JSON line
 * ({"event":"offline",…}).
 */
export function fetchGuardManifest(target: {
  registry: string;
  ref: string;
  options: FetchVerifiedOptions;
}): Promise<FetchedManifest> {
  return fetchVerifiedOrCached(target.registry, target.ref, {
    ...target.options,
    onOfflineStart: (start) =>
      process.stderr.write(
        `${JSON.stringify({
          event: 'offline',
          message: 'the registry could not be reached: starting from the cached copy, verified again offline',
          ...start,
        })}\n`,
      ),
  });
}

/** The facts `verify --bundle` and `get --bundle` print about a verified bundle. */
export function describeVerifiedBundle(result: FetchedBundle): Record<string, unknown> {
  return {
    format: 'bundle',
    name: result.name,
    version: result.version,
    digest: result.digest,
    size: result.bytes.byteLength,
    kid: result.kid,
    storedAt: result.storedAt,
    integratedTime: result.integratedTime,
    logIndex: result.logIndex,
    checkpoint: { origin: result.checkpoint.origin, size: result.checkpoint.size },
    ...(result.registry === undefined ? {} : { registry: result.registry }),
  };
}

export function refuseJwsOnlyFlags(values: HostCommandValues & { all?: boolean | undefined }): void {
  if (values['witness-policy'] !== undefined) throw new UsageError('--bundle does not take --witness-policy yet');
  if (values.all === true) throw new UsageError('--bundle verifies one version: not with --all');
}

/**
 * `verify NAME@VERSION --bundle FILE [--manifest FILE]`: the local bundle over the local bytes (or the registry's);
 * the bundle keys (--jwks) and the log key (--log-key) pinned, or fetched from the registry (trust on first use).
 * Nothing is fetched when all of them are given.
 */
export async function runVerifyBundle(
  ref: string | undefined,
  values: HostCommandValues & { bundle: string; manifest?: string | undefined; all?: boolean | undefined },
): Promise<ExitCode> {
  refuseJwsOnlyFlags(values);
  if (ref === undefined) throw new UsageError('missing NAME@VERSION');
  if (values.locked === true) throw new UsageError('--bundle does not take --locked yet: give --manifest FILE');
  const options: FetchVerifiedBundleOptions = { bundle: new Uint8Array(await readUserFile(values.bundle, '--bundle')) };
  if (values.manifest !== undefined) options.bytes = new Uint8Array(await readUserFile(values.manifest, '--manifest'));
  if (values.jwks !== undefined) options.jwks = await readJwksFile(values.jwks);
  if (values['log-key'] !== undefined) options.logKey = values['log-key'];
  const timeout = parsePositiveInteger(values.timeout, '--timeout');
  if (timeout !== undefined) options.timeoutMs = timeout;
  const needsRegistry = options.bytes === undefined || options.jwks === undefined || options.logKey === undefined;
  const explicit = values.registry ?? process.env['TOOLSEAL_REGISTRY'];
  const registry = needsRegistry || explicit !== undefined ? resolveRegistryUrl(explicit) : undefined;
  if (parseReference(ref).kind !== 'version') throw new UsageError('expected NAME@VERSION, not a digest');
  const result = await fetchVerifiedBundle(registry, ref, options);
  await writeStdout(`${JSON.stringify({ verified: true, ...describeVerifiedBundle(result) })}\n`);
  return 0;
}

function parseReference(ref: string): ReturnType<typeof parseManifestRef> {
  try {
    return parseManifestRef(ref);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

// The offline cache of verified manifests (issue 23 §6): every manifest fetched and verified is kept with all of its
// evidence (bytes, attestation, inclusion proof with its signed checkpoint, the keys it was verified with) under the
// user's cache folder (XDG Base Directory: $XDG_CACHE_HOME/toolseal, else ~/.cache/toolseal; TOOLSEAL_CACHE_DIR
// overrides). When the registry cannot be reached, a `--locked` start takes the cached copy, but only after verifying
// all of it again offline (verifyFetched: pin, attestation, subject, inclusion under the log key) against the
// lockfile's digest and its pinned keys. Nothing in the cache is trusted for being there.

import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { Jwks } from '../attest/index.ts';
import { decodeBase64Strict, encodeBase64 } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { writeFileAtomic } from '../lock/atomic-file.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { formatManifestRef, parseManifestRef } from '../protocol/manifest-ref.ts';
import { normaliseRegistryUrl } from '../client/registry-client.ts';
import { type FetchedManifest, type FetchVerifiedOptions, fetchVerified } from './fetch-verified.ts';
import { checkPinnedLogKey, checkPinnedWitnessPolicy, refuseUnpinnedKey, selectPinnedKeys } from './key-pins.ts';
import type { InclusionEvidence } from './log-evidence.ts';
import { type VerifyFetchedInput, verifyFetched } from './verify-fetched.ts';

const CACHE_VERSION = 1;

/** The cache folder: TOOLSEAL_CACHE_DIR, else $XDG_CACHE_HOME/toolseal (an absolute path only), else ~/.cache/toolseal. */
export function resolveCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const own = env['TOOLSEAL_CACHE_DIR'];
  if (own !== undefined && own !== '') return own;
  const xdg = env['XDG_CACHE_HOME'];
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'toolseal');
  return join(homedir(), '.cache', 'toolseal');
}

/** What guard is told when it starts from the cache. */
export interface OfflineStart {
  registry: string;
  manifest: string;
  digest: string;
  /** Why the registry could not be used (the refusal's message). */
  reason: string;
}

export interface CachedFetchOptions extends FetchVerifiedOptions {
  /** The cache folder (default resolveCacheDir()). */
  cacheDir?: string;
  /** Told when the manifest came from the cache (the registry being unreachable). */
  onOfflineStart?: (start: OfflineStart) => void;
}

/**
 * fetchVerified, keeping what it verified in the cache; when the registry cannot be reached (FETCH_FAILED) and the
 * reference is locked (`options.lock`), the cached copy verified again offline instead. Verification refusals
 * (a bad signature, a pin or key mismatch) are never answered from the cache.
 */
export async function fetchVerifiedOrCached(
  registryUrl: string,
  ref: string,
  options: CachedFetchOptions = {},
): Promise<FetchedManifest> {
  const dir = options.cacheDir ?? resolveCacheDir();
  let seen: VerifyFetchedInput | undefined;
  try {
    const result = await fetchVerified(registryUrl, ref, {
      ...options,
      onVerified: (input, verified) => {
        seen = input;
        options.onVerified?.(input, verified);
      },
    });
    if (seen !== undefined) await writeCachedManifest(dir, result, seen).catch(() => undefined); // best effort
    return result;
  } catch (error) {
    if (!(error instanceof ToolsealError) || error.code !== 'FETCH_FAILED' || options.lock === undefined) throw error;
    const cached = await readCachedManifest(dir, registryUrl, ref, options);
    if (cached === undefined) {
      throw new ToolsealError('FETCH_FAILED', `${error.message}; and no verified copy of ${ref} is cached`, {
        cause: error,
      });
    }
    options.onOfflineStart?.({
      registry: cached.registry,
      manifest: formatManifestRef(cached.name, cached.version),
      digest: cached.digest,
      reason: error.message,
    });
    return cached;
  }
}

function cacheFile(dir: string, registry: string, ref: string): string {
  const key = createHash('sha256').update(`${registry}\n${ref}`).digest('hex');
  return join(dir, 'manifests', `${key}.json`);
}

function encodeInclusion(inclusion: InclusionEvidence | undefined): JsonValue | undefined {
  if (inclusion === undefined || typeof inclusion === 'string') return inclusion;
  const hashes = inclusion.hashes.map((hash) => (typeof hash === 'string' ? hash : encodeBase64(hash)));
  const { index, size, checkpoint } = inclusion;
  return size === undefined ? { index, hashes, checkpoint } : { index, size, hashes, checkpoint };
}

/** Keep a verified manifest and its evidence (written atomically; the folder private to the user). */
export async function writeCachedManifest(
  dir: string,
  result: FetchedManifest,
  input: VerifyFetchedInput,
): Promise<void> {
  const inclusion = encodeInclusion(input.inclusion);
  if (typeof input.logKey !== 'string' || inclusion === undefined) return; // a parsed verifier: not ours to keep
  const ref = formatManifestRef(result.name, result.version);
  const entry: JsonObject = {
    cacheVersion: CACHE_VERSION,
    registry: result.registry,
    manifest: ref,
    digest: result.digest,
    bytes: encodeBase64(result.bytes),
    attestation: encodeBase64(input.attestation),
    inclusion,
    jwks: JSON.parse(JSON.stringify(Array.isArray(input.jwks) ? { keys: input.jwks } : input.jwks)) as JsonObject,
    logKey: input.logKey,
    ...(result.status === undefined ? {} : { status: result.status }),
    ...(result.yankReason === undefined ? {} : { yankReason: result.yankReason }),
  };
  await mkdir(join(dir, 'manifests'), { recursive: true, mode: 0o700 });
  await writeFileAtomic(cacheFile(dir, result.registry, ref), `${JSON.stringify(entry)}\n`, 0o600);
}

/**
 * The cached copy of `ref` from `registryUrl`, verified again offline as `options` asks (the lockfile's digest and
 * keys; --jwks and --log-key over the cached keys); undefined when nothing is cached. A cached copy that does not
 * verify is refused with the verification's code.
 */
export async function readCachedManifest(
  dir: string,
  registryUrl: string,
  ref: string,
  options: FetchVerifiedOptions = {},
): Promise<FetchedManifest | undefined> {
  const registry = normaliseRegistryUrl(registryUrl);
  const target = parseManifestRef(ref);
  if (target.kind !== 'version') return undefined;
  let text: Uint8Array;
  try {
    text = await readFile(cacheFile(dir, registry, ref));
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
  const entry = readEntry(text, registry, ref);
  const pins = options.registryKeys;
  const logKey = options.logKey ?? entry.logKey;
  if (pins) checkPinnedLogKey(logKey, pins, registry);
  if (pins) checkPinnedWitnessPolicy(options.witnessPolicy, pins, registry);
  const keys: Jwks = (options.jwks as Jwks | undefined) ?? entry.jwks;
  const pin = options.expectedDigest ?? options.lock?.digest;
  const input: VerifyFetchedInput = {
    bytes: entry.bytes,
    attestation: entry.attestation,
    inclusion: entry.inclusion,
    jwks: pins ? selectPinnedKeys(keys, pins) : keys,
    logKey,
    expected: { name: target.name, version: target.version, ...(pin === undefined ? {} : { digest: pin }) },
    ...(options.witnessPolicy === undefined ? {} : { witnessPolicy: options.witnessPolicy }),
  };
  let verified: ReturnType<typeof verifyFetched>;
  try {
    verified = verifyFetched(input);
  } catch (error) {
    throw pins ? refuseUnpinnedKey(error, registry) : error;
  }
  return { ...verified, registry, status: entry.status, yankReason: entry.yankReason };
}

interface CacheEntry {
  bytes: Uint8Array;
  attestation: Uint8Array;
  inclusion: InclusionEvidence;
  jwks: Jwks;
  logKey: string;
  status: string | undefined;
  yankReason: string | undefined;
}

/** A cache file, read strictly; anything else is FETCH_FAILED (a damaged cache is no evidence). */
function readEntry(bytes: Uint8Array, registry: string, ref: string): CacheEntry {
  const damaged = (): ToolsealError =>
    new ToolsealError('FETCH_FAILED', `the cached copy of ${ref} is damaged; fetch it again from the registry`);
  let value: JsonValue;
  try {
    value = parseStrict(bytes, { maxBytes: 64 * 1024 * 1024, maxDepth: 1000 }).value;
  } catch {
    throw damaged();
  }
  if (!isJsonObject(value) || value['cacheVersion'] !== CACHE_VERSION) throw damaged();
  if (value['registry'] !== registry || value['manifest'] !== ref) throw damaged();
  const manifest = typeof value['bytes'] === 'string' ? decodeBase64Strict(value['bytes']) : undefined;
  const attestation = typeof value['attestation'] === 'string' ? decodeBase64Strict(value['attestation']) : undefined;
  const { inclusion, jwks, logKey, status, yankReason } = value;
  const inclusionOk =
    typeof inclusion === 'string' ||
    (isJsonObject(inclusion) &&
      typeof inclusion['index'] === 'number' &&
      typeof inclusion['checkpoint'] === 'string' &&
      Array.isArray(inclusion['hashes']) &&
      inclusion['hashes'].every((hash) => typeof hash === 'string'));
  if (
    manifest === undefined ||
    attestation === undefined ||
    !inclusionOk ||
    !isJsonObject(jwks) ||
    typeof logKey !== 'string' ||
    (status !== undefined && typeof status !== 'string') ||
    (yankReason !== undefined && typeof yankReason !== 'string')
  ) {
    throw damaged();
  }
  return {
    bytes: manifest,
    attestation,
    inclusion: inclusion as InclusionEvidence,
    jwks: jwks as unknown as Jwks,
    logKey,
    status,
    yankReason,
  };
}

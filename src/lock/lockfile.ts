// toolseal.lock: pins name@version → digest (plus the kid and log index it was verified with), read strictly, written stably.
//
// {
//   "lockfileVersion": 1,
//   "registry": "http://127.0.0.1:8787",            optional: the default registry for entries
//   "registryKeys": {                                 optional: each registry's keys as `pin` found them
//     "http://127.0.0.1:8787": { "attestationKeys": ["<RFC 7638 thumbprint>", …], "logKey": "<C2SP verifier>",
//                                "witnessPolicy": "sha256:…" }     optional: the C2SP tlog-policy pinned with it
//   },
//   "manifests": {
//     "io.github.acme/payments@1.2.0": { "digest": "sha256:…", "kid": "…", "logIndex": 3, "registry": "http://…" }
//   }
// }
// Written with a fixed key order (top level and entries as above, manifests sorted by UTF-16 code units),
// 2-space indent and a trailing newline, atomically; so a re-pin of the same content is a byte-identical file
// and diffs stay one entry long. --locked enforces `digest`, and a registry's pinned keys (a manifest signed with
// another attestation key, a log under another key, or a run without the pinned witness policy is KEY_NOT_PINNED); kid and logIndex record the evidence the
// pin was made with (an auditor can look both up), and registry where it came from.

import { readFile } from 'node:fs/promises';
import { ToolsealError } from '../core/errors.ts';
import { isSha256Digest, parseStrict, type JsonObject, type Sha256Digest } from '../pipeline/index.ts';
import { writeFileAtomic } from './atomic-file.ts';
import { formatManifestRef, parseManifestRef } from '../protocol/manifest-ref.ts';
import { formatPointer } from '../core/json-pointer.ts';
import { compareUtf16 } from '../core/text.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';

export const LOCKFILE_VERSION = 1;
/** The default lockfile name, in the current directory. */
export const DEFAULT_LOCKFILE_NAME = 'toolseal.lock';

export interface LockEntry {
  digest: Sha256Digest;
  kid: string;
  logIndex: number;
  registry: string;
}

/** A registry's keys as `pin` found them: what `--locked` accepts from that registry. */
export interface RegistryKeyPins {
  /** RFC 7638 thumbprints (the kids) of the attestation keys the registry's JWKS offered, sorted. */
  attestationKeys: string[];
  /** The log's C2SP note verifier string (GET /v1/log/key). */
  logKey: string;
  /** sha256 of the witness policy (C2SP tlog-policy file) `pin` verified with: `--locked` then requires it. */
  witnessPolicy?: Sha256Digest;
}

export interface Lockfile {
  lockfileVersion: typeof LOCKFILE_VERSION;
  registry?: string;
  /** Keyed by the registry's base URL (as in the entries' `registry`). */
  registryKeys?: Record<string, RegistryKeyPins>;
  /** Keyed by `namespace/name@version`. */
  manifests: Record<string, LockEntry>;
}

export function emptyLockfile(registry?: string): Lockfile {
  return registry === undefined
    ? { lockfileVersion: LOCKFILE_VERSION, manifests: {} }
    : { lockfileVersion: LOCKFILE_VERSION, registry, manifests: {} };
}

export function lockKey(name: string, version: string): string {
  return formatManifestRef(name, version);
}

function invalid(message: string, tokens: (string | number)[]): never {
  throw new ToolsealError('BAD_REQUEST', `invalid lockfile: ${message}`, { pointer: formatPointer(tokens) });
}

function checkMembers(value: JsonObject, allowed: readonly string[], tokens: (string | number)[]): void {
  for (const key of Object.keys(value))
    if (!allowed.includes(key)) invalid(`unknown member ${JSON.stringify(key)}`, [...tokens, key]);
}

function isRegistryUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Parse and validate lockfile bytes (strict JSON: no duplicate keys; closed members). BAD_REQUEST with a pointer otherwise. */
export function parseLockfile(data: string | Uint8Array): Lockfile {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const value = parseStrict(bytes, { maxBytes: 64 * 1024 * 1024, maxDepth: 16 }).value;
  if (!isJsonObject(value)) invalid('expected an object', []);
  checkMembers(value, ['lockfileVersion', 'registry', 'registryKeys', 'manifests'], []);
  if (value['lockfileVersion'] !== LOCKFILE_VERSION)
    invalid(`lockfileVersion must be ${LOCKFILE_VERSION}`, ['lockfileVersion']);
  const registry = value['registry'];
  if (registry !== undefined && !isRegistryUrl(registry)) invalid('registry must be an http(s) URL', ['registry']);
  const manifests = value['manifests'];
  if (!isJsonObject(manifests)) invalid('manifests must be an object', ['manifests']);
  const lock: Lockfile = emptyLockfile(registry as string | undefined);
  if (value['registryKeys'] !== undefined) lock.registryKeys = parseRegistryKeys(value['registryKeys']);
  for (const [key, entry] of Object.entries(manifests)) {
    const tokens = ['manifests', key];
    let ref: ReturnType<typeof parseManifestRef>;
    try {
      ref = parseManifestRef(key);
    } catch {
      invalid('keys must be namespace/name@version', tokens);
    }
    if (ref.kind !== 'version') invalid('keys must be namespace/name@version', tokens);
    if (!isJsonObject(entry)) invalid('an entry must be an object', tokens);
    checkMembers(entry, ['digest', 'kid', 'logIndex', 'registry'], tokens);
    const { digest, kid, logIndex, registry: entryRegistry } = entry;
    if (!isSha256Digest(digest)) invalid('digest must be sha256:<64 hex>', [...tokens, 'digest']);
    if (typeof kid !== 'string' || kid.length === 0) invalid('kid must be a non-empty string', [...tokens, 'kid']);
    if (typeof logIndex !== 'number' || !Number.isSafeInteger(logIndex) || logIndex < 0)
      invalid('logIndex must be a non-negative integer', [...tokens, 'logIndex']);
    if (!isRegistryUrl(entryRegistry)) invalid('registry must be an http(s) URL', [...tokens, 'registry']);
    defineEntry(lock.manifests, key, { digest, kid, logIndex, registry: entryRegistry });
  }
  return lock;
}

function parseRegistryKeys(value: JsonValue): Record<string, RegistryKeyPins> {
  if (!isJsonObject(value)) invalid('registryKeys must be an object', ['registryKeys']);
  const pins: Record<string, RegistryKeyPins> = {};
  for (const [url, entry] of Object.entries(value)) {
    const tokens = ['registryKeys', url];
    if (!isRegistryUrl(url)) invalid('registryKeys are keyed by http(s) registry URLs', tokens);
    if (!isJsonObject(entry)) invalid('a registry key pin must be an object', tokens);
    checkMembers(entry, ['attestationKeys', 'logKey', 'witnessPolicy'], tokens);
    const { attestationKeys, logKey, witnessPolicy } = entry;
    if (!Array.isArray(attestationKeys) || !attestationKeys.every((kid) => typeof kid === 'string' && kid !== ''))
      invalid('attestationKeys must be a list of key thumbprints', [...tokens, 'attestationKeys']);
    if (typeof logKey !== 'string' || logKey === '')
      invalid('logKey must be a non-empty string', [...tokens, 'logKey']);
    if (witnessPolicy !== undefined && !isSha256Digest(witnessPolicy))
      invalid('witnessPolicy must be sha256:<64 hex>', [...tokens, 'witnessPolicy']);
    Object.defineProperty(pins, url, {
      value: formatKeyPins({ attestationKeys: attestationKeys as string[], logKey, witnessPolicy }),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return pins;
}

/** Own, enumerable, even for a key such as `__proto__` (which parseManifestRef refuses anyway). */
function defineEntry(target: Record<string, LockEntry>, key: string, entry: LockEntry): void {
  Object.defineProperty(target, key, { value: entry, enumerable: true, writable: true, configurable: true });
}

/** The lockfile text: fixed key order, manifests sorted, 2-space indent, trailing newline. */
export function formatLockfile(lock: Lockfile): string {
  const manifests: Record<string, LockEntry> = {};
  for (const key of Object.keys(lock.manifests).sort(compareUtf16)) {
    const entry = lock.manifests[key]!;
    defineEntry(manifests, key, {
      digest: entry.digest,
      kid: entry.kid,
      logIndex: entry.logIndex,
      registry: entry.registry,
    });
  }
  const ordered: Record<string, unknown> = { lockfileVersion: lock.lockfileVersion };
  if (lock.registry !== undefined) ordered['registry'] = lock.registry;
  if (lock.registryKeys !== undefined && Object.keys(lock.registryKeys).length > 0) {
    const registryKeys: Record<string, RegistryKeyPins> = {};
    for (const url of Object.keys(lock.registryKeys).sort(compareUtf16)) {
      const pins = lock.registryKeys[url]!;
      Object.defineProperty(registryKeys, url, { value: formatKeyPins(pins), enumerable: true });
    }
    ordered['registryKeys'] = registryKeys;
  }
  ordered['manifests'] = manifests;
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/** Read a lockfile; undefined when the file does not exist. */
export async function readLockfile(path: string): Promise<Lockfile | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
  return parseLockfile(bytes);
}

/** Write a lockfile atomically (see formatLockfile for the exact text). */
export async function writeLockfile(path: string, lock: Lockfile): Promise<void> {
  await writeFileAtomic(path, formatLockfile(lock));
}

export function getLockEntry(lock: Lockfile | undefined, name: string, version: string): LockEntry | undefined {
  if (lock === undefined) return undefined;
  const key = lockKey(name, version);
  return Object.hasOwn(lock.manifests, key) ? lock.manifests[key] : undefined;
}

/** A new lockfile with `name@version` set to `entry` (added or replaced); the input is not changed. */
export function setLockEntry(lock: Lockfile, name: string, version: string, entry: LockEntry): Lockfile {
  const manifests: Record<string, LockEntry> = {};
  for (const [key, value] of Object.entries(lock.manifests)) defineEntry(manifests, key, value);
  defineEntry(manifests, lockKey(name, version), {
    digest: entry.digest,
    kid: entry.kid,
    logIndex: entry.logIndex,
    registry: entry.registry,
  });
  return { ...lock, manifests };
}

/** The keys pinned for the registry at `registry` (its base URL), if any. */
export function getRegistryKeyPins(lock: Lockfile | undefined, registry: string): RegistryKeyPins | undefined {
  const pins = lock?.registryKeys;
  return pins !== undefined && Object.hasOwn(pins, registry) ? pins[registry] : undefined;
}

/** A new lockfile with the keys of `registry` pinned as `pins`; the input is not changed. */
export function setRegistryKeyPins(lock: Lockfile, registry: string, pins: RegistryKeyPins): Lockfile {
  const registryKeys: Record<string, RegistryKeyPins> = {};
  for (const [url, value] of Object.entries(lock.registryKeys ?? {}))
    Object.defineProperty(registryKeys, url, { value, enumerable: true, writable: true, configurable: true });
  Object.defineProperty(registryKeys, registry, {
    value: formatKeyPins(pins),
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return { ...lock, registryKeys };
}

/** A registry's pins in their fixed member order (attestation keys sorted; the witness policy only when pinned). */
function formatKeyPins(pins: {
  attestationKeys: readonly string[];
  logKey: string;
  witnessPolicy?: Sha256Digest | undefined;
}): RegistryKeyPins {
  const ordered: RegistryKeyPins = {
    attestationKeys: [...pins.attestationKeys].sort(compareUtf16),
    logKey: pins.logKey,
  };
  if (pins.witnessPolicy !== undefined) ordered.witnessPolicy = pins.witnessPolicy;
  return ordered;
}

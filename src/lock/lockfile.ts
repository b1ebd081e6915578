// toolseal.lock: pins name@version → digest (plus the kid and log index it was verified with), read strictly, written stably.
//
// {
//   "lockfileVersion": 1,
//   "registry": "http://127.0.0.1:8787",            optional: the default registry for entries
//   "manifests": {
//     "io.github.acme/payments@1.2.0": { "digest": "sha256:…", "kid": "…", "logIndex": 3, "registry": "http://…" }
//   }
// }
// Written with a fixed key order (top level and entries as above, manifests sorted by UTF-16 code units),
// 2-space indent and a trailing newline, atomically; so a re-pin of the same content is a byte-identical file
// and diffs stay one entry long. Only `digest` is enforced by --locked checks: kid and logIndex record the
// evidence the pin was made with (an auditor can look both up), and registry where it came from.

import { readFile } from 'node:fs/promises';
import { ToolsealError } from '../core/errors.ts';
import { isSha256Digest, parseStrict, type JsonObject, type Sha256Digest } from '../pipeline/index.ts';
import { writeFileAtomic } from './atomic-file.ts';
import { formatManifestRef, parseManifestRef } from '../protocol/manifest-ref.ts';
import { formatPointer } from '../core/json-pointer.ts';
import { compareUtf16 } from '../core/text.ts';
import { isJsonObject } from '../core/json.ts';

export const LOCKFILE_VERSION = 1;
/** The default lockfile name, in the current directory. */
export const DEFAULT_LOCKFILE_NAME = 'toolseal.lock';

export interface LockEntry {
  digest: Sha256Digest;
  kid: string;
  logIndex: number;
  registry: string;
}

export interface Lockfile {
  lockfileVersion: typeof LOCKFILE_VERSION;
  registry?: string;
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
  checkMembers(value, ['lockfileVersion', 'registry', 'manifests'], []);
  if (value['lockfileVersion'] !== LOCKFILE_VERSION)
    invalid(`lockfileVersion must be ${LOCKFILE_VERSION}`, ['lockfileVersion']);
  const registry = value['registry'];
  if (registry !== undefined && !isRegistryUrl(registry)) invalid('registry must be an http(s) URL', ['registry']);
  const manifests = value['manifests'];
  if (!isJsonObject(manifests)) invalid('manifests must be an object', ['manifests']);
  const lock: Lockfile = emptyLockfile(registry as string | undefined);
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
  const ordered =
    lock.registry === undefined
      ? { lockfileVersion: lock.lockfileVersion, manifests }
      : { lockfileVersion: lock.lockfileVersion, registry: lock.registry, manifests };
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

// The use cases behind the MCP Registry read API (modelcontextprotocol/registry openapi.yaml 2025-12-01, issue 27 §3):
// the stored versions whose signed manifest carries a `server` member, in pages, per server, or one version. Every
// manifest is read through the registry's verified path (bytes re-hashed against their digest) and parsed strictly.

import { ToolsealError } from '../core/errors.ts';
import { parseStrict, SIGNED_MANIFEST_PARSE_LIMITS, type Manifest } from '../pipeline/index.ts';
import type { Store, VersionRecord } from '../store/index.ts';
import { compareVersions, pickLatestVersion } from './semver.ts';

/** A stored version with a signed server, as the read API needs it. */
export interface ServerVersionEntry {
  record: VersionRecord;
  manifest: Manifest;
  /** The version `latest` resolves to (the highest active one). */
  isLatest: boolean;
  /** RFC 3339: the yank time when yanked, else the publication time. */
  updatedAt: string;
}

/** Where a page starts: after this name@version (name order, then semver order). */
export interface ServerCursor {
  name: string;
  version: string;
}

export interface ServerPageQuery {
  /** Case-insensitive substring of the server name. */
  search?: string;
  /** Only versions updated at or after this instant (ms since the epoch). */
  updatedSinceMs?: number;
  /** `latest`, or one exact version. */
  version?: string;
  after?: ServerCursor;
  limit: number;
}

/** What these use cases read: the store, and the verified manifest read of the registry. */
export interface ServerReader {
  store: Store;
  /** The stored bytes, re-hashed against their digest (INTEGRITY_ERROR otherwise). */
  getManifest(name: string, version: string): Promise<{ bytes: Uint8Array }>;
}

const NAME_BATCH = 100;

/** One page of server versions; `next` is the cursor of the following page, absent on the last. */
export async function listServerVersionPage(
  reader: ServerReader,
  query: ServerPageQuery,
): Promise<{ entries: ServerVersionEntry[]; next?: ServerCursor }> {
  const entries: ServerVersionEntry[] = [];
  const needle = query.search?.toLowerCase();
  for await (const name of walkNames(reader.store, query.search, query.after?.name)) {
    if (needle !== undefined && needle !== '' && !name.toLowerCase().includes(needle)) continue;
    for (const entry of await readServerEntries(reader, name, query)) {
      entries.push(entry);
      if (entries.length > query.limit) {
        const page = entries.slice(0, query.limit);
        const last = page[page.length - 1]!.record;
        return { entries: page, next: { name: last.name, version: last.version } };
      }
    }
  }
  return { entries };
}

/** Every version of `name` with a signed server, newest publication first; NOT_FOUND when there is none. */
export async function listServerVersionsOf(reader: ServerReader, name: string): Promise<ServerVersionEntry[]> {
  const entries = await readServerEntries(reader, name, {});
  if (entries.length === 0) throw new ToolsealError('NOT_FOUND', `${name} is not a server in this registry`);
  return entries.sort((a, b) => b.record.id - a.record.id); // ids grow with each publication
}

/**
 * One version (or `latest`) of `name` with a signed server. NOT_FOUND with `server` when no version of `name` has a
 * server, with `version` when that version does not exist or has none.
 */
export async function readServerVersion(
  reader: ServerReader,
  name: string,
  version: string,
): Promise<{ found: ServerVersionEntry } | { missing: 'server' | 'version' }> {
  const entries = await readServerEntries(reader, name, {});
  if (entries.length === 0) return { missing: 'server' };
  const found = entries.find((entry) => (version === 'latest' ? entry.isLatest : entry.record.version === version));
  return found ? { found } : { missing: 'version' };
}

/** Names in order: the cursor's own name first (its later versions), then the names after it. */
async function* walkNames(
  store: Store,
  search: string | undefined,
  afterName: string | undefined,
): AsyncGenerator<string> {
  if (afterName !== undefined) yield afterName;
  let last = afterName;
  for (;;) {
    const names = await store.listManifestNames(search || undefined, last, NAME_BATCH);
    yield* names;
    if (names.length < NAME_BATCH) return;
    last = names[names.length - 1];
  }
}

/** The versions of `name` (semver order) that pass the query's filters and whose manifest has a server member. */
async function readServerEntries(
  reader: ServerReader,
  name: string,
  query: Omit<ServerPageQuery, 'limit' | 'search'>,
): Promise<ServerVersionEntry[]> {
  const versions = (await reader.store.listVersions(name)).sort((a, b) => compareVersions(a.version, b.version));
  const latest = pickLatestVersion(versions.filter((v) => v.status === 'active').map((v) => v.version));
  const entries: ServerVersionEntry[] = [];
  for (const record of versions) {
    const after = query.after;
    if (after !== undefined && after.name === name && compareVersions(record.version, after.version) <= 0) continue;
    const isLatest = record.version === latest;
    if (query.version === 'latest' ? !isLatest : query.version !== undefined && record.version !== query.version) {
      continue;
    }
    const updatedAt = record.yankedAt ?? record.storedAt;
    if (query.updatedSinceMs !== undefined && Date.parse(updatedAt) < query.updatedSinceMs) continue;
    const manifest = await readVerifiedManifest(reader, name, record.version);
    if (manifest.server === undefined) continue;
    entries.push({ record, manifest, isLatest, updatedAt });
  }
  return entries;
}

/** The manifest from bytes that matched their digest (INTEGRITY_ERROR otherwise), parsed with the strict parser. */
async function readVerifiedManifest(reader: ServerReader, name: string, version: string): Promise<Manifest> {
  const { bytes } = await reader.getManifest(name, version);
  return parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS).value as unknown as Manifest;
}

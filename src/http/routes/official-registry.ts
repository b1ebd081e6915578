// The MCP Registry read API (modelcontextprotocol/registry docs/reference/api/openapi.yaml 2025-12-01; issue 27 §3):
// GET /v0.1/servers, /v0.1/servers/{serverName}/versions and …/versions/{version|latest}, with CORS (Fetch standard
// §3.2: `*` origin, GET/OPTIONS, the Authorization and Content-Type request headers) and OPTIONS preflight answered
// 204. `{serverName}` is read from the raw request path (it must be URL-encoded: io.github.acme%2Fpayments). Only
// versions whose manifest carries a signed `server` member are listed, each read through the verified path.
// `include_deleted` (the official `deleted` status: a version taken out of the registry) is read and validated, and
// changes nothing on purpose: toolseal never deletes a version (bytes, attestation and log entry stay; a yanked version
// stays served as `deprecated`, which the official API lists whatever include_deleted says), so there is no deleted
// version to include or leave out (readIncludeDeleted).

import { readAttestationProvenance } from '../../attest/provenance.ts';
import { ToolsealError } from '../../core/errors.ts';
import {
  decodeServerNameSegment,
  decodeVersionSegment,
  formatNotFoundBody,
  formatServerList,
  formatServerResponse,
  type OfficialServerResponse,
} from '../../protocol/official-registry.ts';
import { attestationPath, attestationsByDigestPath, bundlePath } from '../../protocol/routes.ts';
import type { Registry, ServerCursor, ServerVersionEntry } from '../../registry/index.ts';
import type { Sha256Digest } from '../../core/digest.ts';
import { type App, type AppContext, readQuery } from '../app-env.ts';
import { readLimit } from './manifests.ts';
import { mountOperation, OFFICIAL_API_PREFIX } from '../operations.ts';

const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type',
} as const;

/** RFC 3339 date-time (§5.6), with a time zone. */
const RFC3339_DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export function mountOfficialRegistryRoutes(app: App, registry: Registry): void {
  app.use(`${OFFICIAL_API_PREFIX}/*`, async (c, next) => {
    for (const [name, value] of Object.entries(CORS_HEADERS)) c.header(name, value);
    if (c.req.method === 'OPTIONS') return c.body(null, 204);
    await next();
  });

  mountOperation(app, 'officialServers', async (c) => {
    const limit = readLimit(readQuery(c, 'limit'));
    const cursor = readQuery(c, 'cursor');
    const search = readQuery(c, 'search');
    const version = readQuery(c, 'version');
    const updatedSince = readQuery(c, 'updated_since');
    readIncludeDeleted(c);
    const { entries, next } = await registry.listServerVersionPage({
      limit,
      ...(search ? { search } : {}),
      ...(version ? { version } : {}),
      ...(updatedSince === undefined ? {} : { updatedSinceMs: readInstant(updatedSince) }),
      ...(cursor ? { after: decodeServerCursor(cursor) } : {}),
    });
    const servers = entries.map((entry) => composeResponse(registry, entry));
    return c.json(formatServerList(servers, next === undefined ? null : encodeServerCursor(next)));
  });

  mountOperation(app, 'officialServerVersions', async (c) => {
    readIncludeDeleted(c);
    const name = decodeServerNameSegment(readRawSegments(c)[2] ?? '');
    if (name === undefined) return c.json(formatNotFoundBody('server'), 404);
    let entries: ServerVersionEntry[];
    try {
      entries = await registry.listServerVersionsOf(name);
    } catch (error) {
      if (error instanceof ToolsealError && error.code === 'NOT_FOUND')
        return c.json(formatNotFoundBody('server'), 404);
      throw error;
    }
    return c.json(
      formatServerList(
        entries.map((entry) => composeResponse(registry, entry)),
        null,
      ),
    );
  });

  mountOperation(app, 'officialServerVersion', async (c) => {
    readIncludeDeleted(c);
    const segments = readRawSegments(c);
    const name = decodeServerNameSegment(segments[2] ?? '');
    if (name === undefined) return c.json(formatNotFoundBody('server'), 404);
    const version = decodeVersionSegment(segments[4] ?? '');
    if (version === undefined) return c.json(formatNotFoundBody('version'), 404);
    const outcome = await registry.readServerVersion(name, version);
    if ('missing' in outcome) return c.json(formatNotFoundBody(outcome.missing), 404);
    return c.json(composeResponse(registry, outcome.found));
  });

  // Anything else below /v0.1/servers (a name that is not URL-encoded, a path too long) is the official 404.
  mountOperation(app, 'officialUnknown', (c) => c.json(formatNotFoundBody('server'), 404));
}

/** The ServerResponse of an entry, with absolute evidence URLs on this registry's origin. */
function composeResponse(registry: Registry, entry: ServerVersionEntry): OfficialServerResponse {
  const { record, manifest } = entry;
  const response = formatServerResponse({
    manifest,
    digest: record.digest as Sha256Digest,
    status: record.status,
    yankReason: record.yankReason,
    publishedAt: record.storedAt,
    updatedAt: entry.updatedAt,
    isLatest: entry.isLatest,
    logIndex: record.logIndex,
    provenance: readAttestationProvenance(record.attestation),
    evidence: {
      attestationUrl: `${registry.origin}${attestationPath(record.name, record.version)}`,
      bundleUrl: `${registry.origin}${attestationsByDigestPath(record.digest)}`,
      sigstoreBundleUrl: `${registry.origin}${bundlePath(record.name, record.version)}`,
    },
  });
  if (response === undefined) throw new ToolsealError('INTERNAL', 'a listed server version has no server member');
  return response;
}

/** The request path's segments as sent (still percent-encoded): ['v0.1', 'servers', name, 'versions', version]. */
function readRawSegments(c: AppContext): string[] {
  return new URL(c.req.url).pathname.split('/').slice(1);
}

/**
 * `include_deleted`, validated (BAD_REQUEST unless `true` or `false`). Either value gives the same answer: no version
 * is ever `deleted` here (the store's statuses are active and yanked, and a yank keeps the version served, as
 * `deprecated`). A status this registry cannot have is not a filter it can apply.
 */
function readIncludeDeleted(c: AppContext): void {
  readBooleanQuery(c, 'include_deleted');
}

/** `true` or `false` (the OpenAPI boolean), absent allowed; BAD_REQUEST otherwise. */
function readBooleanQuery(c: AppContext, name: string): boolean {
  const text = readQuery(c, name);
  if (text === undefined) return false;
  if (text !== 'true' && text !== 'false') throw new ToolsealError('BAD_REQUEST', `${name} must be true or false`);
  return text === 'true';
}

function readInstant(text: string): number {
  const ms = Date.parse(text);
  if (!RFC3339_DATE_TIME.test(text) || Number.isNaN(ms)) {
    throw new ToolsealError('BAD_REQUEST', 'updated_since must be an RFC 3339 date-time');
  }
  return ms;
}

/** The cursor is `name@version` of the last entry of a page, base64url (RFC 4648 §5) so it reads as opaque. */
function encodeServerCursor(after: ServerCursor): string {
  return Buffer.from(`${after.name}@${after.version}`, 'utf8').toString('base64url');
}

function decodeServerCursor(cursor: string): ServerCursor {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const at = text.lastIndexOf('@');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor) || at <= 0 || at === text.length - 1 || !text.slice(0, at).includes('/')) {
    throw new ToolsealError('BAD_REQUEST', 'cursor is not one this registry issued');
  }
  return { name: text.slice(0, at), version: text.slice(at + 1) };
}

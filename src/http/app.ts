// createApp(deps): the Hono routes, RFC 9457 problem+json errors and content headers. The only place that speaks HTTP.

import { Hono, type Context } from 'hono';
import { ToolsealError, type ErrorCode } from '../core/errors.ts';
import { readBearerToken } from './auth.ts';
import { readBodyWithin } from './body.ts';
import { computeDigest, computeSha256Hex, parseStrict, type Sha256Digest } from '../pipeline/index.ts';
import {
  computeEntryBundleWidth,
  computeTileWidth,
  formatEntryBundle,
  formatTlogProof,
  parseTilePath,
  readTile,
} from '../log/index.ts';
import type { InclusionProof, PublisherRecord, PublishOutcome, Registry } from '../registry/index.ts';
import { httpStatusByCode } from './problem.ts';

export interface AppDeps {
  registry: Registry;
  /** Largest accepted publish body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Bytes of immutable responses kept in memory (default 64 MiB; 0 disables). Re-hashed on every send. */
  cacheBytes?: number;
  /** Called with unexpected errors (the client only ever sees a generic INTERNAL problem). */
  onUnexpectedError?: (error: unknown) => void;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
const JSON_TYPE = 'application/json';
const JOSE_JSON_TYPE = 'application/jose+json';
const DIGEST_ROUTE = '{sha256:[0-9a-f]{64}}';

interface CachedBody {
  bytes: Uint8Array;
  digest: Sha256Digest;
  etag: string;
  /**
   * Built once per entry, exactly as Hono's Headers put them on the wire before (lowercase names in sorted
   * order): the hot read path hands this plain object to `new Response` with no per-request Headers work.
   */
  headers: Readonly<Record<string, string>>;
  notModifiedHeaders: Readonly<Record<string, string>>;
}

type AppEnv = { Variables: { publisher: PublisherRecord } };

/** Build the registry's HTTP API. No side effects: nothing listens until the caller serves it. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const { registry } = deps;
  const maxBodyBytes = deps.maxBodyBytes ?? 1024 * 1024;
  const cache = new ImmutableBodyCache(deps.cacheBytes ?? 64 * 1024 * 1024);
  const app = new Hono<AppEnv>({ strict: true });

  app.onError((error, c) => {
    if (error instanceof ToolsealError) {
      const response = problem(c, error.code, error.message, error.pointer);
      // RFC 9110 §11.6.1: a 401 names the authentication scheme it wants.
      if (error.code === 'UNAUTHENTICATED') response.headers.set('WWW-Authenticate', 'Bearer realm="toolseal"');
      return response;
    }
    (deps.onUnexpectedError ?? ((e) => console.error('toolseal: unexpected error', e)))(error);
    return problem(c, 'INTERNAL', 'internal error');
  });
  app.notFound((c) => {
    // A known path with another method is 405 with Allow (RFC 9110 §15.5.6), not 404.
    const path = new URL(c.req.url).pathname;
    const allowed = allowedMethods(path);
    if (allowed.length > 0 && !allowed.includes(c.req.method)) {
      const response = problem(
        c,
        'METHOD_NOT_ALLOWED',
        `${c.req.method} is not allowed on ${path}; use ${allowed.join(' or ')}`,
      );
      response.headers.set('Allow', allowed.join(', '));
      return response;
    }
    return problem(c, 'NOT_FOUND', `no route for ${c.req.method} ${path}`);
  });

  app.get('/healthz', (c) => {
    const checkpoint = registry.latestCheckpoint();
    return c.json({ status: 'ok', logSize: checkpoint?.size ?? 0, activeKid: registry.activeKid });
  });

  app.get('/.well-known/jwks.json', (c) => {
    c.header('Cache-Control', 'public, max-age=60');
    return c.json(registry.jwks());
  });

  // ── publish ─────────────────────────────────────────────────────────────

  app.post(
    '/v1/manifests',
    (c, next) => {
      // 401 before reading a byte of the body.
      c.set('publisher', registry.authenticate(readBearerToken(c.req.header('Authorization'))));
      return next();
    },
    async (c) => {
      // Bytes, never c.req.json()/text(): those accept duplicate keys, round big integers, drop a BOM.
      const bytes = await readBodyWithin(c, maxBodyBytes, 'manifest body');
      const outcome = await registry.publish(bytes, c.get('publisher'));
      const location = versionPath(outcome.record.name, outcome.record.version);
      c.header('Location', location);
      return c.body(formatPublishBody(outcome), outcome.created ? 201 : 200, { 'Content-Type': 'application/json' });
    },
  );

  // ── reads ───────────────────────────────────────────────────────────────

  app.get('/v1/manifests', (c) => {
    const query = c.req.query('q') || undefined;
    const limitText = c.req.query('limit');
    const limit = limitText === undefined ? 50 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200)
      throw new ToolsealError('BAD_REQUEST', 'limit must be an integer from 1 to 200');
    const cursor = c.req.query('cursor');
    const after = cursor ? decodeCursor(cursor) : undefined;
    const { items, nextAfter } = registry.listManifests(query, after, limit);
    return c.json({
      items: items.map((item) => ({ ...item, url: versionPath(item.name, item.latestVersion) })),
      nextCursor: nextAfter === undefined ? null : Buffer.from(nextAfter, 'utf8').toString('base64url'),
    });
  });

  app.get('/v1/manifests/:namespace/:name', (c) => {
    const name = manifestName(c);
    const versions = registry.listVersions(name);
    return c.json({
      name,
      versions: versions.map((v) => ({
        version: v.version,
        digest: v.digest,
        status: v.status,
        storedAt: v.storedAt,
        ...(v.status === 'yanked' ? { yankReason: v.yankReason, yankedAt: v.yankedAt } : {}),
      })),
    });
  });

  app.get('/v1/manifests/:namespace/:name/:version', (c) => {
    const name = manifestName(c);
    const version = c.req.param('version');
    if (version === 'latest') {
      const latest = registry.resolveLatest(name);
      c.header('Cache-Control', 'no-cache');
      return c.redirect(versionPath(name, latest), 302);
    }
    const key = `v:${name}@${version}`;
    let entry = cache.get(key);
    if (!entry) {
      const stored = registry.getManifest(name, version);
      entry = cache.put(
        key,
        stored.bytes,
        stored.digest,
        `<${versionPath(name, version)}/attestation>; rel="attestation"; type="${JOSE_JSON_TYPE}"`,
      );
    }
    return sendVerified(c, entry);
  });

  app.get('/v1/manifests/:namespace/:name/:version/attestation', (c) => {
    const record = registry.getVersionRecord(manifestName(c), c.req.param('version'));
    return c.body(new Uint8Array(record.attestation), 200, {
      'Content-Type': JOSE_JSON_TYPE,
      'Cache-Control': IMMUTABLE,
      ETag: `"sha256:${computeSha256Hex(record.attestation)}"`,
    });
  });

  app.post('/v1/manifests/:namespace/:name/:version/yank', async (c) => {
    const publisher = registry.authenticate(readBearerToken(c.req.header('Authorization')));
    const body = await readBodyWithin(c, 16 * 1024, 'yank body');
    const parsed = parseStrict(body).value;
    const reason =
      typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed['reason'] : undefined;
    if (typeof reason !== 'string')
      throw new ToolsealError('BAD_REQUEST', 'body must be {"reason": "<why>"}', { pointer: '/reason' });
    const record = await registry.yank(publisher, manifestName(c), c.req.param('version'), reason);
    return c.json({
      name: record.name,
      version: record.version,
      digest: record.digest,
      status: record.status,
      yankReason: record.yankReason,
      yankedAt: record.yankedAt,
      yankLogIndex: record.yankLogIndex,
    });
  });

  app.get(`/v1/blobs/:digest${DIGEST_ROUTE}`, (c) => {
    const digest = c.req.param('digest');
    const key = `b:${digest}`;
    let entry = cache.get(key);
    if (!entry) {
      const blob = registry.getBlob(digest);
      entry = cache.put(
        key,
        blob.bytes,
        blob.digest,
        `</v1/attestations/${digest}>; rel="attestation"; type="${JSON_TYPE}"`,
      );
    }
    return sendVerified(c, entry);
  });

  app.get(`/v1/attestations/:digest${DIGEST_ROUTE}`, async (c) => {
    const digest = c.req.param('digest');
    const bindings = registry.listBindings(digest);
    if (bindings.length === 0) throw new ToolsealError('NOT_FOUND', `no attestation covers ${digest}`);
    // Every binding's leaf is in a signed checkpoint before its publish is acknowledged; wait, never 404, if not.
    const checkpoint = await registry.log.awaitCheckpointIncluding(
      Math.max(...bindings.map((binding) => binding.logIndex)),
    );
    c.header('Cache-Control', 'no-cache');
    return c.json({
      digest,
      bindings: bindings.map((binding) => {
        const inclusion = registry.log.proveInclusion(binding.logIndex, checkpoint);
        return {
          name: binding.name,
          version: binding.version,
          publisher: binding.publisher,
          storedAt: binding.storedAt,
          kid: binding.kid,
          status: binding.status,
          ...(binding.status === 'yanked' ? { yankReason: binding.yankReason } : {}),
          logIndex: binding.logIndex,
          attestation: JSON.parse(Buffer.from(binding.attestation).toString('utf8')) as unknown,
          inclusionProof: formatInclusion(inclusion),
          tlogProof: formatTlogText(inclusion),
        };
      }),
    });
  });

  // ── transparency log ────────────────────────────────────────────────────

  app.get('/v1/log/checkpoint', (c) => {
    const checkpoint = registry.latestCheckpoint();
    if (!checkpoint) throw new ToolsealError('NOT_FOUND', 'the log has no checkpoint yet');
    return c.body(checkpoint.note, 200, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'public, max-age=5',
    });
  });

  app.get('/v1/log/key', (c) =>
    c.body(registry.log.verifierString + '\n', 200, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Cache-Control': 'public, max-age=3600',
    }),
  );

  app.get('/v1/log/tile/*', (c) => {
    const path = new URL(c.req.url).pathname.slice('/v1/log/'.length);
    const tile = parseTilePath(path);
    const size = registry.latestCheckpoint()?.size ?? 0;
    if (tile.kind === 'entries') {
      const available = computeEntryBundleWidth(tile.index, size);
      if (available < tile.width)
        throw new ToolsealError('NOT_FOUND', 'that entry bundle is not in the latest checkpoint');
      const entries = registry.readLogEntryData(tile.index * 256, tile.index * 256 + tile.width);
      return c.body(formatEntryBundle(entries) as Uint8Array<ArrayBuffer>, 200, TILE_HEADERS);
    }
    const available = computeTileWidth(tile.level, tile.index, size);
    if (available < tile.width) throw new ToolsealError('NOT_FOUND', 'that tile is not in the latest checkpoint');
    return c.body(
      readTile(registry.log.nodeReader, tile.level, tile.index, tile.width) as Uint8Array<ArrayBuffer>,
      200,
      TILE_HEADERS,
    );
  });

  app.get('/v1/log/proof/inclusion', (c) => {
    const index = integerQuery(c, 'index');
    const size = integerQuery(c, 'size');
    return c.json({ index, size, hashes: registry.log.proveInclusionAt(index, size) });
  });

  app.get('/v1/log/proof/consistency', (c) => {
    const from = integerQuery(c, 'from');
    const to = integerQuery(c, 'to');
    return c.json({ from, to, hashes: registry.log.proveConsistency(from, to) });
  });

  return app;

  /** Every read re-checks sha256(bytes) against the digest before a byte is sent. */
  function sendVerified(c: Context<AppEnv>, entry: CachedBody): Response {
    if (computeDigest(entry.bytes) !== entry.digest) {
      throw new ToolsealError('INTEGRITY_ERROR', 'stored bytes fail their digest; refusing to serve them');
    }
    const ifNoneMatch = c.req.header('If-None-Match');
    // RFC 9110 §13.1.2: If-None-Match uses the weak comparison (W/ is ignored) and `*` matches any current representation.
    if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((tag) => matchesEntityTag(tag.trim(), entry.etag))) {
      return new Response(null, { status: 304, headers: entry.notModifiedHeaders });
    }
    // The prebuilt plain header object goes to one writeHead in @hono/node-server; c.body() would build a
    // Headers per send and @hono/node-server would turn it back into an object.
    return new Response(entry.bytes as Uint8Array<ArrayBuffer>, { status: 200, headers: entry.headers });
  }
}

/** The methods each route family answers, for 405 responses. */
const routeMethods: [RegExp, string[]][] = [
  [/^\/v1\/manifests$/, ['GET', 'HEAD', 'POST']],
  [/^\/v1\/manifests\/[^/]+\/[^/]+\/[^/]+\/yank$/, ['POST']],
  [/^\/v1\/manifests\/[^/]+\/[^/]+(\/[^/]+(\/attestation)?)?$/, ['GET', 'HEAD']],
  [/^\/v1\/(blobs|attestations)\/sha256:[0-9a-f]{64}$/, ['GET', 'HEAD']],
  [/^\/v1\/log\/(checkpoint|key|tile\/.+|proof\/(inclusion|consistency))$/, ['GET', 'HEAD']],
  [/^\/(healthz|\.well-known\/jwks\.json)$/, ['GET', 'HEAD']],
];

function allowedMethods(path: string): string[] {
  return routeMethods.find(([pattern]) => pattern.test(path))?.[1] ?? [];
}

function matchesEntityTag(candidate: string, etag: string): boolean {
  return candidate === '*' || candidate === etag || candidate === `W/${etag}`;
}

class ImmutableBodyCache {
  private readonly entries = new Map<string, CachedBody>();
  private bytes = 0;

  constructor(private readonly capacity: number) {}

  get(key: string): CachedBody | undefined {
    return this.entries.get(key);
  }

  put(key: string, bytes: Uint8Array, digest: Sha256Digest, link: string): CachedBody {
    const etag = `"${digest}"`;
    const entry: CachedBody = {
      bytes,
      digest,
      etag,
      headers: {
        'cache-control': IMMUTABLE,
        'content-length': String(bytes.byteLength),
        'content-type': JSON_TYPE,
        etag,
        link,
        // RFC 9530 §3: Repr-Digest with the sha-256 algorithm, a structured-field byte sequence.
        'repr-digest': `sha-256=:${Buffer.from(digest.slice('sha256:'.length), 'hex').toString('base64')}:`,
      },
      notModifiedHeaders: { 'cache-control': IMMUTABLE, etag },
    };
    if (this.capacity > 0 && bytes.byteLength <= this.capacity / 4) {
      while (this.bytes + bytes.byteLength > this.capacity && this.entries.size > 0) {
        const oldest = this.entries.keys().next().value as string;
        this.bytes -= this.entries.get(oldest)!.bytes.byteLength;
        this.entries.delete(oldest);
      }
      this.entries.set(key, entry);
      this.bytes += bytes.byteLength;
    }
    return entry;
  }
}

/** RFC 9457 problem details, with our stable `code` and, where it applies, the JSON `pointer`. */
function problem(c: Context<AppEnv>, code: ErrorCode, detail: string, pointer?: string): Response {
  const status = httpStatusByCode[code];
  const body = {
    type: `https://toolseal.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`,
    title: code,
    status,
    detail,
    code,
    ...(pointer === undefined ? {} : { pointer }),
  };
  return c.body(JSON.stringify(body), status, { 'Content-Type': 'application/problem+json' });
}

function manifestName(c: Context<AppEnv>): string {
  return `${c.req.param('namespace')}/${c.req.param('name')}`;
}

export function versionPath(name: string, version: string): string {
  return `/v1/manifests/${name.split('/').map(encodeURIComponent).join('/')}/${encodeURIComponent(version)}`;
}

function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor) || text.length === 0 || !text.includes('/')) {
    throw new ToolsealError('BAD_REQUEST', 'cursor is not one this registry issued');
  }
  return text;
}

function integerQuery(c: Context<AppEnv>, name: string): number {
  const text = c.req.query(name);
  if (text === undefined || !/^(0|[1-9][0-9]{0,15})$/.test(text))
    throw new ToolsealError('BAD_REQUEST', `${name} must be a non-negative integer`);
  return Number(text);
}

/** tlog-tiles: a tile (full, or partial of a given width) never changes once it exists. */
const TILE_HEADERS = { 'Content-Type': 'application/octet-stream', 'Cache-Control': IMMUTABLE };

function formatInclusion(inclusion: InclusionProof): {
  index: number;
  size: number;
  hashes: string[];
  checkpoint: string;
} {
  return { index: inclusion.index, size: inclusion.size, hashes: inclusion.hashes, checkpoint: inclusion.checkpoint };
}

function formatTlogText(inclusion: InclusionProof): string {
  return formatTlogProof({
    index: inclusion.index,
    proof: inclusion.hashes.map((hash) => new Uint8Array(Buffer.from(hash, 'base64'))),
    checkpoint: inclusion.checkpoint,
  });
}

/**
 * The publish body as JSON text. The attestation is embedded as the stored bytes themselves (JCS JSON, just
 * signed and stored): parsing and re-serialising it per publish would only spend time writing the same text.
 */
function formatPublishBody(outcome: PublishOutcome): string {
  const { record } = outcome;
  const head = JSON.stringify({
    name: record.name,
    version: record.version,
    digest: record.digest,
    size: outcome.size,
  });
  const tail = JSON.stringify({
    renamedTools: outcome.renamedTools,
    status: record.status,
    storedAt: record.storedAt,
    logIndex: record.logIndex,
    inclusionProof: formatInclusion(outcome.inclusion),
    tlogProof: formatTlogText(outcome.inclusion),
    url: versionPath(record.name, record.version),
  });
  return `${head.slice(0, -1)},"attestation":${record.attestation.toString('utf8')},${tail.slice(1)}`;
}

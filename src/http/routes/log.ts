// The transparency log over HTTP: C2SP tlog-checkpoint (the latest signed note), the note verifier key, C2SP
// tlog-tiles (hash tiles and entry bundles, immutable once they exist; gzip when the client accepts it, RFC 9110
// §12.5.3) and RFC 9162 §2.1 inclusion/consistency proofs.

import { gzipSync } from 'node:zlib';
import { computeSha256Hex } from '../../core/digest.ts';
import { ToolsealError } from '../../core/errors.ts';
import {
  computeEntryBundleWidth,
  computeTileWidth,
  formatEntryBundle,
  parseTilePath,
  readTile,
} from '../../log/index.ts';
import { LOG_PREFIX } from '../../protocol/routes.ts';
import type { ConsistencyProofResponse, InclusionProofResponse } from '../../protocol/wire.ts';
import type { Registry } from '../../registry/index.ts';
import { type App, type AppContext, type CheckpointDecorator, readIntegerQuery } from '../app-env.ts';
import { IMMUTABLE_CACHE_CONTROL } from '../immutable-body-cache.ts';
import { mountOperation } from '../operations.ts';

const NOTE_CONTENT_TYPE = 'text/plain; charset=utf-8';
/** tlog-tiles: a tile (full, or partial of a given width) never changes once it exists. */
const TILE_HEADERS = {
  'Content-Type': 'application/octet-stream',
  'Cache-Control': IMMUTABLE_CACHE_CONTROL,
  // Served gzip-compressed to a client that accepts it (tlog-tiles SHOULD), identity otherwise.
  Vary: 'Accept-Encoding',
};

export function mountLogRoutes(app: App, registry: Registry, cosign: CheckpointDecorator = (note) => note): void {
  mountOperation(app, 'logCheckpoint', async (c) => {
    const checkpoint = await registry.latestCheckpoint();
    if (!checkpoint) throw new ToolsealError('NOT_FOUND', 'the log has no checkpoint yet');
    return c.body(cosign(checkpoint.note), 200, {
      'Content-Type': NOTE_CONTENT_TYPE,
      'Cache-Control': 'public, max-age=5',
    });
  });

  mountOperation(app, 'logKey', (c) =>
    c.body(`${registry.log.verifierString}\n`, 200, {
      'Content-Type': NOTE_CONTENT_TYPE,
      'Cache-Control': 'public, max-age=3600',
    }),
  );

  const gzipped = new GzipCache(32 * 1024 * 1024);
  mountOperation(app, 'logTile', (c) => sendTile(c, registry, gzipped));

  mountOperation(app, 'inclusionProof', async (c) => {
    const index = readIntegerQuery(c, 'index');
    const size = readIntegerQuery(c, 'size');
    return c.json({
      index,
      size,
      hashes: await registry.log.proveInclusionAt(index, size),
    } satisfies InclusionProofResponse);
  });

  mountOperation(app, 'consistencyProof', async (c) => {
    const from = readIntegerQuery(c, 'from');
    const to = readIntegerQuery(c, 'to');
    return c.json({
      from,
      to,
      hashes: await registry.log.proveConsistency(from, to),
    } satisfies ConsistencyProofResponse);
  });
}

/** A hash tile or entry bundle, only when the latest checkpoint covers all of its width (404 otherwise). */
async function sendTile(c: AppContext, registry: Registry, gzipped: GzipCache): Promise<Response> {
  const path = new URL(c.req.url).pathname.slice(LOG_PREFIX.length);
  const tile = parseTilePath(path);
  const size = (await registry.latestCheckpoint())?.size ?? 0;
  let body: Uint8Array;
  if (tile.kind === 'entries') {
    const available = computeEntryBundleWidth(tile.index, size);
    if (available < tile.width)
      throw new ToolsealError('NOT_FOUND', 'that entry bundle is not in the latest checkpoint');
    body = formatEntryBundle(await registry.readLogEntryData(tile.index * 256, tile.index * 256 + tile.width));
  } else {
    const available = computeTileWidth(tile.level, tile.index, size);
    if (available < tile.width) throw new ToolsealError('NOT_FOUND', 'that tile is not in the latest checkpoint');
    body = await registry.log.withStoredNodes((reader) => readTile(reader, tile.level, tile.index, tile.width));
  }
  if (!acceptsGzip(c.req.header('Accept-Encoding'))) return c.body(body as Uint8Array<ArrayBuffer>, 200, TILE_HEADERS);
  return c.body(gzipped.get(body) as Uint8Array<ArrayBuffer>, 200, {
    ...TILE_HEADERS,
    'Content-Encoding': 'gzip',
  });
}

/** RFC 9110 §12.5.3: gzip (or x-gzip, or `*`) listed with a non-zero weight. */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((item) => {
    const [coding = '', ...params] = item.split(';').map((part) => part.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') return false;
    const weight = params.find((param) => param.startsWith('q='));
    return weight === undefined || Number(weight.slice(2)) > 0;
  });
}

/**
 * Each tile compressed once (the most recently used are kept). Keyed by the digest of the bytes just read, not by
 * the path: what is sent is always the compression of what the log holds now (a damaged row is never hidden).
 */
class GzipCache {
  private readonly entries = new Map<string, Uint8Array>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(body: Uint8Array): Uint8Array {
    const key = computeSha256Hex(body);
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const compressed = new Uint8Array(gzipSync(body));
    this.entries.set(key, compressed);
    this.bytes += compressed.byteLength;
    for (const [oldest, value] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= value.byteLength;
    }
    return compressed;
  }
}

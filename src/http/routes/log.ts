// The transparency log over HTTP: C2SP tlog-checkpoint (the latest signed note), the note verifier key, C2SP
// tlog-tiles (hash tiles and entry bundles, immutable once they exist) and RFC 9162 §2.1 inclusion/consistency proofs.

import { ToolsealError } from '../../core/errors.ts';
import {
  computeEntryBundleWidth,
  computeTileWidth,
  formatEntryBundle,
  parseTilePath,
  readTile,
} from '../../log/index.ts';
import { LOG_PREFIX, ROUTES } from '../../protocol/routes.ts';
import type { ConsistencyProofResponse, InclusionProofResponse } from '../../protocol/wire.ts';
import type { Registry } from '../../registry/index.ts';
import { type App, type AppContext, readIntegerQuery } from '../app-env.ts';
import { IMMUTABLE_CACHE_CONTROL } from '../immutable-body-cache.ts';

const NOTE_CONTENT_TYPE = 'text/plain; charset=utf-8';
/** tlog-tiles: a tile (full, or partial of a given width) never changes once it exists. */
const TILE_HEADERS = { 'Content-Type': 'application/octet-stream', 'Cache-Control': IMMUTABLE_CACHE_CONTROL };

export function mountLogRoutes(app: App, registry: Registry): void {
  app.get(ROUTES.logCheckpoint, (c) => {
    const checkpoint = registry.latestCheckpoint();
    if (!checkpoint) throw new ToolsealError('NOT_FOUND', 'the log has no checkpoint yet');
    return c.body(checkpoint.note, 200, { 'Content-Type': NOTE_CONTENT_TYPE, 'Cache-Control': 'public, max-age=5' });
  });

  app.get(ROUTES.logKey, (c) =>
    c.body(`${registry.log.verifierString}\n`, 200, {
      'Content-Type': NOTE_CONTENT_TYPE,
      'Cache-Control': 'public, max-age=3600',
    }),
  );

  app.get(ROUTES.logTile, (c) => sendTile(c, registry));

  app.get(ROUTES.inclusionProof, (c) => {
    const index = readIntegerQuery(c, 'index');
    const size = readIntegerQuery(c, 'size');
    return c.json({ index, size, hashes: registry.log.proveInclusionAt(index, size) } satisfies InclusionProofResponse);
  });

  app.get(ROUTES.consistencyProof, (c) => {
    const from = readIntegerQuery(c, 'from');
    const to = readIntegerQuery(c, 'to');
    return c.json({ from, to, hashes: registry.log.proveConsistency(from, to) } satisfies ConsistencyProofResponse);
  });
}

/** A hash tile or entry bundle, only when the latest checkpoint covers all of its width (404 otherwise). */
function sendTile(c: AppContext, registry: Registry): Response {
  const tile = parseTilePath(new URL(c.req.url).pathname.slice(LOG_PREFIX.length));
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
  const hashes = readTile(registry.log.nodeReader, tile.level, tile.index, tile.width);
  return c.body(hashes as Uint8Array<ArrayBuffer>, 200, TILE_HEADERS);
}

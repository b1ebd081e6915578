// RFC 9162 §2.1.3.1 inclusion and §2.1.4.1 consistency proofs derived from C2SP tlog-tiles hash tiles, for a
// registry (or a static mirror of one) that serves tiles but not the proof routes: tlog-tiles clients do exactly
// this. Nothing fetched is trusted: the caller verifies the proof against the signed roots as usual.

import { ToolsealError } from '../core/errors.ts';
import {
  computeTileWidth,
  formatTilePath,
  generateConsistencyProof,
  generateInclusionProof,
  HASH_SIZE,
  hashChildren,
  type NodeReader,
  TILE_HEIGHT,
  TILE_WIDTH,
} from '../log/index.ts';
import { LOG_PREFIX } from '../protocol/routes.ts';
import type { RegistryClient } from './registry-client.ts';

/** A tile's position: level L (Merkle level 8·L) and index N. */
interface TileKey {
  level: number;
  index: number;
}

/** The tile holding the level-8·L nodes a node (level, index) is computed from (one tile: 2^r ≤ 128 divides 256). */
function tileOf(level: number, index: number): TileKey {
  const tileLevel = Math.floor(level / TILE_HEIGHT);
  const first = index * 2 ** (level % TILE_HEIGHT);
  return { level: tileLevel, index: Math.floor(first / TILE_WIDTH) };
}

/** The tiles a proof generator reads: the read pattern never depends on the hash values. */
function listNeededTiles(generate: (reader: NodeReader) => unknown): TileKey[] {
  const needed = new Map<string, TileKey>();
  const zero = new Uint8Array(HASH_SIZE);
  generate({
    readNode(level, index) {
      const tile = tileOf(level, index);
      needed.set(`${tile.level}/${tile.index}`, tile);
      return zero;
    },
  });
  return [...needed.values()];
}

/** Perfect-subtree nodes read from fetched tiles; a node between tile levels is hashed from the tile below it. */
function createTileReader(tiles: ReadonlyMap<string, Uint8Array>): NodeReader {
  const readNode = (level: number, index: number): Uint8Array => {
    if (level % TILE_HEIGHT !== 0) {
      return hashChildren(readNode(level - 1, 2 * index), readNode(level - 1, 2 * index + 1));
    }
    const tile = tiles.get(`${level / TILE_HEIGHT}/${Math.floor(index / TILE_WIDTH)}`);
    const offset = (index % TILE_WIDTH) * HASH_SIZE;
    if (tile === undefined || offset + HASH_SIZE > tile.byteLength) {
      throw new ToolsealError('PROOF_INVALID', `no tile holds node (${level}, ${index})`);
    }
    return tile.slice(offset, offset + HASH_SIZE);
  };
  return { readNode };
}

/** Fetch every tile `generate` needs (each at its width in the tree of `treeSize`), then run it on them. */
async function generateFromTiles(
  http: RegistryClient,
  treeSize: number,
  generate: (reader: NodeReader) => Uint8Array[],
): Promise<Uint8Array[]> {
  const tiles = new Map<string, Uint8Array>();
  await Promise.all(
    listNeededTiles(generate).map(async ({ level, index }) => {
      const width = computeTileWidth(level, index, treeSize);
      const path = `${LOG_PREFIX}${formatTilePath(level, index, width)}`;
      const bytes = await http.getBytes(path);
      if (bytes.byteLength !== width * HASH_SIZE) {
        throw new ToolsealError('FETCH_FAILED', `${path} is ${bytes.byteLength} bytes, not ${width} hashes`);
      }
      tiles.set(`${level}/${index}`, bytes);
    }),
  );
  return generate(createTileReader(tiles));
}

/** The consistency proof from tree size `from` to `to` (0 < from < to), computed from the tiles of tree `to`. */
export function fetchConsistencyProofFromTiles(http: RegistryClient, from: number, to: number): Promise<Uint8Array[]> {
  return generateFromTiles(http, to, (reader) => generateConsistencyProof(reader, from, to));
}

/** The inclusion proof of leaf `index` in the tree of size `size`, computed from the tiles of that tree. */
export function fetchInclusionProofFromTiles(http: RegistryClient, index: number, size: number): Promise<Uint8Array[]> {
  return generateFromTiles(http, size, (reader) => generateInclusionProof(reader, index, size));
}

/**
 * A proof route's answer, else (when the route answered with an error: a static mirror has no query-string routes)
 * the same proof derived from tiles. When the tiles cannot be had either, the route's error is thrown.
 */
export async function withTileFallback<T>(fromRoute: () => Promise<T>, fromTiles: () => Promise<T>): Promise<T> {
  try {
    return await fromRoute();
  } catch (routeError) {
    if (!(routeError instanceof ToolsealError) || !ROUTE_FALLBACK_CODES.has(routeError.code)) throw routeError;
    try {
      return await fromTiles();
    } catch {
      throw routeError;
    }
  }
}

const ROUTE_FALLBACK_CODES: ReadonlySet<string> = new Set(['NOT_FOUND', 'FETCH_FAILED']);

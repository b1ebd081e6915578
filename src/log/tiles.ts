// C2SP tlog-tiles (https://c2sp.org/tlog-tiles): tile and entry-bundle paths, tile contents from the node store, entry bundles.

// Tile height is 8: a full tile holds 256 hashes (8,192 bytes). Tile (L, N) holds the hashes of the
// perfect Merkle nodes at level 8*L with indexes N*256 .. N*256+W-1 — exactly the nodes our node
// store keeps (merkle.ts), so a tile is W reads. Paths: "tile/<L>/<N>[.p/<W>]" and
// "tile/entries/<N>[.p/<W>]" (no URL prefix), N in zero-padded 3-digit groups, all but the last
// prefixed with "x" (1234067 -> x001/x234/067). An entry bundle is a sequence of entries, each a
// big-endian uint16 length followed by that many bytes.
//
// Errors: an invalid path or argument is 'BAD_REQUEST'; a malformed entry bundle is 'PROOF_INVALID'.

import { ToolsealError } from '../core/errors.ts';
import { HASH_SIZE, type NodeReader } from './merkle.ts';

/** tlog-tiles: tiles are 8 Merkle levels high. */
export const TILE_HEIGHT = 8;
/** tlog-tiles: a full tile holds 2^8 hashes. */
export const TILE_WIDTH = 256;
/** tlog-tiles: L is 0..63. */
export const MAX_TILE_LEVEL = 63;
/** The largest entry an entry bundle can hold (uint16 length prefix). */
export const MAX_ENTRY_SIZE = 0xffff;

/** A parsed tile path: a hash tile at a level, or an entry bundle. Width 256 means a full tile. */
export type TilePath =
  | { kind: 'hashes'; level: number; index: number; width: number }
  | { kind: 'entries'; index: number; width: number };

/** One tile that exists for some tree size. */
export interface TileRef {
  level: number;
  index: number;
  width: number;
}

function badRequest(message: string): never {
  throw new ToolsealError('BAD_REQUEST', message);
}

function requireIndex(index: number): void {
  if (!Number.isSafeInteger(index) || index < 0)
    badRequest(`tile index must be a non-negative safe integer, got ${String(index)}`);
}

function requireLevel(level: number): void {
  if (!Number.isInteger(level) || level < 0 || level > MAX_TILE_LEVEL)
    badRequest(`tile level must be 0..${MAX_TILE_LEVEL}, got ${String(level)}`);
}

function requireWidth(width: number): void {
  if (!Number.isInteger(width) || width < 1 || width > TILE_WIDTH)
    badRequest(`tile width must be 1..${TILE_WIDTH}, got ${String(width)}`);
}

/** tlog-tiles <N>: 3-digit groups, all but the last prefixed with "x" (0 -> 000, 1234067 -> x001/x234/067). */
export function formatTileIndex(index: number): string {
  requireIndex(index);
  let rest = Math.floor(index / 1000);
  let path = String(index % 1000).padStart(3, '0');
  while (rest > 0) {
    path = `x${String(rest % 1000).padStart(3, '0')}/${path}`;
    rest = Math.floor(rest / 1000);
  }
  return path;
}

function formatWidthSuffix(width: number | undefined): string {
  if (width === undefined || width === TILE_WIDTH) return '';
  requireWidth(width);
  return `.p/${width}`;
}

/** tlog-tiles "Merkle Tree": "tile/<L>/<N>[.p/<W>]"; width omitted or 256 means a full tile. */
export function formatTilePath(level: number, index: number, width?: number): string {
  requireLevel(level);
  return `tile/${level}/${formatTileIndex(index)}${formatWidthSuffix(width)}`;
}

/** tlog-tiles "Log entries": "tile/entries/<N>[.p/<W>]". */
export function formatEntryBundlePath(index: number, width?: number): string {
  return `tile/entries/${formatTileIndex(index)}${formatWidthSuffix(width)}`;
}

const TILE_PATH = /^tile\/(entries|0|[1-9][0-9]?)\/((?:x[0-9]{3}\/)*[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/;

/**
 * Parse "tile/<L>/<N>[.p/<W>]" or "tile/entries/<N>[.p/<W>]" (no URL prefix, no leading slash).
 * Only the canonical spelling is accepted (no leading zero groups, no ".p/256"), so one tile has
 * exactly one path.
 */
export function parseTilePath(path: string): TilePath {
  const match = typeof path === 'string' ? TILE_PATH.exec(path) : null;
  if (match === null) badRequest(`not a tile path: ${JSON.stringify(path)}`);
  const [, levelText, indexText, widthText] = match as RegExpExecArray & [string, string, string, string | undefined];
  const index = indexText.split('/').reduce((n, group) => n * 1000 + Number(group.replace('x', '')), 0);
  if (!Number.isSafeInteger(index)) badRequest(`tile index too large in ${JSON.stringify(path)}`);
  const width = widthText === undefined ? TILE_WIDTH : Number(widthText);
  if (widthText !== undefined && width >= TILE_WIDTH)
    badRequest(`partial tile width must be 1..255 in ${JSON.stringify(path)}`);
  const parsed: TilePath =
    levelText === 'entries'
      ? { kind: 'entries', index, width }
      : { kind: 'hashes', level: Number(levelText), index, width };
  if (parsed.kind === 'hashes' && parsed.level > MAX_TILE_LEVEL) badRequest(`tile level must be 0..${MAX_TILE_LEVEL}`);
  const canonical =
    parsed.kind === 'entries' ? formatEntryBundlePath(index, width) : formatTilePath(parsed.level, index, width);
  if (canonical !== path) badRequest(`not the canonical tile path: ${JSON.stringify(path)} (expected ${canonical})`);
  return parsed;
}

/** 256^level as a number (exact while it stays below 2^53). */
function tileSpan(level: number): number {
  return TILE_WIDTH ** level;
}

/**
 * How many hashes tile (level, index) holds in the tree of size `treeSize`: 256 when full, 1..255
 * when partial (the rightmost tile of its level), 0 when the tile does not exist yet.
 * tlog-tiles "Partial Tiles": the partial tile at level l has floor(s / 256^l) mod 256 entries.
 */
export function computeTileWidth(level: number, index: number, treeSize: number): number {
  requireLevel(level);
  requireIndex(index);
  requireIndex(treeSize);
  const hashesAtLevel = Math.floor(treeSize / tileSpan(level));
  return Math.max(0, Math.min(TILE_WIDTH, hashesAtLevel - index * TILE_WIDTH));
}

/** True when tile (level, index) is full (256 hashes) in the tree of size `treeSize`. */
export function isTileFull(level: number, index: number, treeSize: number): boolean {
  return computeTileWidth(level, index, treeSize) === TILE_WIDTH;
}

/** How many entries entry bundle `index` holds in the tree of size `treeSize` (as level-0 tiles). */
export function computeEntryBundleWidth(index: number, treeSize: number): number {
  return computeTileWidth(0, index, treeSize);
}

/**
 * The partial tiles a tree of size `treeSize` needs, one per level at most, lowest level first
 * (tlog-tiles: a tree of 70,000 has partial tiles (0, 273, 112), (1, 1, 17) and (2, 0, 1)).
 */
export function listPartialTiles(treeSize: number): TileRef[] {
  requireIndex(treeSize);
  const tiles: TileRef[] = [];
  for (let level = 0; level <= MAX_TILE_LEVEL; level++) {
    const hashesAtLevel = Math.floor(treeSize / tileSpan(level));
    if (hashesAtLevel === 0) break;
    const width = hashesAtLevel % TILE_WIDTH;
    if (width > 0) tiles.push({ level, index: Math.floor(hashesAtLevel / TILE_WIDTH), width });
  }
  return tiles;
}

/**
 * Tile (level, index) of width `width`: the concatenated 32-byte hashes of Merkle nodes
 * (8*level, index*256 + i) for i in 0..width-1. The caller checks the width exists for the tree
 * size it serves (computeTileWidth); a missing node makes the reader throw.
 */
export function readTile(reader: NodeReader, level: number, index: number, width: number): Uint8Array {
  requireLevel(level);
  requireIndex(index);
  requireWidth(width);
  const tile = new Uint8Array(width * HASH_SIZE);
  const merkleLevel = level * TILE_HEIGHT;
  const first = index * TILE_WIDTH;
  for (let i = 0; i < width; i++) tile.set(reader.readNode(merkleLevel, first + i), i * HASH_SIZE);
  return tile;
}

/** Split a tile's bytes into its 32-byte hashes. */
export function splitTileHashes(tile: Uint8Array): Uint8Array[] {
  if (tile.byteLength === 0 || tile.byteLength % HASH_SIZE !== 0 || tile.byteLength > TILE_WIDTH * HASH_SIZE) {
    throw new ToolsealError('PROOF_INVALID', `a tile is 1..${TILE_WIDTH} hashes of ${HASH_SIZE} bytes`);
  }
  const hashes: Uint8Array[] = [];
  for (let offset = 0; offset < tile.byteLength; offset += HASH_SIZE)
    hashes.push(tile.slice(offset, offset + HASH_SIZE));
  return hashes;
}

/** tlog-tiles "Log entries": each entry as a big-endian uint16 length and its bytes; at most 256 entries. */
export function formatEntryBundle(entries: readonly Uint8Array[]): Uint8Array {
  if (entries.length > TILE_WIDTH) badRequest(`an entry bundle holds at most ${TILE_WIDTH} entries`);
  let total = 0;
  for (const entry of entries) {
    if (entry.byteLength > MAX_ENTRY_SIZE)
      badRequest(`a bundled entry is at most ${MAX_ENTRY_SIZE} bytes, got ${entry.byteLength}`);
    total += 2 + entry.byteLength;
  }
  const bundle = new Uint8Array(total);
  let offset = 0;
  for (const entry of entries) {
    bundle[offset] = entry.byteLength >>> 8;
    bundle[offset + 1] = entry.byteLength & 0xff;
    bundle.set(entry, offset + 2);
    offset += 2 + entry.byteLength;
  }
  return bundle;
}

/** Parse an entry bundle; refuses truncated data and more than 256 entries. */
export function parseEntryBundle(bundle: Uint8Array): Uint8Array[] {
  const entries: Uint8Array[] = [];
  let offset = 0;
  while (offset < bundle.byteLength) {
    if (offset + 2 > bundle.byteLength)
      throw new ToolsealError('PROOF_INVALID', 'entry bundle ends inside a length prefix');
    const length = (bundle[offset]! << 8) | bundle[offset + 1]!;
    const start = offset + 2;
    if (start + length > bundle.byteLength)
      throw new ToolsealError('PROOF_INVALID', 'entry bundle ends inside an entry');
    entries.push(bundle.slice(start, start + length));
    offset = start + length;
    if (entries.length > TILE_WIDTH)
      throw new ToolsealError('PROOF_INVALID', `an entry bundle holds at most ${TILE_WIDTH} entries`);
  }
  return entries;
}

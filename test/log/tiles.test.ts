// C2SP tlog-tiles: path encoding, widths, tile contents from the node store, entry bundles.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  computeEntryBundleWidth,
  computeSubtreeHash,
  computeTileWidth,
  formatEntryBundle,
  formatEntryBundlePath,
  formatTileIndex,
  formatTilePath,
  hashChildren,
  isTileFull,
  listPartialTiles,
  parseEntryBundle,
  parseTilePath,
  readTile,
  splitTileHashes,
} from '../../src/log/index.ts';
import { buildStore, codeOf, hex } from './helpers.ts';

describe('tile paths', () => {
  it.each([
    [0, '000'],
    [7, '007'],
    [999, '999'],
    [1000, 'x001/000'],
    [1234067, 'x001/x234/067'],
    [1_000_000_000, 'x001/x000/x000/000'],
  ])('index %i is %s', (index, path) => {
    expect(formatTileIndex(index)).toBe(path);
  });

  it('formats full and partial tiles and entry bundles', () => {
    expect(formatTilePath(0, 0)).toBe('tile/0/000');
    expect(formatTilePath(0, 1234067)).toBe('tile/0/x001/x234/067');
    expect(formatTilePath(1, 3, 5)).toBe('tile/1/003.p/5');
    expect(formatTilePath(2, 3, 256)).toBe('tile/2/003');
    expect(formatEntryBundlePath(1234067, 5)).toBe('tile/entries/x001/x234/067.p/5');
    expect(formatEntryBundlePath(0)).toBe('tile/entries/000');
  });

  it('parses what it formats', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 63 }),
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 1, max: 256 }),
        (level, index, width) => {
          expect(parseTilePath(formatTilePath(level, index, width))).toEqual({ kind: 'hashes', level, index, width });
          expect(parseTilePath(formatEntryBundlePath(index, width))).toEqual({ kind: 'entries', index, width });
        },
      ),
    );
    expect(parseTilePath('tile/0/x001/x234/067.p/5')).toEqual({ kind: 'hashes', level: 0, index: 1234067, width: 5 });
  });

  it.each([
    'tile/0/0',
    'tile/0/1234',
    'tile/00/000',
    'tile/64/000',
    'tile/0/001/002',
    'tile/0/x000/001',
    'tile/0/000.p/0',
    'tile/0/000.p/256',
    'tile/0/000.p/05',
    'tile/0/000.p/',
    'tile/0/000/',
    '/tile/0/000',
    'tile/data/000',
    'tile/entries/x1/000',
    'tile/-1/000',
  ])('refuses %s', (path) => {
    expect(codeOf(() => parseTilePath(path))).toBe('BAD_REQUEST');
  });

  it('refuses bad arguments', () => {
    expect(codeOf(() => formatTilePath(64, 0))).toBe('BAD_REQUEST');
    expect(codeOf(() => formatTilePath(0, -1))).toBe('BAD_REQUEST');
    expect(codeOf(() => formatTilePath(0, 0, 0))).toBe('BAD_REQUEST');
    expect(codeOf(() => formatTilePath(0, 0, 257))).toBe('BAD_REQUEST');
  });
});

describe('tile widths', () => {
  it('follows the spec example: a tree of 70,000', () => {
    expect(listPartialTiles(70_000)).toEqual([
      { level: 0, index: 273, width: 112 },
      { level: 1, index: 1, width: 17 },
      { level: 2, index: 0, width: 1 },
    ]);
    expect(isTileFull(0, 272, 70_000)).toBe(true);
    expect(computeTileWidth(0, 273, 70_000)).toBe(112);
    expect(computeTileWidth(0, 274, 70_000)).toBe(0);
    expect(isTileFull(1, 0, 70_000)).toBe(true);
    expect(computeTileWidth(1, 1, 70_000)).toBe(17);
    expect(computeTileWidth(2, 0, 70_000)).toBe(1);
    expect(computeTileWidth(3, 0, 70_000)).toBe(0);
    expect(computeEntryBundleWidth(273, 70_000)).toBe(112);
  });

  it('a tree of 256 has a full level-0 tile and a level-1 tile of width 1', () => {
    expect(isTileFull(0, 0, 256)).toBe(true);
    expect(listPartialTiles(256)).toEqual([{ level: 1, index: 0, width: 1 }]);
    expect(listPartialTiles(0)).toEqual([]);
  });
});

describe('tile contents', () => {
  const size = 256 * 3 + 17;
  const store = buildStore(Array.from({ length: size }, (_, i) => new Uint8Array([i & 0xff, i >> 8])));

  it('level-0 tiles are the leaf hashes', () => {
    const tile = readTile(store, 0, 1, 256);
    expect(tile).toHaveLength(256 * 32);
    splitTileHashes(tile).forEach((hash, i) => {
      expect(hex(hash)).toBe(hex(store.readNode(0, 256 + i)));
    });
    const partial = readTile(store, 0, 3, computeTileWidth(0, 3, size));
    expect(splitTileHashes(partial)).toHaveLength(17);
    expect(hex(partial)).toBe(hex(readTile(store, 0, 3, 256 + 17 - 256)));
  });

  it('level-1 tiles hold the hashes of full level-0 tiles (Merkle level 8)', () => {
    const width = computeTileWidth(1, 0, size);
    expect(width).toBe(3);
    const hashes = splitTileHashes(readTile(store, 1, 0, width));
    hashes.forEach((hash, i) => {
      expect(hex(hash)).toBe(hex(store.readNode(8, i)));
      expect(hex(hash)).toBe(hex(computeSubtreeHash(store, i * 256, (i + 1) * 256)));
    });
  });

  it('a tile hash is the Merkle root of the tile below it', () => {
    let level = splitTileHashes(readTile(store, 0, 2, 256));
    while (level.length > 1)
      level = Array.from({ length: level.length / 2 }, (_, i) => hashChildren(level[2 * i]!, level[2 * i + 1]!));
    expect(hex(level[0]!)).toBe(hex(splitTileHashes(readTile(store, 1, 0, 3))[2]!));
  });

  it('a tile beyond the tree fails to read', () => {
    expect(codeOf(() => readTile(store, 0, 3, 18))).toBe('INTERNAL');
    expect(codeOf(() => readTile(store, 1, 0, 4))).toBe('INTERNAL');
  });
});

describe('entry bundles', () => {
  it('round-trips', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 256 }), (entries) => {
        expect(parseEntryBundle(formatEntryBundle(entries)).map(hex)).toEqual(entries.map(hex));
      }),
      { numRuns: 50 },
    );
  });

  it('uses big-endian uint16 length prefixes', () => {
    const bundle = formatEntryBundle([new Uint8Array([0xaa]), new Uint8Array(0), new Uint8Array(258).fill(7)]);
    expect(hex(bundle.slice(0, 5))).toBe('0001aa0000');
    expect(hex(bundle.slice(5, 7))).toBe('0102');
    expect(bundle).toHaveLength(2 + 1 + 2 + 2 + 258);
    expect(parseEntryBundle(formatEntryBundle([new Uint8Array(0xffff)]))[0]).toHaveLength(0xffff);
  });

  it('refuses oversized entries, too many entries and truncated bundles', () => {
    expect(codeOf(() => formatEntryBundle([new Uint8Array(0x10000)]))).toBe('BAD_REQUEST');
    expect(codeOf(() => formatEntryBundle(Array.from({ length: 257 }, () => new Uint8Array(1))))).toBe('BAD_REQUEST');
    const bundle = formatEntryBundle([new Uint8Array([1, 2, 3])]);
    expect(codeOf(() => parseEntryBundle(bundle.slice(0, 1)))).toBe('PROOF_INVALID');
    expect(codeOf(() => parseEntryBundle(bundle.slice(0, 4)))).toBe('PROOF_INVALID');
    expect(codeOf(() => parseEntryBundle(new Uint8Array(257 * 2)))).toBe('PROOF_INVALID');
    expect(parseEntryBundle(new Uint8Array(0))).toEqual([]);
  });
});

// Proofs derived from C2SP tlog-tiles equal the RFC 9162 proofs the registry computes from its node store, for
// trees spanning three tile levels; the route is used when it answers, the tiles when it does not.

import { describe, expect, it } from 'vitest';
import { RegistryClient } from '../../src/client/registry-client.ts';
import {
  fetchConsistencyProofFromTiles,
  fetchInclusionProofFromTiles,
  withTileFallback,
} from '../../src/client/tile-proofs.ts';
import { ToolsealError } from '../../src/core/errors.ts';
import {
  computeTileWidth,
  createMemoryNodeStore,
  generateConsistencyProof,
  generateInclusionProof,
  hashLeaf,
  parseTilePath,
  readTile,
} from '../../src/log/index.ts';

const TREE = 70_000; // tiles at levels 0, 1 and 2 (70,000 > 256²)
const store = createMemoryNodeStore();
for (let i = 0; i < TREE; i++) store.append(hashLeaf(new TextEncoder().encode(`leaf ${i}`)));

/** A registry that serves the tiles of a tree of `size` (and nothing else: a 404 problem). */
function tileServer(size: number, requested: string[] = []): RegistryClient {
  const fetchTiles: typeof fetch = async (input) => {
    const path = new URL(String(input)).pathname;
    requested.push(path);
    if (path.startsWith('/v1/log/tile/')) {
      const tile = parseTilePath(path.slice('/v1/log/'.length));
      if (tile.kind === 'hashes' && computeTileWidth(tile.level, tile.index, size) === tile.width) {
        return new Response(readTile(store, tile.level, tile.index, tile.width) as Uint8Array<ArrayBuffer>);
      }
    }
    return new Response(JSON.stringify({ code: 'NOT_FOUND' }), { status: 404 });
  };
  return new RegistryClient('http://mirror.test', { fetch: fetchTiles });
}

describe('proofs from tiles', () => {
  const pairs: [number, number][] = [
    [1, 2],
    [3, 7],
    [255, 256],
    [256, 257],
    [100, 65_536],
    [65_535, 65_537],
    [1000, 69_999],
    [12_345, TREE],
  ];

  it.each(pairs)('consistency %i → %i equals the node store proof', async (from, to) => {
    const requested: string[] = [];
    const proof = await fetchConsistencyProofFromTiles(tileServer(to, requested), from, to);
    expect(proof).toEqual(generateConsistencyProof(store, from, to));
    // Only tiles, each at most once.
    expect(new Set(requested).size).toBe(requested.length);
    expect(requested.every((path) => path.startsWith('/v1/log/tile/'))).toBe(true);
  });

  it.each(pairs)('inclusion of leaf %i in %i equals the node store proof', async (index, size) => {
    expect(await fetchInclusionProofFromTiles(tileServer(size), index - 1, size)).toEqual(
      generateInclusionProof(store, index - 1, size),
    );
  });

  it('a tile of the wrong length is refused', async () => {
    const short: typeof fetch = async () => new Response(new Uint8Array(31));
    const http = new RegistryClient('http://mirror.test', { fetch: short });
    await expect(fetchConsistencyProofFromTiles(http, 3, 7)).rejects.toMatchObject({ code: 'FETCH_FAILED' });
  });

  it('withTileFallback prefers the route, falls back on its 404, and rethrows the route error if tiles fail', async () => {
    expect(
      await withTileFallback(
        async () => 'route',
        async () => 'tiles',
      ),
    ).toBe('route');
    const notFound = new ToolsealError('NOT_FOUND', 'no route');
    expect(
      await withTileFallback(
        () => Promise.reject(notFound),
        async () => 'tiles',
      ),
    ).toBe('tiles');
    await expect(
      withTileFallback(
        () => Promise.reject(notFound),
        () => Promise.reject(new Error('no tiles')),
      ),
    ).rejects.toBe(notFound);
    const other = new ToolsealError('PROOF_INVALID', 'bad');
    await expect(
      withTileFallback(
        () => Promise.reject(other),
        async () => 'tiles',
      ),
    ).rejects.toBe(other);
  });
});

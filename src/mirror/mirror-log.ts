// The mirror's copy of the transparency log (C2SP tlog-tiles): the tree it already holds is rebuilt from its own
// level-0 tiles and must give the remembered root; new entries come from the registry's entry bundles and must
// give the signed checkpoint's root (RFC 6962 §2.1), so every tile written is one the signed tree determines.

import type { RegistryClient } from '../client/registry-client.ts';
import { equalBytes } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import {
  computeEntryBundleWidth,
  computeRootHash,
  computeTileWidth,
  createMemoryNodeStore,
  formatTilePath,
  hashLeaf,
  type MemoryNodeStore,
  parseEntryBundle,
  readTile,
  splitTileHashes,
  TILE_WIDTH,
} from '../log/index.ts';
import { entryBundlePath, LOG_PREFIX } from '../protocol/routes.ts';
import type { MirrorFolder } from './mirror-folder.ts';
import { mirrorFileOf } from './mirror-layout.ts';

function tileFile(level: number, index: number, width: number): string {
  return mirrorFileOf(`${LOG_PREFIX}${formatTilePath(level, index, width)}`);
}

/**
 * The tree of size `size` the mirror already serves, from its level-0 tiles; INTEGRITY_ERROR when a tile is
 * missing or the tree's root is not `rootHash` (the folder was changed since it was mirrored).
 */
export async function loadMirroredTree(
  folder: MirrorFolder,
  size: number,
  rootHash: Uint8Array | undefined,
): Promise<MemoryNodeStore> {
  const nodes = createMemoryNodeStore();
  for (let index = 0; index * TILE_WIDTH < size; index++) {
    const width = computeTileWidth(0, index, size);
    const file = tileFile(0, index, width);
    const bytes = await folder.read(file);
    if (bytes === undefined || bytes.byteLength !== width * 32) {
      throw new ToolsealError('INTEGRITY_ERROR', `the mirror folder lacks ${file} (or it was changed)`);
    }
    for (const leaf of splitTileHashes(bytes)) nodes.append(leaf);
  }
  if (rootHash !== undefined && !equalBytes(computeRootHash(nodes, size), rootHash)) {
    throw new ToolsealError('INTEGRITY_ERROR', `the mirror folder's log tiles no longer give the root of size ${size}`);
  }
  return nodes;
}

/**
 * Fetch the entry bundles holding entries [from, to) (each at its width in the tree of `to`), check that the
 * entries the mirror already has are unchanged, append the new leaves to `nodes` and stage each bundle.
 * Returns the staged bundle indexes, in order. Nothing is placed before the caller has checked the root.
 */
export async function stageNewEntries(
  http: RegistryClient,
  folder: MirrorFolder,
  nodes: MemoryNodeStore,
  from: number,
  to: number,
): Promise<number[]> {
  const staged: number[] = [];
  if (from >= to) return staged; // nothing new (not even the partial bundle at the edge is fetched again)
  for (let bundle = Math.floor(from / TILE_WIDTH); bundle * TILE_WIDTH < to; bundle++) {
    const width = computeEntryBundleWidth(bundle, to);
    const path = entryBundlePath(bundle, width);
    const bytes = await http.getBytes(path);
    const entries = parseEntryBundle(bytes);
    if (entries.length !== width) {
      throw new ToolsealError('PROOF_INVALID', `${path} holds ${entries.length} entries, not ${width}`);
    }
    entries.forEach((entry, offset) => {
      const index = bundle * TILE_WIDTH + offset;
      const leaf = hashLeaf(entry);
      if (index >= from) nodes.append(leaf);
      else if (!equalBytes(leaf, nodes.readNode(0, index))) {
        throw new ToolsealError('LOG_INCONSISTENT', `${path}: entry ${index} is not the one mirrored before`);
      }
    });
    await folder.stage(String(bundle), bytes);
    staged.push(bundle);
  }
  return staged;
}

/** The recomputed root of the tree of size `size` must be the signed one (PROOF_INVALID otherwise). */
export function checkRecomputedRoot(nodes: MemoryNodeStore, size: number, signedRoot: Uint8Array): void {
  if (nodes.size !== size || !equalBytes(computeRootHash(nodes, size), signedRoot)) {
    throw new ToolsealError('PROOF_INVALID', `the log's entries do not hash to the signed root of size ${size}`);
  }
}

/**
 * Visit the new entries (index ≥ from) of each staged bundle, bundle by bundle in log order, then place the bundle
 * as its tlog-tiles file (and `.gz`).
 */
export async function placeStagedEntries(
  folder: MirrorFolder,
  staged: readonly number[],
  from: number,
  to: number,
  visit: (entries: readonly Uint8Array[]) => Promise<void>,
): Promise<void> {
  for (const bundle of staged) {
    const entries = parseEntryBundle(await folder.readStaged(String(bundle)));
    await visit(entries.slice(Math.max(0, from - bundle * TILE_WIDTH)));
    const width = computeEntryBundleWidth(bundle, to);
    await folder.place(String(bundle), mirrorFileOf(entryBundlePath(bundle, width)));
  }
}

/**
 * Every hash tile (full or partial) the tree of `to` has and the tree of `from` had not: fetched from the
 * registry, and written only when it is exactly the tile of the verified tree (PROOF_INVALID otherwise).
 */
export async function mirrorHashTiles(
  http: RegistryClient,
  folder: MirrorFolder,
  nodes: MemoryNodeStore,
  from: number,
  to: number,
): Promise<void> {
  for (let level = 0; Math.floor(to / TILE_WIDTH ** level) > 0; level++) {
    const countTo = Math.floor(to / TILE_WIDTH ** level);
    const countFrom = Math.floor(from / TILE_WIDTH ** level);
    if (countTo === countFrom) continue;
    for (let index = Math.floor(countFrom / TILE_WIDTH); index * TILE_WIDTH < countTo; index++) {
      const width = computeTileWidth(level, index, to);
      const path = `${LOG_PREFIX}${formatTilePath(level, index, width)}`;
      const served = await http.getBytes(path);
      if (!equalBytes(served, readTile(nodes, level, index, width))) {
        throw new ToolsealError('PROOF_INVALID', `${path} is not the tile of the signed tree`);
      }
      await folder.write(tileFile(level, index, width), served);
    }
  }
}

// Merkle computations over stored nodes in one round trip (issue 24 §6): the nodes a proof, root or append needs
// depend only on sizes and indexes (RFC 9162 §2.1), so a first pass lists them, one query fetches them all, and a
// second pass computes from what was fetched (as src/client/tile-proofs.ts does for tiles).

import { ToolsealError } from '../core/errors.ts';
import type { NodeReader } from '../log/index.ts';
import { type LogStore, logNodeKey } from '../store/index.ts';

const PLACEHOLDER = new Uint8Array(32);

/** Run `compute` on the stored nodes it reads; a node it needs that is not stored is INTEGRITY_ERROR. */
export async function computeWithStoredNodes<T>(
  store: Pick<LogStore, 'readLogNodes'>,
  compute: (reader: NodeReader) => T,
): Promise<T> {
  const wanted: { level: number; index: number }[] = [];
  const seen = new Set<string>();
  compute({
    readNode: (level, index) => {
      const key = logNodeKey(level, index);
      if (!seen.has(key)) {
        seen.add(key);
        wanted.push({ level, index });
      }
      return PLACEHOLDER;
    },
  });
  const found = wanted.length === 0 ? new Map<string, Buffer>() : await store.readLogNodes(wanted);
  return compute({
    readNode: (level, index) => {
      const hash = found.get(logNodeKey(level, index));
      if (hash === undefined) throw new ToolsealError('INTEGRITY_ERROR', `log node ${level}/${index} is missing`);
      return hash;
    },
  });
}

// The store contract for batches larger than one statement (issue 24 §2), on every store of store-backends.ts: the
// multi-row writes a publish batch or the bundle backfill makes keep every row and every byte exactly, also beyond
// PostgreSQL's 65,535 parameters a statement (src/store/postgres/multi-row.ts), and a batch refused at its last row
// stores none of it.

import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { LogEntryRecord, LogNodeRecord } from '../../../src/store/index.ts';
import { logNodeKey } from '../../../src/store/port.ts';
import { cleanupTempDirs } from '../../helpers/registry-helpers.ts';
import { contractBackends, type StoreBackend } from './store-backends.ts';

afterAll(cleanupTempDirs);

const TIMEOUT = 240_000;
/** Entries (4 values each) and nodes (3 each) together over 65,535 parameters; blobs (3 each) too. */
const LEAVES = 12_000;
const BLOBS = 22_000;

/** Bytes that differ per row and hold every byte value across rows (0x00, 0x5c '\\', 0x27 quote, 0xff…). */
function bytesOf(row: number, length: number): Buffer {
  return Buffer.from(Array.from({ length }, (_, i) => (row * 7 + i) % 256));
}

function defineBatchContract(backend: StoreBackend): void {
  it(
    'log leaves and nodes beyond one statement round trip exactly, in one transaction',
    async () => {
      const opened = await backend.open();
      try {
        const { store } = opened;
        const entries: LogEntryRecord[] = Array.from({ length: LEAVES }, (_, index) => ({
          index,
          kind: index % 2 === 0 ? 'attestation' : 'bundle',
          data: bytesOf(index, 40),
          leafHash: createHash('sha256').update(bytesOf(index, 40)).digest(),
        }));
        const nodes: LogNodeRecord[] = Array.from({ length: LEAVES }, (_, index) => ({
          level: 1,
          index,
          hash: bytesOf(index + 3, 32),
        }));
        await store.transaction(() => store.insertLogLeaves(entries, nodes));
        expect(await store.getLogSize()).toBe(LEAVES);
        const read = await store.readLogEntries(0, LEAVES);
        expect(read.map((entry) => entry.index)).toEqual(entries.map((entry) => entry.index));
        for (const [i, entry] of read.entries()) {
          expect(entry.kind).toBe(entries[i]!.kind);
          expect(Buffer.compare(Buffer.from(entry.data), entries[i]!.data as Buffer)).toBe(0);
          expect(Buffer.compare(Buffer.from(entry.leafHash), entries[i]!.leafHash as Buffer)).toBe(0);
        }
        const found = await store.readLogNodes(nodes.map(({ level, index }) => ({ level, index })));
        expect(found.size).toBe(LEAVES);
        for (const node of nodes) {
          expect(found.get(logNodeKey(node.level, node.index))?.equals(node.hash as Buffer)).toBe(true);
        }
        // Only nodes, or only entries: each alone is stored too.
        await store.insertLogLeaves([], [{ level: 2, index: 0, hash: bytesOf(1, 32) }]);
        await store.insertLogLeaves(
          [{ index: LEAVES, kind: 'attestation', data: bytesOf(9, 3), leafHash: bytesOf(8, 32) }],
          [],
        );
        expect(await store.getLogSize()).toBe(LEAVES + 1);
        expect((await store.readLogNodes([{ level: 2, index: 0 }])).get(logNodeKey(2, 0))).toEqual(bytesOf(1, 32));
      } finally {
        await opened.cleanup();
      }
    },
    TIMEOUT,
  );

  it(
    'blobs beyond one statement are stored exactly once each; a batch with a taken leaf stores nothing',
    async () => {
      const opened = await backend.open();
      try {
        const { store } = opened;
        const blobs = Array.from({ length: BLOBS }, (_, row) => {
          const bytes = bytesOf(row, 24 + (row % 5));
          return { digest: `sha256:${createHash('sha256').update(bytes).update(String(row)).digest('hex')}`, bytes };
        });
        await store.insertBlobsIfAbsent(blobs);
        // Again, with one new blob: the stored ones are left as they are (if absent), the new one is added.
        const extra = { digest: `sha256:${'e'.repeat(64)}`, bytes: Buffer.from([0x5c, 0x27, 0x00, 0xff]) };
        await store.insertBlobsIfAbsent([...blobs.slice(0, 3), extra]);
        for (const row of [0, 1, 21_844, 21_845, 21_846, BLOBS - 1]) {
          const stored = await store.getBlob(blobs[row]!.digest);
          expect(Buffer.compare(Buffer.from(stored!.bytes), blobs[row]!.bytes)).toBe(0);
          expect(stored!.size).toBe(blobs[row]!.bytes.byteLength);
        }
        expect(Buffer.from((await store.getBlob(extra.digest))!.bytes)).toEqual(extra.bytes);
        expect((await store.listAllBlobs()).length).toBe(BLOBS + 1);
        // A batch whose last leaf takes an index already stored: none of its rows stays.
        await store.insertLogLeaves(
          [{ index: 0, kind: 'attestation', data: bytesOf(0, 4), leafHash: bytesOf(0, 32) }],
          [],
        );
        await expect(
          store.transaction(() =>
            store.insertLogLeaves(
              Array.from({ length: LEAVES }, (_, i) => ({
                index: i + 1 === LEAVES ? 0 : i + 1,
                kind: 'attestation',
                data: bytesOf(i, 4),
                leafHash: bytesOf(i, 32),
              })),
              [],
            ),
          ),
        ).rejects.toThrow();
        expect(await store.getLogSize()).toBe(1);
      } finally {
        await opened.cleanup();
      }
    },
    TIMEOUT,
  );
}

for (const backend of contractBackends)
  describe(`store batches beyond one statement: ${backend.name}`, () => defineBatchContract(backend));

// The store contract for Sigstore bundle parts (issue 26), on every store of store-backends.ts: a bundle round trips
// exactly, one per version, the versions without one are listed for the backfill, and the database refuses to rewrite
// or remove one; a rolled-back transaction leaves none.

import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { BundleRecord, Store } from '../../../src/store/index.ts';
import { cleanupTempDirs } from '../../helpers/registry-helpers.ts';
import { contractBackends, type StoreBackend } from './store-backends.ts';

afterAll(cleanupTempDirs);

const TIMEOUT = 120_000;

/** A publisher, a blob, and one version per name in `versions`, each with its attestation leaf; their ids. */
async function seedVersions(store: Store, versions: readonly string[]): Promise<number[]> {
  return await store.transaction(async () => {
    const publisher = await store.insertPublisher('io.github.acme', 'a'.repeat(64), '2026-01-01T00:00:00.000Z');
    const ids: number[] = [];
    for (const version of versions) {
      const bytes = Buffer.from(`{"name":"io.github.acme/widgets","version":"${version}"}`);
      const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      await store.insertBlobIfAbsent(digest, bytes);
      const index = await store.getLogSize();
      await store.insertLogEntry({ index, kind: 'attestation', data: Buffer.from('leaf'), leafHash: Buffer.alloc(32) });
      const record = await store.insertVersion({
        name: 'io.github.acme/widgets',
        version,
        digest,
        publisherId: publisher.id,
        storedAt: '2026-01-01T00:00:00.000Z',
        attestation: Buffer.from('{"payload":"x"}'),
        kid: 'kid-1',
        logIndex: index,
      });
      ids.push(record.id);
    }
    return ids;
  });
}

function bundleOf(versionId: number, logIndex: number): BundleRecord {
  return {
    versionId,
    kid: 'bundle-kid',
    envelope:
      '{"payload":"eyJ9","payloadType":"application/vnd.in-toto+json","signatures":[{"sig":"AA==","keyid":"k"}]}',
    logIndex,
    integratedTime: 1_796_000_000,
    // Every byte value: the promise round trips exactly.
    promise: Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i)),
  };
}

function defineBundleContract(backend: StoreBackend): void {
  it(
    'a bundle round trips exactly, once per version; the versions without one are listed oldest first',
    async () => {
      const opened = await backend.open();
      try {
        const { store } = opened;
        const [first, second, third] = await seedVersions(store, ['1.0.0', '1.1.0', '1.2.0']);
        expect((await store.listVersionsWithoutBundle()).map((v) => v.id)).toEqual([first, second, third]);
        await store.transaction(async () => {
          const index = await store.getLogSize();
          await store.insertLogEntry({ index, kind: 'bundle', data: Buffer.from('b'), leafHash: Buffer.alloc(32) });
          await store.insertBundles([bundleOf(second!, index)]);
        });
        const got = (await store.getBundle(second!))!;
        expect(got).toEqual(bundleOf(second!, 3));
        expect(Buffer.isBuffer(got.promise)).toBe(true);
        expect(await store.getBundle(first!)).toBeUndefined();
        expect((await store.listVersionsWithoutBundle()).map((v) => v.version)).toEqual(['1.0.0', '1.2.0']);
        expect((await store.listAllBundles()).map((b) => b.versionId)).toEqual([second]);
        expect((await store.readLogEntries(3, 4))[0]!.kind).toBe('bundle');
        // A second bundle for the same version, or one claiming a taken leaf, is refused.
        await expect(store.insertBundles([{ ...bundleOf(second!, 9), kid: 'other' }])).rejects.toThrow();
        await expect(store.insertBundles([bundleOf(third!, 3)])).rejects.toThrow();
        // A rolled-back transaction leaves no bundle.
        await expect(
          store.transaction(async () => {
            await store.insertBundles([bundleOf(first!, 10)]);
            throw new Error('roll back');
          }),
        ).rejects.toThrow('roll back');
        expect(await store.getBundle(first!)).toBeUndefined();
        expect(await store.listAllBundles()).toHaveLength(1);
        // Several at once (a publish batch's): all stored, or none when one of them is refused.
        await expect(store.insertBundles([bundleOf(first!, 11), bundleOf(second!, 12)])).rejects.toThrow();
        expect(await store.listAllBundles()).toHaveLength(1);
        await store.insertBundles([bundleOf(first!, 11), bundleOf(third!, 12)]);
        expect(await store.getBundle(first!)).toEqual(bundleOf(first!, 11));
        expect(await store.getBundle(third!)).toEqual(bundleOf(third!, 12));
        expect(await store.listVersionsWithoutBundle()).toEqual([]);
        await store.insertBundles([]);
      } finally {
        await opened.cleanup();
      }
    },
    TIMEOUT,
  );

  it(
    'the database refuses to change or remove a bundle',
    async () => {
      const opened = await backend.open();
      try {
        const { store, raw } = opened;
        const [id] = await seedVersions(store, ['1.0.0']);
        await store.insertBundles([bundleOf(id!, 5)]);
        await expect(raw('UPDATE version_bundles SET kid = $1', ['other'])).rejects.toThrow(/bundles are immutable/);
        await expect(raw('DELETE FROM version_bundles')).rejects.toThrow(/bundles are immutable/);
        if (backend.dialect === 'postgres') {
          await expect(raw('TRUNCATE version_bundles')).rejects.toThrow(/bundles are immutable/);
        }
        expect(await store.getBundle(id!)).toEqual(bundleOf(id!, 5));
      } finally {
        await opened.cleanup();
      }
    },
    TIMEOUT,
  );
}

describe.each(contractBackends)('the bundle store contract on $name', (backend) => defineBundleContract(backend));

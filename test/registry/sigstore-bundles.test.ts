// The registry's Sigstore bundles (issue 26): a registry that starts on a database holding versions without a bundle
// (published before bundles existed) gives each one, as new leaves at the end of the log (nothing old rewritten), and
// serves it; fsck checks it against the keys folder's bundle keys.

import { afterAll, describe, expect, it } from 'vitest';
import { readBundleKeyList } from '../../src/keys/bundle-key-files.ts';
import { runFsck } from '../../src/registry/index.ts';
import { openRegistryAt } from '../../src/server/index.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';
import { cleanupTempDirs, createTestEnv, manifestBytes, postManifest } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

describe('bundles of versions published before bundles existed', () => {
  it('are signed and logged as new leaves when the registry starts, then served and checked by fsck', async () => {
    const env = await createTestEnv({ onDisk: true });
    for (const version of ['1.0.0', '1.1.0'])
      expect((await postManifest(env.app, manifestBytes({ version }), env.token)).status).toBe(201);
    // As a database from before issue 26: no bundle rows (their leaves stay: the log is append-only).
    const db = sqliteDatabaseOf(env.store);
    db.exec('DROP TRIGGER version_bundles_no_delete');
    db.exec('DELETE FROM version_bundles');
    const entriesBefore = await env.store.readLogEntries(0, await env.store.getLogSize());
    expect(await env.store.listVersionsWithoutBundle()).toHaveLength(2);
    await env.closeAll();

    const reopened = await openRegistryAt({
      dataDir: env.dataDir,
      keysDir: env.keysDir,
      origin: 'http://127.0.0.1:8787',
    });
    try {
      const { store, registry } = reopened;
      expect(await store.listVersionsWithoutBundle()).toEqual([]);
      const entries = await store.readLogEntries(0, await store.getLogSize());
      // Two new bundle leaves after the old ones, which are unchanged, under a new signed checkpoint.
      expect(entries).toHaveLength(entriesBefore.length + 2);
      for (const [i, entry] of entriesBefore.entries()) expect(entries[i]!.data.equals(entry.data)).toBe(true);
      expect(entries.slice(-2).map((entry) => entry.kind)).toEqual(['bundle', 'bundle']);
      expect((await store.latestCheckpoint())!.size).toBe(entries.length);
      for (const version of ['1.0.0', '1.1.0']) {
        const bundle = await registry.getBundle('io.github.acme/widgets', version);
        expect(Number(bundle.verificationMaterial.tlogEntries[0].logIndex)).toBeGreaterThanOrEqual(
          entriesBefore.length,
        );
      }
      const report = await runFsck(store, registry.log.verifierString, readBundleKeyList(env.keysDir));
      expect(report.problems).toEqual([]);
      expect(report.checked.bundles).toBe(2);
    } finally {
      await reopened.close();
    }
  });
});

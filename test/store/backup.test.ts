// The SQLite online backup (src/store/sqlite/backup.ts): an exact copy of every row, one self-contained file,
// replaced atomically, and NOT_FOUND for a folder without a database.

import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backupDatabase, openStore } from '../../src/store/sqlite/index.ts';
import {
  cleanupTempDirs,
  createTestEnv,
  makeTempDir,
  manifestBytes,
  postManifest,
  snapshotDb,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

describe('backupDatabase', () => {
  it('copies every row exactly, into one file that replaces the previous backup', async () => {
    const env = await createTestEnv({ onDisk: true });
    try {
      for (const version of ['1.0.0', '1.1.0']) {
        expect((await postManifest(env.app, manifestBytes({ version }), env.token)).status).toBe(201);
      }
      const folder = makeTempDir();
      const file = join(folder, 'registry.backup');
      writeFileSync(file, 'an older backup');
      const backup = await backupDatabase(env.dataDir, file);
      expect(backup).toMatchObject({ versions: 2, logEntries: 5 }); // a key, and two leaves per version
      expect(readdirSync(folder)).toEqual(['registry.backup']);
      const restored = join(makeTempDir(), 'data');
      mkdirSync(restored);
      copyFileSync(file, join(restored, 'toolseal.db'));
      const copy = openStore({ dataDir: restored });
      try {
        expect(snapshotDb(copy)).toEqual(snapshotDb(env.store));
      } finally {
        await copy.close();
      }
    } finally {
      await env.close();
    }
  });

  it('is NOT_FOUND without a database, and writes nothing', async () => {
    const folder = makeTempDir();
    await expect(backupDatabase(folder, join(folder, 'x.backup'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(backupDatabase(':memory:', join(folder, 'x.backup'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(readdirSync(folder)).toEqual([]);
  });
});

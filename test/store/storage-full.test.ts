// A full database (PRAGMA max_page_count just above the current size, as a full disk would be) answers publish and
// yank with 507 STORAGE_FULL problem+json, writes nothing, and recovers once there is room again; SQLite's full, I/O
// and corruption codes are translated in the store.

import { afterAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { runFsck } from '../../src/registry/index.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';
import { translateStorageError } from '../../src/store/sqlite/storage-errors.ts';
import {
  cleanupTempDirs,
  createTestEnv,
  expectProblem,
  manifestBytes,
  postManifest,
  postYank,
  snapshotDb,
  type TestEnv,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

/** Let the database grow by at most `pages` pages from now on (per connection, like a disk with that much room). */
function limitGrowth(env: TestEnv, pages: number): void {
  const db = sqliteDatabaseOf(env.store);
  const current = db.pragma('page_count', { simple: true }) as number;
  db.pragma(`max_page_count = ${current + pages}`);
}

function liftLimit(env: TestEnv): void {
  sqliteDatabaseOf(env.store).pragma('max_page_count = 1073741823');
}

/** A manifest that needs more than a page or two of room (its description alone is ~40 KB). */
const large = (version: string): Uint8Array => manifestBytes({ version, description: 'x'.repeat(40_000) });

describe('a full database', () => {
  it('publish answers 507 STORAGE_FULL with nothing written; fsck finds it intact; with room again the same publish succeeds', async () => {
    const env = await createTestEnv({ onDisk: true });
    expect((await postManifest(env.app, manifestBytes(), env.token)).status).toBe(201);
    const before = snapshotDb(env.store);
    limitGrowth(env, 1);

    const refused = await expectProblem(await postManifest(env.app, large('2.0.0'), env.token), 'STORAGE_FULL');
    expect(refused.status).toBe(507);
    expect(refused.detail).toMatch(/storage is full/);
    expect(refused.detail).not.toContain(env.dataDir);
    expect(env.unexpectedErrors).toEqual([]);
    expect(snapshotDb(env.store)).toEqual(before);
    const report = await runFsck(env.store, env.registry.log.verifierString);
    expect(report.problems).toEqual([]);

    liftLimit(env);
    const retried = await postManifest(env.app, large('2.0.0'), env.token);
    expect(retried.status).toBe(201);
    expect((await runFsck(env.store, env.registry.log.verifierString)).ok).toBe(true);
    await env.closeAll();
  });

  it('a batch of publishes committed together each answer 507, and nothing of the batch is written', async () => {
    const env = await createTestEnv({ onDisk: true });
    const before = snapshotDb(env.store);
    limitGrowth(env, 1);
    const answers = await Promise.all(
      ['1.0.0', '1.1.0', '1.2.0'].map((v) => postManifest(env.app, large(v), env.token)),
    );
    for (const answer of answers) await expectProblem(answer, 'STORAGE_FULL');
    expect(snapshotDb(env.store)).toEqual(before);
    await env.closeAll();
  });

  it('a yank answers 507 STORAGE_FULL (no stack trace logged), nothing written; with room again it succeeds', async () => {
    const env = await createTestEnv({ onDisk: true });
    const versions = ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0', '1.5.0', '1.6.0', '1.7.0'];
    for (const version of versions)
      expect((await postManifest(env.app, manifestBytes({ version }), env.token)).status).toBe(201);
    limitGrowth(env, 0);
    // Yanks fill the free room of the pages there are; the one that needs a new page finds the database full.
    const reason = 'r'.repeat(1000);
    let full: string | undefined;
    for (const version of versions) {
      const before = snapshotDb(env.store);
      const response = await postYank(
        env.app,
        `/v1/manifests/io.github.acme/widgets/${version}`,
        { reason },
        env.token,
      );
      if (response.status === 200) continue;
      await expectProblem(response, 'STORAGE_FULL');
      expect(snapshotDb(env.store)).toEqual(before);
      expect((await env.store.getVersion('io.github.acme/widgets', version))!.status).toBe('active');
      full = version;
      break;
    }
    expect(full).toBeDefined();
    expect(env.unexpectedErrors).toEqual([]);

    liftLimit(env);
    expect(
      (await postYank(env.app, `/v1/manifests/io.github.acme/widgets/${full}`, { reason }, env.token)).status,
    ).toBe(200);
    expect((await runFsck(env.store, env.registry.log.verifierString)).ok).toBe(true);
    await env.closeAll();
  });
});

describe('translateStorageError', () => {
  const sqliteError = (code: string, message = 'boom'): Error => Object.assign(new Error(message), { code });
  const code = (error: unknown): string | undefined => (error instanceof ToolsealError ? error.code : undefined);

  it('SQLITE_FULL and ENOSPC are STORAGE_FULL; an I/O error is STORAGE_FULL only when the disk has no room left', async () => {
    expect(code(translateStorageError(sqliteError('SQLITE_FULL'), () => undefined))).toBe('STORAGE_FULL');
    expect(code(translateStorageError(sqliteError('ENOSPC'), () => undefined))).toBe('STORAGE_FULL');
    expect(code(translateStorageError(sqliteError('SQLITE_IOERR_WRITE'), () => 4096))).toBe('STORAGE_FULL');
    const roomy = sqliteError('SQLITE_IOERR_FSYNC');
    expect(translateStorageError(roomy, () => 10 * 1024 ** 3)).toBe(roomy);
    expect(translateStorageError(roomy, () => undefined)).toBe(roomy);
  });

  it('SQLITE_CORRUPT and SQLITE_NOTADB are INTEGRITY_ERROR "the database is corrupt"; others pass through', async () => {
    for (const [sqlite, message] of [
      ['SQLITE_CORRUPT', 'database disk image is malformed'],
      ['SQLITE_CORRUPT_INDEX', 'database disk image is malformed'],
      ['SQLITE_NOTADB', 'file is not a database'],
    ] as const) {
      const translated = translateStorageError(sqliteError(sqlite, message), () => undefined);
      expect(code(translated)).toBe('INTEGRITY_ERROR');
      expect((translated as Error).message).toBe(`the database is corrupt: ${message}`);
    }
    const other = sqliteError('SQLITE_CONSTRAINT_CHECK');
    expect(translateStorageError(other, () => 0)).toBe(other);
    const refusal = new ToolsealError('VERSION_EXISTS', 'x');
    expect(translateStorageError(refusal, () => 0)).toBe(refusal);
  });
});

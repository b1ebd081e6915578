// The store: the database itself refuses to rewrite history (triggers), namespaces are unique case-insensitively,
// only token hashes are stored, and the file database is WAL with synchronous=FULL and re-opens cleanly.

import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { createPublisher, hashToken } from '../../src/registry/index.ts';
import {
  cleanupTempDirs,
  createTestEnv,
  makeTempDir,
  manifestBytes,
  postManifest,
  postYank,
  readAllFiles,
  snapshotDb,
  type TestEnv,
} from '../helpers/registry-helpers.ts';
import { openStore } from '../../src/store/sqlite/index.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';

afterAll(cleanupTempDirs);

async function expectCode(work: () => unknown, code: string): Promise<void> {
  try {
    await work();
  } catch (error) {
    expect(error).toBeInstanceOf(ToolsealError);
    expect((error as ToolsealError).code).toBe(code);
    return;
  }
  expect.fail(`expected ${code}`);
}

describe('immutability triggers (raw SQL through sqliteDatabaseOf(store))', () => {
  let env: TestEnv;
  let digest: string;
  beforeEach(async () => {
    env = await createTestEnv();
    await postManifest(env.app, manifestBytes(), env.token);
    await postManifest(env.app, manifestBytes({ version: '2.0.0' }), env.token);
    digest = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!.digest;
    return () => env.close();
  });

  const refuses = (sql: string, ...params: unknown[]): void => {
    const before = snapshotDb(env.store);
    expect(() =>
      sqliteDatabaseOf(env.store)
        .prepare(sql)
        .run(...params),
    ).toThrow(/immutable|append-only|kept forever|yanked once|retired key/);
    expect(snapshotDb(env.store)).toEqual(before);
  };

  it('blobs: no UPDATE of bytes, digest or size; no DELETE', async () => {
    refuses('UPDATE blobs SET bytes = ? WHERE digest = ?', Buffer.from('{}'), digest);
    refuses("UPDATE blobs SET digest = 'sha256:00' WHERE digest = ?", digest);
    refuses('UPDATE blobs SET size = size + 1 WHERE digest = ?', digest);
    refuses('UPDATE blobs SET bytes = bytes');
    refuses('DELETE FROM blobs WHERE digest = ?', digest);
    refuses('DELETE FROM blobs');
  });

  it('manifest_versions: every immutable column refuses UPDATE; no DELETE', async () => {
    const updates: [string, unknown][] = [
      ['id', 999],
      ['name', 'io.github.acme/other'],
      ['version', '1.0.1'],
      ['digest', (await env.store.getVersion('io.github.acme/widgets', '2.0.0'))!.digest],
      ['publisher_id', 1],
      ['stored_at', '2000-01-01T00:00:00.000Z'],
      ['attestation', Buffer.from('{}')],
      ['kid', 'another-kid'],
      ['log_index', 999],
    ];
    for (const [column, value] of updates) {
      refuses(
        `UPDATE manifest_versions SET ${column} = ? WHERE name = 'io.github.acme/widgets' AND version = '1.0.0'`,
        value,
      );
    }
    refuses("DELETE FROM manifest_versions WHERE version = '1.0.0'");
    refuses('DELETE FROM manifest_versions');
  });

  it('manifest_versions: status moves active → yanked once, never back, never re-yanked', async () => {
    refuses("UPDATE manifest_versions SET status = 'active' WHERE version = '1.0.0'");
    refuses("UPDATE manifest_versions SET yank_reason = 'sneaky' WHERE version = '1.0.0'");
    expect(
      (await postYank(env.app, '/v1/manifests/io.github.acme/widgets/1.0.0', { reason: 'real' }, env.token)).status,
    ).toBe(200);
    refuses("UPDATE manifest_versions SET status = 'active' WHERE version = '1.0.0'");
    refuses("UPDATE manifest_versions SET status = 'yanked', yank_reason = 'rewritten' WHERE version = '1.0.0'");
    refuses("UPDATE manifest_versions SET yank_reason = 'rewritten' WHERE version = '1.0.0'");
    refuses("UPDATE manifest_versions SET yanked_at = '2000-01-01T00:00:00.000Z' WHERE version = '1.0.0'");
    // The check constraint refuses an unknown status outright.
    expect(() =>
      sqliteDatabaseOf(env.store)
        .prepare("UPDATE manifest_versions SET status = 'deleted' WHERE version = '2.0.0'")
        .run(),
    ).toThrow();
  });

  it('signing_keys: no DELETE, no change of kid, public key, nbf or log index; retired once', async () => {
    const kid = await env.registry.activeKid();
    refuses('DELETE FROM signing_keys WHERE kid = ?', kid);
    refuses("UPDATE signing_keys SET public_jwk = '{}' WHERE kid = ?", kid);
    refuses('UPDATE signing_keys SET not_before = 0 WHERE kid = ?', kid);
    refuses("UPDATE signing_keys SET kid = 'x' WHERE kid = ?", kid);
    refuses('UPDATE signing_keys SET log_index = 99 WHERE kid = ?', kid);
    await env.registry.rotateSigningKey();
    refuses('UPDATE signing_keys SET not_after = not_after + 100 WHERE kid = ?', kid);
    refuses('UPDATE signing_keys SET not_after = NULL WHERE kid = ?', kid);
  });

  it('log_entries, log_nodes and log_checkpoints: no UPDATE, no DELETE', async () => {
    refuses('UPDATE log_entries SET data = ? WHERE idx = 1', Buffer.from('x'));
    refuses('UPDATE log_entries SET leaf_hash = ? WHERE idx = 1', Buffer.alloc(32));
    refuses("UPDATE log_entries SET kind = 'yank' WHERE idx = 1");
    refuses('DELETE FROM log_entries WHERE idx = 2');
    refuses('UPDATE log_nodes SET hash = ?', Buffer.alloc(32));
    refuses('DELETE FROM log_nodes');
    refuses("UPDATE log_checkpoints SET note = 'forged'");
    refuses('UPDATE log_checkpoints SET root_hash = ?', Buffer.alloc(32));
    refuses('DELETE FROM log_checkpoints');
  });

  it('publishers: no DELETE, no new namespace; revoked once, and a revoked publisher gets no new token hash', async () => {
    refuses('DELETE FROM publishers');
    refuses("UPDATE publishers SET namespace = 'io.github.evil'");
    refuses("UPDATE publishers SET created_at = '2000-01-01T00:00:00.000Z'");
    // Before revocation the token hash may be replaced (rotation) and revoked_at set, once.
    const db = sqliteDatabaseOf(env.store);
    db.prepare('UPDATE publishers SET token_hash = ? WHERE id = ?').run(hashToken('rotated'), env.publisher.id);
    db.prepare("UPDATE publishers SET revoked_at = '2030-01-01T00:00:00.000Z' WHERE id = ?").run(env.publisher.id);
    const before = snapshotDb(env.store);
    for (const sql of [
      'UPDATE publishers SET revoked_at = NULL',
      "UPDATE publishers SET revoked_at = '2031-01-01T00:00:00.000Z'",
      "UPDATE publishers SET token_hash = 'x'",
    ])
      expect(() => db.prepare(sql).run(), sql).toThrow(/a revoked publisher stays revoked/);
    expect(snapshotDb(env.store)).toEqual(before);
  });

  it('the registry itself never needs to bypass them: a publish/yank/rotate cycle leaves every trigger in place', async () => {
    await postYank(env.app, '/v1/manifests/io.github.acme/widgets/2.0.0', { reason: 'x' }, env.token);
    await env.registry.rotateSigningKey();
    const triggers = (
      sqliteDatabaseOf(env.store)
        .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
        .all() as {
        name: string;
      }[]
    ).map((t) => t.name);
    expect(triggers).toEqual([
      'approvals_immutable_columns',
      'approvals_no_delete',
      'approvals_transitions',
      'blobs_no_delete',
      'blobs_no_update',
      'log_checkpoints_no_delete',
      'log_checkpoints_no_update',
      'log_entries_no_delete',
      'log_entries_no_update',
      'log_nodes_no_delete',
      'log_nodes_no_update',
      'manifest_versions_immutable_columns',
      'manifest_versions_no_delete',
      'manifest_versions_yank_once',
      'principals_immutable_columns',
      'principals_no_delete',
      'principals_revoke_once',
      'publishers_immutable_columns',
      'publishers_no_delete',
      'publishers_revoke_once',
      'signing_keys_immutable_columns',
      'signing_keys_no_delete',
      'signing_keys_retire_once',
      'version_bundles_no_delete',
      'version_bundles_no_update',
    ]);
  });
});

describe('publishers', () => {
  it('namespaces are unique case-insensitively at the store level: NAMESPACE_TAKEN', async () => {
    const store = openStore({ dataDir: ':memory:' });
    await store.insertPublisher('io.github.acme', hashToken('a'), new Date().toISOString());
    await expectCode(
      () => store.insertPublisher('IO.github.acme', hashToken('b'), new Date().toISOString()),
      'NAMESPACE_TAKEN',
    );
    await expectCode(
      () => store.insertPublisher('IO.GITHUB.ACME', hashToken('c'), new Date().toISOString()),
      'NAMESPACE_TAKEN',
    );
    await expectCode(
      () => store.insertPublisher('io.github.acme', hashToken('d'), new Date().toISOString()),
      'NAMESPACE_TAKEN',
    );
    expect(await store.countPublishers()).toBe(1);
    expect((await store.findPublisherByNamespace('Io.GitHub.Acme'))?.namespace).toBe('io.github.acme');
    await store.close();
  });

  it('createPublisher refuses a namespace that is not lowercase reverse-DNS, and a taken one', async () => {
    const store = openStore({ dataDir: ':memory:' });
    await createPublisher(store, 'io.github.acme');
    for (const bad of ['IO.GITHUB.ACME', 'acme', 'io..acme', '-io.acme', 'io.acme/x', '', 'io.github.acme '])
      await expectCode(() => createPublisher(store, bad), 'BAD_REQUEST');
    await expectCode(() => createPublisher(store, 'io.github.acme'), 'NAMESPACE_TAKEN');
    expect(await store.countPublishers()).toBe(1);
    await store.close();
  });

  it('only the token hash is stored: the token appears nowhere in the database files', async () => {
    const env = await createTestEnv({ onDisk: true });
    const second = await env.addPublisher('io.github.other');
    await postManifest(env.app, manifestBytes(), env.token);
    for (const token of [env.token, second]) {
      expect(token).toMatch(/^tsk_[A-Za-z0-9_-]{43}$/);
      const row = await env.store.findPublisherByTokenHash(hashToken(token));
      expect(row?.tokenHash).toBe(hashToken(token));
    }
    const files = [readAllFiles(env.dataDir)];
    sqliteDatabaseOf(env.store).pragma('wal_checkpoint(TRUNCATE)');
    files.push(readAllFiles(env.dataDir));
    for (const content of files) {
      for (const token of [env.token, second]) {
        expect(content.includes(Buffer.from(token))).toBe(false);
        expect(content.includes(Buffer.from(token.slice(4)))).toBe(false);
        expect(content.includes(Buffer.from(token.slice(4), 'base64url'))).toBe(false);
      }
    }
    expect(files[1]!.includes(Buffer.from(hashToken(env.token)))).toBe(true);
    await env.close();
  });
});

describe('versions and the database file', () => {
  it('insertVersion refuses a second row for name@version with VERSION_EXISTS', async () => {
    const env = await createTestEnv();
    await postManifest(env.app, manifestBytes(), env.token);
    const row = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
    await expectCode(
      () =>
        env.store.insertVersion({
          name: row.name,
          version: row.version,
          digest: row.digest,
          publisherId: row.publisherId,
          storedAt: row.storedAt,
          attestation: row.attestation,
          kid: row.kid,
          logIndex: 999,
        }),
      'VERSION_EXISTS',
    );
    await env.close();
  });

  it('a file database is WAL with synchronous=FULL and foreign keys on, and re-opens (migrations idempotent) with its data', async () => {
    const dir = join(makeTempDir(), 'data');
    const env = await createTestEnv({ onDisk: true });
    await postManifest(env.app, manifestBytes(), env.token);
    const before = snapshotDb(env.store);
    expect(sqliteDatabaseOf(env.store).pragma('journal_mode', { simple: true })).toBe('wal');
    expect(sqliteDatabaseOf(env.store).pragma('synchronous', { simple: true })).toBe(2);
    expect(sqliteDatabaseOf(env.store).pragma('foreign_keys', { simple: true })).toBe(1);
    await env.close();
    const reopened = openStore({ dataDir: env.dataDir });
    expect(snapshotDb(reopened)).toEqual(before);
    await reopened.close();
    // A brand-new folder is created on demand.
    const fresh = openStore({ dataDir: dir });
    expect(snapshotDb(fresh).counts['publishers']).toBe(0);
    await fresh.close();
  });

  it('a version row cannot point at bytes that are not stored (foreign key)', async () => {
    const env = await createTestEnv();
    await postManifest(env.app, manifestBytes(), env.token);
    const row = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
    await expect(
      env.store.insertVersion({
        name: row.name,
        version: '9.0.0',
        digest: `sha256:${'0'.repeat(64)}`,
        publisherId: row.publisherId,
        storedAt: row.storedAt,
        attestation: row.attestation,
        kid: row.kid,
        logIndex: 999,
      }),
    ).rejects.toThrow(/FOREIGN KEY/);
    await env.close();
  });
});

// The PostgreSQL store's own behaviour beyond the shared contract (issue 16 §1, issue 24 §1): a lost connection or a
// statement the server cancels for taking too long is STORAGE_UNAVAILABLE (503) and the pool goes on serving the
// next calls (no bridge to break); durable commits per session;
// SQLSTATEs translated; URLs recognised and their passwords redacted. On the test server when set, else PGlite.

import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import { httpStatusByCode } from '../../src/http/problem.ts';
import {
  isDatabaseUrl,
  openPostgresStore,
  postgresQueryOf,
  redactDatabaseUrl,
} from '../../src/store/postgres/index.ts';
import { translatePostgresError } from '../../src/store/postgres/storage-errors.ts';
import { cleanupTempDirs, repoRoot } from '../helpers/registry-helpers.ts';
import { createTestDatabase, freshPgliteDir, testDatabaseUrl } from './contract/store-backends.ts';

afterAll(cleanupTempDirs);

const TIMEOUT = 120_000;

async function codeOf(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
  } catch (error) {
    return error instanceof ToolsealError ? error.code : `not a ToolsealError: ${String(error)}`;
  }
  return undefined;
}

/** pg_terminate_backend(pid), run synchronously in a child process. */
function terminateBackend(url: string, pid: number): void {
  const script = `const pg = require('pg'); const c = new pg.Client({ connectionString: process.argv[1] });
    c.connect().then(() => c.query('SELECT pg_terminate_backend($1)', [Number(process.argv[2])])).then(() => c.end(),
    (e) => { console.error(e.message); process.exit(1); });`;
  const result = spawnSync(process.execPath, ['-e', script, url, String(pid)], { cwd: repoRoot, encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
}

async function openTestStore(callTimeoutMs?: number) {
  const database =
    testDatabaseUrl === undefined
      ? { url: `pglite:${await freshPgliteDir()}`, drop: async () => {} }
      : await createTestDatabase(testDatabaseUrl);
  const store = await openPostgresStore({
    url: database.url,
    ...(callTimeoutMs === undefined ? {} : { callTimeoutMs }),
  });
  return { store, url: database.url, drop: database.drop };
}

describe('the PostgreSQL store', () => {
  it(
    'commits durably (synchronous_commit on), on every session of the pool',
    async () => {
      const { store, drop } = await openTestStore(1_000);
      try {
        const query = postgresQueryOf(store);
        expect(await query('SHOW synchronous_commit')).toEqual([{ synchronous_commit: 'on' }]);
        // Several statements at once take several sessions (a server's pool): each has it on.
        const answers = await Promise.all(Array.from({ length: 4 }, () => query('SHOW synchronous_commit')));
        expect(answers).toEqual(Array.from({ length: 4 }, () => [{ synchronous_commit: 'on' }]));
      } finally {
        await store.close();
        await drop();
      }
    },
    TIMEOUT,
  );

  if (testDatabaseUrl !== undefined) {
    it(
      'a statement the server does not finish in time is cancelled as STORAGE_UNAVAILABLE; the store goes on serving',
      async () => {
        const { store, drop } = await openTestStore(1_000);
        try {
          const started = Date.now();
          expect(await codeOf(store.transaction(async () => postgresQueryOf(store)('SELECT pg_sleep(3)')))).toBe(
            'STORAGE_UNAVAILABLE',
          );
          expect(Date.now() - started).toBeLessThan(2_900);
          expect(httpStatusByCode.STORAGE_UNAVAILABLE).toBe(503);
          // No bridge to break: the next calls are answered.
          expect(await store.countPublishers()).toBe(0);
          await store.insertPublisher('io.github.acme', 'hash', 'now');
          expect(await store.countPublishers()).toBe(1);
        } finally {
          await store.close();
          await drop();
        }
      },
      TIMEOUT,
    );
  }

  it(
    "fsck's structure check: a missing or disabled immutability trigger is a problem (and amcheck runs when installed)",
    async () => {
      const { store, drop } = await openTestStore();
      try {
        const query = postgresQueryOf(store);
        if (testDatabaseUrl !== undefined) await query('CREATE EXTENSION IF NOT EXISTS amcheck');
        await store.insertBlobIfAbsent('sha256:x', Buffer.from('x'));
        expect(await store.checkStructure()).toEqual([]);
        await query('ALTER TABLE blobs DISABLE TRIGGER blobs_no_update');
        await query('DROP TRIGGER log_nodes_no_delete ON log_nodes');
        expect(await store.checkStructure()).toEqual([
          'the immutability trigger blobs_no_update is disabled',
          'the immutability trigger log_nodes_no_delete is missing',
        ]);
      } finally {
        await store.close();
        await drop();
      }
    },
    TIMEOUT,
  );

  if (testDatabaseUrl !== undefined) {
    it(
      'a connection the server drops is STORAGE_UNAVAILABLE, inside a transaction too (nothing of it committed)',
      async () => {
        const { store, url, drop } = await openTestStore();
        try {
          expect(
            await codeOf(
              store.transaction(async () => {
                await store.insertPublisher('io.github.acme', 'hash', 'now');
                // The server drops the transaction's own session while it is open.
                const pid = Number((await postgresQueryOf(store)('SELECT pg_backend_pid() AS pid'))[0]!['pid']);
                terminateBackend(url, pid);
                await store.countPublishers();
              }),
            ),
          ).toBe('STORAGE_UNAVAILABLE');
          const admin = new pg.Client({ connectionString: url });
          await admin.connect();
          expect((await admin.query('SELECT count(*)::int AS n FROM publishers')).rows).toEqual([{ n: 0 }]);
          await admin.end();
          // The pool drops the broken session and serves the next call on a fresh one.
          expect(await store.countPublishers()).toBe(0);
        } finally {
          await store.close();
          await drop();
        }
      },
      TIMEOUT,
    );
  }
});

describe('translatePostgresError', () => {
  it('maps disk full, corruption and lost connections to the registry codes; passes the rest through', () => {
    const of = (code: string | undefined, message = 'x'): unknown =>
      translatePostgresError(Object.assign(new Error(message), { code }));
    expect((of('53100') as ToolsealError).code).toBe('STORAGE_FULL');
    expect((of('XX001') as ToolsealError).code).toBe('INTEGRITY_ERROR');
    expect((of('XX002') as ToolsealError).code).toBe('INTEGRITY_ERROR');
    for (const code of ['08006', '08001', '57P01', '3D000', '28P01', 'ECONNREFUSED'])
      expect((of(code) as ToolsealError).code, code).toBe('STORAGE_UNAVAILABLE');
    expect((of(undefined, 'Connection terminated unexpectedly') as ToolsealError).code).toBe('STORAGE_UNAVAILABLE');
    const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
    expect(translatePostgresError(unique)).toBe(unique);
    const full = of('53100') as ToolsealError;
    expect(full.message).not.toMatch(/postgres:\/\//);
  });
});

describe('database URLs', () => {
  it('recognises postgres and pglite URLs, and never shows a password', () => {
    for (const url of ['postgres://u@h/db', 'postgresql://u:p@h:5432/db', 'pglite:', 'pglite:/var/db'])
      expect(isDatabaseUrl(url), url).toBe(true);
    for (const not of ['data', '/var/lib/toolseal', ':memory:', 'mysql://u@h/db', 'http://h'])
      expect(isDatabaseUrl(not), not).toBe(false);
    expect(redactDatabaseUrl('postgres://toolseal:s3cret@db:5432/toolseal')).toBe(
      'postgres://toolseal:***@db:5432/toolseal',
    );
    expect(redactDatabaseUrl('postgres://toolseal@db/toolseal')).toBe('postgres://toolseal@db/toolseal');
  });
});

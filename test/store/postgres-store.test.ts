// The PostgreSQL store's own behaviour beyond the shared contract (issue 16 §1): a lost connection or a database
// that does not answer is STORAGE_UNAVAILABLE (503) and breaks the store for good; durable commits per session;
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

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
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
      ? { url: `pglite:${freshPgliteDir()}`, drop: async () => {} }
      : await createTestDatabase(testDatabaseUrl);
  const store = openPostgresStore({ url: database.url, ...(callTimeoutMs === undefined ? {} : { callTimeoutMs }) });
  return { store, url: database.url, drop: database.drop };
}

describe('the PostgreSQL store', () => {
  it(
    'commits durably (synchronous_commit on); a call the database does not answer in time is STORAGE_UNAVAILABLE, for good',
    async () => {
      const { store, drop } = await openTestStore(1_000);
      try {
        const query = postgresQueryOf(store);
        expect(query('SHOW synchronous_commit')).toEqual([{ synchronous_commit: 'on' }]);
        expect(codeOf(() => query('SELECT pg_sleep(3)'))).toBe('STORAGE_UNAVAILABLE');
        expect(codeOf(() => store.countPublishers())).toBe('STORAGE_UNAVAILABLE');
        expect(httpStatusByCode.STORAGE_UNAVAILABLE).toBe(503);
      } finally {
        store.close();
        await drop();
      }
    },
    TIMEOUT,
  );

  it(
    "fsck's structure check: a missing or disabled immutability trigger is a problem (and amcheck runs when installed)",
    async () => {
      const { store, drop } = await openTestStore();
      try {
        const query = postgresQueryOf(store);
        if (testDatabaseUrl !== undefined) query('CREATE EXTENSION IF NOT EXISTS amcheck');
        store.insertBlobIfAbsent('sha256:x', Buffer.from('x'));
        expect(store.checkStructure()).toEqual([]);
        query('ALTER TABLE blobs DISABLE TRIGGER blobs_no_update');
        query('DROP TRIGGER log_nodes_no_delete ON log_nodes');
        expect(store.checkStructure()).toEqual([
          'the immutability trigger blobs_no_update is disabled',
          'the immutability trigger log_nodes_no_delete is missing',
        ]);
      } finally {
        store.close();
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
          const pid = Number(postgresQueryOf(store)('SELECT pg_backend_pid() AS pid')[0]!['pid']);
          expect(
            codeOf(() =>
              store.transaction(() => {
                store.insertPublisher('io.github.acme', 'hash', 'now');
                // The server drops the session while the transaction is open (from another process: this thread
                // is blocked on the store's calls).
                terminateBackend(url, pid);
                store.countPublishers();
              }),
            ),
          ).toBe('STORAGE_UNAVAILABLE');
          const admin = new pg.Client({ connectionString: url });
          await admin.connect();
          expect((await admin.query('SELECT count(*)::int AS n FROM publishers')).rows).toEqual([{ n: 0 }]);
          await admin.end();
        } finally {
          store.close();
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

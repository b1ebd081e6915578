// The registry server on PostgreSQL (issue 16 §1): `--database` through startRegistryServer — a real server at
// TOOLSEAL_TEST_DATABASE_URL when set, and PGlite always — publish, fetch the exact bytes, yank, refuse a second
// digest for a version, restart on the same database, fsck clean; a pg_dump backup restored (on the server); and
// `toolseal migrate` / `publisher` / `fsck --database`.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRegistry, type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { removeFolders, toolseal } from '../cli/cli-helpers.ts';
import { bodyBytes, cleanupTempDirs, expectProblem, makeTempDir, manifestBytes } from '../helpers/registry-helpers.ts';
import { createTestDatabase, freshPgliteDir, testDatabaseUrl } from '../store/contract/store-backends.ts';

afterAll(async () => {
  cleanupTempDirs();
  removeFolders();
});

const TIMEOUT = 180_000;

interface Database {
  name: string;
  create(): Promise<{ url: string; drop(): Promise<void> }>;
}

const databases: Database[] = [
  { name: 'pglite', create: async () => ({ url: `pglite:${await freshPgliteDir()}`, drop: async () => {} }) },
  ...(testDatabaseUrl === undefined
    ? []
    : [{ name: 'postgres', create: () => createTestDatabase(testDatabaseUrl as string) }]),
];

async function start(url: string, keysDir: string): Promise<RunningRegistryServer> {
  return startRegistryServer({ dataDir: makeTempDir(), databaseUrl: url, keysDir, port: 0, pipelineWorkers: 1 });
}

function post(
  server: RunningRegistryServer,
  path: string,
  body: Uint8Array | string,
  token: string,
): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : (body as Uint8Array<ArrayBuffer>),
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
  });
}

describe.each(databases)('the registry on $name', (database) => {
  it(
    'publishes, serves the exact bytes, yanks, refuses a second digest, and keeps it all across a restart; fsck clean',
    async () => {
      const { url, drop } = await database.create();
      const keysDir = makeTempDir();
      try {
        let server = await start(url, keysDir);
        expect(server.writerThread).toBe(false);
        const { token } = await server.registry.createPublisher('io.github.acme');
        const published = await post(server, '/v1/manifests', manifestBytes({}, 2), token);
        expect(published.status).toBe(201);
        const path = '/v1/manifests/io.github.acme/widgets/1.0.0';
        const served = await bodyBytes(await fetch(`${server.url}${path}`));
        const stored = (await server.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
        expect(`sha256:${createHash('sha256').update(served).digest('hex')}`).toBe(stored.digest);
        expect(Buffer.from(served).equals((await server.store.getBlob(stored.digest))!.bytes)).toBe(true);
        const other = await post(server, '/v1/manifests', manifestBytes({ description: 'other' }), token);
        await expectProblem(other, 'VERSION_EXISTS');
        expect((await post(server, `${path}/yank`, JSON.stringify({ reason: 'broken' }), token)).status).toBe(200);
        await server.close();

        server = await start(url, keysDir);
        const again = await bodyBytes(await fetch(`${server.url}${path}`));
        expect(Buffer.from(again).equals(Buffer.from(served))).toBe(true);
        expect(await server.store.getVersion('io.github.acme/widgets', '1.0.0')).toMatchObject({
          status: 'yanked',
          yankReason: 'broken',
          digest: stored.digest,
        });
        expect((await post(server, '/v1/manifests', manifestBytes({ version: '1.1.0' }), token)).status).toBe(201);
        await server.close();

        const report = await checkRegistry({ dataDir: url, keysDir });
        expect(report.problems).toEqual([]);
        expect(report).toMatchObject({ ok: true, checked: { versions: 2, checkpointSignatures: expect.any(Number) } });
        expect(report.checked.checkpointSignatures).toBeGreaterThan(0);
      } finally {
        await drop();
      }
    },
    TIMEOUT,
  );
});

if (testDatabaseUrl !== undefined) {
  const serverUrl = testDatabaseUrl;
  describe('a pg_dump backup (docs/deploy.md)', () => {
    it(
      'restores with pg_restore into an empty database that fsck finds intact, triggers included',
      async () => {
        const source = await createTestDatabase(serverUrl);
        const target = await createTestDatabase(serverUrl);
        const keysDir = makeTempDir();
        try {
          const server = await start(source.url, keysDir);
          const { token } = await server.registry.createPublisher('io.github.acme');
          expect((await post(server, '/v1/manifests', manifestBytes(), token)).status).toBe(201);
          await server.close();
          const dump = join(makeTempDir(), 'toolseal.pgdump');
          const dumped = spawnSync('pg_dump', ['--format=custom', `--file=${dump}`, source.url], { encoding: 'utf8' });
          expect(dumped.status, dumped.stderr).toBe(0);
          const restored = spawnSync('pg_restore', [`--dbname=${target.url}`, dump], { encoding: 'utf8' });
          expect(restored.status, restored.stderr).toBe(0);
          const report = await checkRegistry({ dataDir: target.url, keysDir });
          expect(report.problems).toEqual([]);
          expect(report.checked.versions).toBe(1);
        } finally {
          await source.drop();
          await target.drop();
        }
      },
      TIMEOUT,
    );
  });
}

describe('toolseal migrate and fsck --database', () => {
  it(
    'migrate creates the schema (idempotent, no password printed); publisher add and fsck take --database; a bad URL is a usage error',
    async () => {
      const cwd = makeTempDir();
      const database =
        testDatabaseUrl === undefined
          ? { url: `pglite:${makeTempDir()}/db`, drop: async () => {} }
          : await createTestDatabase(testDatabaseUrl);
      try {
        const withPassword = database.url.replace('postgres://postgres@', 'postgres://postgres:secret-pw@');
        const first = await toolseal(['migrate', '--database', withPassword], { cwd });
        expect(first.stderr).toBe('');
        expect(first.code).toBe(0);
        expect(first.stdout).toMatch(/^migrated postgresql database /);
        expect(first.stdout).not.toContain('secret-pw');
        expect((await toolseal(['migrate'], { cwd, env: { TOOLSEAL_DATABASE_URL: database.url } })).code).toBe(0);
        const added = await toolseal(
          ['publisher', 'add', 'io.github.acme', '--unverified-namespace', '--database', database.url],
          { cwd },
        );
        expect(added.code).toBe(0);
        expect(added.stdout.trim()).toMatch(/^tsk_[A-Za-z0-9_-]{43}$/);
        const listed = await toolseal(['publisher', 'list'], { cwd, env: { TOOLSEAL_DATABASE_URL: database.url } });
        expect(JSON.parse(listed.stdout).publishers).toMatchObject([{ namespace: 'io.github.acme' }]);
        const fsck = await toolseal(['fsck', '--database', database.url, '--json'], { cwd });
        expect(fsck.code).toBe(0);
        expect(JSON.parse(fsck.stdout)).toMatchObject({ ok: true, problems: [] });
        const bad = await toolseal(['migrate', '--database', 'mysql://x'], { cwd });
        expect(bad.code).not.toBe(0);
        expect(bad.stderr).toMatch(/--database takes a postgres:\/\/ URL or pglite:/);
      } finally {
        await database.drop();
      }
    },
    TIMEOUT,
  );
});

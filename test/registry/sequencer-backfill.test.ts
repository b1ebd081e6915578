// A follower that takes the sequencer lease backfills Sigstore bundles (issue 26; src/registry/sequencer.ts onTakeover):
// versions without a bundle (as published before bundles existed) stay without one while it follows and while the
// first sequencer renews; once the first stops, the follower's takeover signs and logs them (new leaves at the end of
// the log, under a checkpoint) and serves bundles verifyBundle accepts. Once per takeover: a failure is reported
// through onEvent (`takeover`), the process keeps the lease and publishes, and the versions wait for the next takeover.
//
// PostgreSQL server when TOOLSEAL_TEST_DATABASE_URL is set (each registry its own connection), else PGlite (both over
// the one connection), as test/registry/sequencer.test.ts.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLE_KEYS_FILE } from '../../src/keys/bundle-key-files.ts';
import { openRegistry, type Registry, type SequencerEvent } from '../../src/registry/index.ts';
import { openPostgresStore, type PostgresStore, postgresQueryOf } from '../../src/store/postgres/index.ts';
import { verifyBundle } from '../../src/verify/index.ts';
import { cleanupTempDirs, makeTempDir, manifestBytes } from '../helpers/registry-helpers.ts';
import { createTestDatabase, freshPgliteDir, testDatabaseUrl } from '../store/contract/store-backends.ts';

afterAll(cleanupTempDirs);

const onServer = testDatabaseUrl !== undefined;
const TIMEOUT = 120_000;
/** As sequencer.test.ts: PGlite blocks the event loop for long, so it gets a longer lease. */
const LEASE_MS = onServer ? 600 : 3000;
const WIDGETS = 'io.github.acme/widgets';
const VERSIONS = ['1.0.0', '1.1.0'];

interface Process {
  registry: Registry;
  events: SequencerEvent[];
}

async function openProcess(store: PostgresStore, keysDir: string, holder: string): Promise<Process> {
  const events: SequencerEvent[] = [];
  const registry = await openRegistry({
    store,
    keysDir,
    origin: 'http://127.0.0.1:8787',
    sequencing: { leaseMs: LEASE_MS, pollMs: 5, holder, onEvent: (event) => events.push(event) },
  });
  return { registry, events };
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > 30_000) throw new Error(`${what} did not happen`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Two registries on one fresh database and keys folder: the first sequences and publishes VERSIONS, whose bundle rows
 * are then removed (as a database from before issue 26); the second starts as a follower. Runs `test`, then closes all.
 */
async function withTwoProcesses(
  test: (a: Process, b: Process, store: PostgresStore, keysDir: string) => Promise<void>,
): Promise<void> {
  const database = onServer
    ? await createTestDatabase(testDatabaseUrl as string)
    : { url: `pglite:${await freshPgliteDir()}`, drop: async () => {} };
  const keysDir = makeTempDir();
  const storeA = await openPostgresStore({ url: database.url });
  const storeB = onServer ? await openPostgresStore({ url: database.url }) : storeA;
  const processes: Process[] = [];
  try {
    const a = await openProcess(storeA, keysDir, 'proc-a');
    processes.push(a);
    const { publisher } = await a.registry.createPublisher('io.github.acme');
    for (const version of VERSIONS) await a.registry.publish(manifestBytes({ version }), publisher);
    const raw = postgresQueryOf(storeA);
    await raw('DROP TRIGGER version_bundles_no_delete ON version_bundles');
    await raw('DELETE FROM version_bundles');
    const b = await openProcess(storeB, keysDir, 'proc-b');
    processes.push(b);
    expect([a.registry.sequencingRole, b.registry.sequencingRole]).toEqual(['sequencer', 'follower']);
    await test(a, b, storeB, keysDir);
  } finally {
    for (const { registry } of processes.reverse()) await registry.stopSequencing();
    for (const store of new Set([storeA, storeB])) await store.close();
    await database.drop();
  }
}

describe(`a follower that takes the sequencer lease (${onServer ? 'PostgreSQL server' : 'PGlite'})`, () => {
  it(
    'backfills the bundles no version has: new leaves under a checkpoint, served and verified',
    async () => {
      await withTwoProcesses(async (a, b, store) => {
        // Neither the follower's start nor the sequencer's renewals (once per takeover: it took over at its start).
        await sleep(LEASE_MS);
        expect((await store.listVersionsWithoutBundle()).map((v) => v.version)).toEqual(VERSIONS);
        const sizeBefore = await store.getLogSize();

        await a.registry.stopSequencing();
        await waitFor('the follower takes over', () => b.registry.sequencingRole === 'sequencer');
        await waitFor('the bundles are backfilled', async () => (await store.listVersionsWithoutBundle()).length === 0);

        const size = await store.getLogSize();
        expect(size).toBe(sizeBefore + 2);
        const leaves = await store.readLogEntries(sizeBefore, size);
        expect(leaves.map((entry) => entry.kind)).toEqual(['bundle', 'bundle']);
        await waitFor('a checkpoint covers them', async () => (await store.latestCheckpoint())?.size === size);
        const jwks = await b.registry.jwks();
        for (const [offset, version] of VERSIONS.entries()) {
          const manifest = await b.registry.getManifest(WIDGETS, version);
          const bundle = await b.registry.getBundle(WIDGETS, version);
          expect(Number(bundle.verificationMaterial.tlogEntries[0].logIndex)).toBe(sizeBefore + offset);
          const verified = verifyBundle({
            bytes: manifest.bytes,
            bundle: new TextEncoder().encode(JSON.stringify(bundle)),
            bundleKeys: jwks,
            logKey: b.registry.log.verifierString,
            expected: { name: WIDGETS, version },
          });
          expect(verified).toMatchObject({
            name: WIDGETS,
            version,
            digest: manifest.digest,
            logIndex: sizeBefore + offset,
          });
        }
        expect(b.events.filter((event) => event.type === 'error')).toEqual([]);
        expect(b.events.filter((event) => event.type === 'role')).toEqual([
          { type: 'role', role: 'sequencer', epoch: 2, holder: 'proc-b' },
        ]);

        // Once per takeover: bundle rows removed again are not signed again while it holds the lease.
        await postgresQueryOf(store)('DELETE FROM version_bundles');
        await sleep(LEASE_MS);
        expect(await store.getLogSize()).toBe(size);
        expect(await store.listVersionsWithoutBundle()).toHaveLength(2);
      });
    },
    TIMEOUT,
  );

  it(
    'reports a failed backfill as a takeover error, keeps the lease and publishes; the versions wait',
    async () => {
      await withTwoProcesses(async (a, b, store, keysDir) => {
        const keyList = join(keysDir, BUNDLE_KEYS_FILE);
        const intact = readFileSync(keyList);
        writeFileSync(keyList, 'not json');
        await a.registry.stopSequencing();
        await waitFor('the takeover reports its failure', () => b.events.some((event) => event.type === 'error'));
        expect(b.events.filter((event) => event.type === 'error')).toEqual([
          {
            type: 'error',
            where: 'takeover',
            error: expect.objectContaining({
              code: 'INTERNAL',
              message: 'the bundle key list in the keys folder is not JSON',
            }),
          },
        ]);
        expect(b.registry.sequencingRole).toBe('sequencer');
        expect(await store.listVersionsWithoutBundle()).toHaveLength(2);

        writeFileSync(keyList, intact);
        const { publisher } = await b.registry.createPublisher('io.github.other');
        const published = await b.registry.publish(manifestBytes({ name: 'io.github.other/tool' }), publisher);
        expect(published.created).toBe(true);
        expect(await b.registry.getBundle('io.github.other/tool', '1.0.0')).toMatchObject({
          mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
        });
        // The old versions wait for the next takeover or start (not retried at every renewal).
        expect((await store.listVersionsWithoutBundle()).map((v) => v.version)).toEqual(VERSIONS);
        expect(b.registry.sequencingRole).toBe('sequencer');
      });
    },
    TIMEOUT,
  );
});

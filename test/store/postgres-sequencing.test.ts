// The PostgreSQL store's SequencingStore (src/store/port.ts, issue 16 §2): the sequencer lease (claim, renew, expiry,
// release, the epoch as a fencing token) and the log_jobs queue (enqueue, claim in order, finish, cancel,
// purge). On the test server when TOOLSEAL_TEST_DATABASE_URL is set (a fresh database per test), else PGlite; on the
// server also two connections racing for the lease, and a second connection claiming while the first holds the jobs.

import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { isToolsealError } from '../../src/core/errors.ts';
import { buildWorkerSource } from '../../src/core/worker-source.ts';
import { openPostgresStore, type PostgresStore, postgresQueryOf } from '../../src/store/postgres/index.ts';
import type { LogJobOutcome } from '../../src/store/index.ts';
import type { ClaimResult, LeaseRaceRound, SequencingWorkerSetup } from '../helpers/sequencing-worker.ts';
import { cleanupTempDirs } from '../helpers/registry-helpers.ts';
import { createTestDatabase, freshPgliteDir, testDatabaseUrl } from './contract/store-backends.ts';

afterAll(cleanupTempDirs);

const TIMEOUT = 120_000;
/** Every byte value, twice: payloads and outcomes must come back exactly. */
const ALL_BYTES = Buffer.from([
  ...Array.from({ length: 256 }, (_, i) => i),
  ...Array.from({ length: 256 }, (_, i) => 255 - i),
]);

interface TestStore {
  store: PostgresStore;
  url: string;
  raw(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
}

/** A fresh store for one test (a new database on the server, or a new PGlite folder), closed and dropped after. */
async function withStore(work: (t: TestStore) => Promise<void> | void): Promise<void> {
  const database =
    testDatabaseUrl === undefined
      ? { url: `pglite:${await freshPgliteDir()}`, drop: async () => {} }
      : await createTestDatabase(testDatabaseUrl);
  const store = await openPostgresStore({ url: database.url });
  try {
    await work({ store, url: database.url, raw: postgresQueryOf(store) });
  } finally {
    await store.close();
    await database.drop();
  }
}

async function codeOf(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
  } catch (error) {
    return isToolsealError(error) ? error.code : `not a ToolsealError: ${String(error)}`;
  }
  return undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function startWorker<T>(setup: SequencingWorkerSetup): { ready: Promise<void>; done: Promise<T> } {
  const source = buildWorkerSource(new URL('../helpers/sequencing-worker.ts', import.meta.url));
  const worker = new Worker(source, { eval: true, workerData: setup });
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const done = new Promise<T>((resolve, reject) => {
    worker.on('message', (message: 'ready' | T) => (message === 'ready' ? markReady() : resolve(message)));
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`the worker exited with ${code}`)));
  });
  return { ready, done };
}

/** Finished jobs by id (the port promises no order). */
async function finishedOf(store: PostgresStore, ids: readonly number[]): Promise<LogJobOutcome[]> {
  return (await store.readFinishedLogJobs(ids)).sort((x, y) => x.id - y.id);
}

async function jobRows(t: TestStore): Promise<{ id: number; state: string }[]> {
  return (await t.raw('SELECT id, state FROM log_jobs ORDER BY id')) as { id: number; state: string }[];
}

describe(`the sequencer lease on ${testDatabaseUrl === undefined ? 'PGlite' : 'the PostgreSQL server'}`, () => {
  it(
    'is taken on an empty table at epoch 1, renewed at the same epoch, refused to another while unexpired',
    () =>
      withStore(async ({ store }) => {
        const before = Date.now();
        const first = await store.claimSequencerLease('a', 60_000);
        const after = Date.now();
        expect(first).toMatchObject({ holder: 'a', epoch: 1 });
        expect(first.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        // The database's clock, on this machine: the lease ends ttl after the claim.
        const expires = Date.parse(first.expiresAt);
        expect(expires).toBeGreaterThanOrEqual(before + 60_000 - 1_000);
        expect(expires).toBeLessThanOrEqual(after + 60_000 + 1_000);
        const renewed = await store.claimSequencerLease('a', 120_000);
        expect(renewed).toMatchObject({ holder: 'a', epoch: 1 });
        expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(expires);
        // Another holder gets the lease as it is, unchanged.
        expect(await store.claimSequencerLease('b', 60_000)).toEqual(renewed);
      }),
    TIMEOUT,
  );

  it(
    'passes to another holder at epoch + 1 once expired, and at once after a release',
    () =>
      withStore(async ({ store }) => {
        expect(await store.claimSequencerLease('a', 60_000)).toMatchObject({ holder: 'a', epoch: 1 });
        expect(await store.claimSequencerLease('b', 200)).toMatchObject({ holder: 'a', epoch: 1 });
        // Renewed with a short ttl (same epoch), then left to expire.
        expect(await store.claimSequencerLease('a', 200)).toMatchObject({ holder: 'a', epoch: 1 });
        await sleep(300);
        expect(await store.claimSequencerLease('b', 60_000)).toMatchObject({ holder: 'b', epoch: 2 });
        // A release by one that does not hold it changes nothing.
        await store.releaseSequencerLease('a');
        expect(await store.claimSequencerLease('a', 60_000)).toMatchObject({ holder: 'b', epoch: 2 });
        await store.releaseSequencerLease('b');
        expect(await store.claimSequencerLease('a', 60_000)).toMatchObject({ holder: 'a', epoch: 3 });
        // A holder that lets its own lease lapse starts a new epoch when it takes it again.
        expect(await store.claimSequencerLease('a', 200)).toMatchObject({ holder: 'a', epoch: 3 });
        await sleep(300);
        expect(await store.claimSequencerLease('a', 60_000)).toMatchObject({ holder: 'a', epoch: 4 });
      }),
    TIMEOUT,
  );

  it(
    'assertSequencerLease passes for holder and epoch; SEQUENCER_UNAVAILABLE for another epoch, holder, or once expired',
    () =>
      withStore(async ({ store }) => {
        const fenced = (holder: string, epoch: number) =>
          codeOf(store.transaction(async () => await store.assertSequencerLease(holder, epoch)));
        expect(await fenced('a', 1)).toBe('SEQUENCER_UNAVAILABLE'); // no lease row at all
        await store.claimSequencerLease('a', 60_000);
        expect(await fenced('a', 1)).toBeUndefined();
        expect(await fenced('a', 2)).toBe('SEQUENCER_UNAVAILABLE');
        expect(await fenced('a', 0)).toBe('SEQUENCER_UNAVAILABLE');
        expect(await fenced('b', 1)).toBe('SEQUENCER_UNAVAILABLE');
        // Renewed with a short ttl (same epoch), then left to expire.
        expect(await store.claimSequencerLease('a', 200)).toMatchObject({ holder: 'a', epoch: 1 });
        await sleep(300);
        expect(await fenced('a', 1)).toBe('SEQUENCER_UNAVAILABLE');
        // The fence fails the transaction it runs in: what it wrote before is rolled back.
        await store.claimSequencerLease('b', 60_000);
        const refused = await codeOf(
          store.transaction(async () => {
            await store.insertPublisher('io.github.fenced', 'hash', new Date().toISOString());
            await store.assertSequencerLease('a', 1);
          }),
        );
        expect(refused).toBe('SEQUENCER_UNAVAILABLE');
        expect(await store.countPublishers()).toBe(0);
        await store.releaseSequencerLease('b');
        expect(await fenced('b', 2)).toBe('SEQUENCER_UNAVAILABLE');
      }),
    TIMEOUT,
  );
});

describe(`the log_jobs queue on ${testDatabaseUrl === undefined ? 'PGlite' : 'the PostgreSQL server'}`, () => {
  it(
    'enqueue → hasQueuedLogJobs → claimed in order inside a transaction → finished; outcomes read back exactly',
    () =>
      withStore(async (t) => {
        const { store } = t;
        expect(await store.hasQueuedLogJobs()).toBe(false);
        const publish = await store.enqueueLogJob('publish', ALL_BYTES, 'proc-a');
        const yank = await store.enqueueLogJob('yank', new Uint8Array(0), 'proc-b');
        // A view into a larger buffer: only its own bytes are stored.
        const view = new Uint8Array(ALL_BYTES.buffer, ALL_BYTES.byteOffset + 10, 20);
        const decision = await store.enqueueLogJob('approval-decision', view, 'proc-a');
        const consumption = await store.enqueueLogJob('approval-consumption', Buffer.from('{}'), 'proc-c');
        expect([yank, decision, consumption]).toEqual([publish + 1, publish + 2, publish + 3]);
        expect(await store.hasQueuedLogJobs()).toBe(true);
        expect(await store.readFinishedLogJobs([publish, yank, decision, consumption])).toEqual([]);

        const claimed = await store.transaction(async () => await store.claimQueuedLogJobs(3));
        expect(claimed.map((job) => [job.id, job.kind, job.submittedBy])).toEqual([
          [publish, 'publish', 'proc-a'],
          [yank, 'yank', 'proc-b'],
          [decision, 'approval-decision', 'proc-a'],
        ]);
        expect(Buffer.isBuffer(claimed[0]!.payload)).toBe(true);
        expect(claimed[0]!.payload.equals(ALL_BYTES)).toBe(true);
        expect(claimed[1]!.payload.byteLength).toBe(0);
        expect(claimed[2]!.payload.equals(ALL_BYTES.subarray(10, 30))).toBe(true);

        const outcome = Buffer.concat([ALL_BYTES, Buffer.from('"ok"')]);
        await store.transaction(async () => {
          const jobs = await store.claimQueuedLogJobs(64);
          expect(jobs.map((job) => job.id)).toEqual([publish, yank, decision, consumption]);
          await store.finishLogJob(publish, 'done', outcome);
          await store.finishLogJob(yank, 'failed', new Uint8Array(0));
          await store.finishLogJob(decision, 'done', outcome.subarray(1, 2));
        });
        expect(await store.hasQueuedLogJobs()).toBe(true); // the consumption is still queued
        const finished = await finishedOf(store, [publish, yank, decision, consumption, publish + 999]);
        expect(finished.map((job) => [job.id, job.state])).toEqual([
          [publish, 'done'],
          [yank, 'failed'],
          [decision, 'done'],
        ]);
        const byId = new Map(finished.map((job) => [job.id, job]));
        expect(byId.get(publish)!.outcome!.equals(outcome)).toBe(true);
        expect(byId.get(yank)!.outcome!.byteLength).toBe(0);
        expect(byId.get(decision)!.outcome!.equals(outcome.subarray(1, 2))).toBe(true);
        expect((await store.transaction(async () => await store.claimQueuedLogJobs(64))).map((job) => job.id)).toEqual([
          consumption,
        ]);

        // A finished job is finished once: a second finish changes neither state nor outcome.
        await store.finishLogJob(publish, 'failed', Buffer.from('other'));
        expect((await store.readFinishedLogJobs([publish]))[0]!.outcome!.equals(outcome)).toBe(true);
        expect((await store.readFinishedLogJobs([publish]))[0]!.state).toBe('done');
        expect(await store.readFinishedLogJobs([])).toEqual([]);
      }),
    TIMEOUT,
  );

  it(
    'cancels a queued job (true) but not a finished one (false); a cancelled job is never claimed nor finished',
    () =>
      withStore(async (t) => {
        const { store } = t;
        const a = await store.enqueueLogJob('publish', Buffer.from('a'), 'p');
        const b = await store.enqueueLogJob('publish', Buffer.from('b'), 'p');
        const c = await store.enqueueLogJob('yank', Buffer.from('c'), 'p');
        expect(await store.cancelLogJob(b)).toBe(true);
        expect(await store.cancelLogJob(b)).toBe(false); // already cancelled
        await store.transaction(async () => {
          const jobs = await store.claimQueuedLogJobs(64);
          expect(jobs.map((job) => job.id)).toEqual([a, c]);
          await store.finishLogJob(a, 'done', Buffer.from('A'));
          await store.finishLogJob(b, 'done', Buffer.from('B')); // not queued: left cancelled
        });
        expect(await store.cancelLogJob(a)).toBe(false);
        expect(await store.cancelLogJob(a + 999)).toBe(false);
        expect(await finishedOf(store, [a, b, c])).toEqual([
          { id: a, state: 'done', outcome: Buffer.from('A') },
          { id: b, state: 'cancelled', outcome: null },
        ]);
        expect(await store.cancelLogJob(c)).toBe(true);
        expect(await store.hasQueuedLogJobs()).toBe(false);
        expect(await store.transaction(async () => await store.claimQueuedLogJobs(64))).toEqual([]);
      }),
    TIMEOUT,
  );

  it(
    'purges only finished or cancelled jobs older than the age, never queued work',
    () =>
      withStore(async (t) => {
        const { store } = t;
        const ids: number[] = [];
        for (const name of ['old-queued', 'old-done', 'old-failed', 'old-cancelled', 'new-done', 'new-cancelled'])
          ids.push(await store.enqueueLogJob('publish', Buffer.from(name), 'p'));
        const [oldQueued, oldDone, oldFailed, oldCancelled, newDone, newCancelled] = ids as [
          number,
          number,
          number,
          number,
          number,
          number,
        ];
        await store.transaction(async () => {
          await store.claimQueuedLogJobs(64);
          await store.finishLogJob(oldDone, 'done', Buffer.from('x'));
          await store.finishLogJob(oldFailed, 'failed', Buffer.from('x'));
          await store.finishLogJob(newDone, 'done', Buffer.from('x'));
        });
        await store.cancelLogJob(oldCancelled);
        await store.cancelLogJob(newCancelled);
        // Age the "old" rows by an hour (submitted and finished); the queued one was submitted an hour ago too.
        await t.raw(
          `UPDATE log_jobs SET submitted_at = submitted_at - interval '1 hour',
             finished_at = finished_at - interval '1 hour' WHERE id = ANY($1::bigint[])`,
          [[oldQueued, oldDone, oldFailed, oldCancelled]],
        );
        expect(await store.purgeLogJobs(10 * 60_000)).toBe(3);
        expect(await jobRows(t)).toEqual([
          { id: oldQueued, state: 'queued' },
          { id: newDone, state: 'done' },
          { id: newCancelled, state: 'cancelled' },
        ]);
        expect(await store.purgeLogJobs(10 * 60_000)).toBe(0);
        // Queued work is never purged, however old: it is still someone's unanswered request.
        expect(await store.hasQueuedLogJobs()).toBe(true);
      }),
    TIMEOUT,
  );
});

// Two connections need a server (PGlite in this process is one connection): defined only when there is one.
if (testDatabaseUrl !== undefined) {
  describe('two connections on the PostgreSQL server', () => {
    it(
      'racing for the lease 20 rounds, exactly one holds it each round, at a new epoch',
      () =>
        withStore(async ({ url }) => {
          const rounds = 20;
          const barrier = new Int32Array(new SharedArrayBuffer(4));
          const racers = ['racer-1', 'racer-2'].map((holder) =>
            startWorker<LeaseRaceRound[]>({
              mode: 'lease-race',
              url,
              holder,
              rounds,
              ttlMs: 60_000,
              parties: 2,
              barrier,
            }),
          );
          const [one, two] = await Promise.all(racers.map((r) => r.done));
          const wins = { 'racer-1': 0, 'racer-2': 0 };
          for (let round = 0; round < rounds; round++) {
            const a = one![round]!;
            const b = two![round]!;
            // Both saw the same lease: one holder, one epoch, a new one each round (the winner released it).
            expect(a).toEqual(b);
            expect(a.epoch).toBe(round + 1);
            expect(['racer-1', 'racer-2']).toContain(a.holder);
            wins[a.holder as keyof typeof wins]++;
          }
          console.info(`lease race: ${JSON.stringify(wins)} wins over ${rounds} rounds`);
        }),
      TIMEOUT,
    );

    it(
      'a second connection waits while the first holds the claimed jobs, then gets only jobs still queued',
      () =>
        withStore(async (t) => {
          const { store, url } = t;
          const first = await store.enqueueLogJob('publish', Buffer.from('1'), 'p');
          const second = await store.enqueueLogJob('publish', Buffer.from('2'), 'p');
          const third = await store.enqueueLogJob('yank', Buffer.from('3'), 'p');
          const go = new Int32Array(new SharedArrayBuffer(4));
          const thread = startWorker<ClaimResult>({ mode: 'claim', url, go });
          await thread.ready;
          let sawWaiting = false;
          await store.transaction(async () => {
            expect((await store.claimQueuedLogJobs(2)).map((job) => job.id)).toEqual([first, second]);
            Atomics.store(go, 0, 1);
            Atomics.notify(go, 0);
            // The other connection's transaction waits (on the writer lock or the rows) until this one ends.
            for (let i = 0; i < 500 && !sawWaiting; i++) {
              sawWaiting =
                (
                  await t.raw(
                    `SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                 WHERE NOT l.granted AND a.datname = current_database() AND l.pid <> pg_backend_pid()`,
                  )
                ).length > 0;
              if (!sawWaiting) await sleep(10);
            }
            await store.finishLogJob(first, 'done', Buffer.from('one'));
            await store.finishLogJob(second, 'failed', Buffer.from('two'));
          });
          expect(sawWaiting).toBe(true);
          const { claimed } = await thread.done;
          expect(claimed).toEqual([third]);
          expect(await finishedOf(store, [first, second, third])).toEqual([
            { id: first, state: 'done', outcome: Buffer.from('one') },
            { id: second, state: 'failed', outcome: Buffer.from('two') },
            { id: third, state: 'done', outcome: Buffer.from(`claimed by the thread: ${third}`) },
          ]);
        }),
      TIMEOUT,
    );
  });
}

// Several registry processes on one PostgreSQL log (src/registry/sequencer.ts, issue 16 §2): exactly one holds the
// lease; a follower's publish, yank and approval transitions are committed by the sequencer through log_jobs (the row
// appears and is finished; the sequencer purges it later) and answered with an inclusion proof that verifies; refusals keep their codes
// with nothing stored; the follower takes over when the sequencer stops; with no live sequencer a follower's write is
// SEQUENCER_UNAVAILABLE and withdrawn; fsck is clean after.
//
// Two connections need the server (TOOLSEAL_TEST_DATABASE_URL). Without it the hand-over cases run on PGlite with both
// registries over one store connection (PGlite in this process is one connection; @electric-sql/pglite-socket is not
// installed), which exercises the protocol but not two sessions; the no-sequencer cases need one connection anyway.

import { afterAll, describe, expect, it } from 'vitest';
import { isToolsealError } from '../../src/core/errors.ts';
import { hashLeaf, verifyCheckpoint, verifyInclusionProof } from '../../src/log/index.ts';
import { openRegistry, type Registry, runFsck, type SequencerEvent } from '../../src/registry/index.ts';
import type { PublisherRecord } from '../../src/store/index.ts';
import { openPostgresStore, type PostgresStore, postgresQueryOf } from '../../src/store/postgres/index.ts';
import { buildEnvelope, decisionBody, REFUNDS_MANIFEST } from '../helpers/approval-helpers.ts';
import {
  cleanupTempDirs,
  digestOfBytes,
  makeTempDir,
  manifestBytes,
  REGISTRY_TABLES,
} from '../helpers/registry-helpers.ts';
import { createTestDatabase, freshPgliteDir, testDatabaseUrl } from '../store/contract/store-backends.ts';

afterAll(cleanupTempDirs);

const TIMEOUT = 180_000;
/**
 * 600 ms on the server (the brief's figure). PGlite runs PostgreSQL in WASM in this process, where one call can block
 * the event loop for hundreds of ms on a loaded machine: a holder then outlives its own margin (2/3 of the lease) before
 * its renewal timer runs and queues its own work, so PGlite gets a longer lease.
 */
const LEASE_MS = testDatabaseUrl !== undefined ? 600 : 3000;
const ORIGIN = 'http://127.0.0.1:8787';
const WIDGETS = 'io.github.acme/widgets';
const onServer = testDatabaseUrl !== undefined;

type Raw = (sql: string, params?: readonly unknown[]) => Promise<Record<string, unknown>[]>;

interface Database {
  url: string;
  drop(): Promise<void>;
}

async function createDatabase(): Promise<Database> {
  return onServer
    ? createTestDatabase(testDatabaseUrl as string)
    : { url: `pglite:${await freshPgliteDir()}`, drop: async () => {} };
}

/** Every log_jobs row change, recorded by a trigger the test adds (dropped again before fsck). */
async function recordJobEvents(raw: Raw): Promise<void> {
  await raw(
    'CREATE TABLE test_job_events (seq serial PRIMARY KEY, op text, id bigint, kind text, state text, submitted_by text)',
  );
  await raw(`CREATE FUNCTION test_job_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      IF TG_OP = 'DELETE' THEN
        INSERT INTO test_job_events (op, id, kind, state, submitted_by)
          VALUES (TG_OP, OLD.id, OLD.kind, OLD.state, OLD.submitted_by);
        RETURN OLD;
      END IF;
      INSERT INTO test_job_events (op, id, kind, state, submitted_by)
        VALUES (TG_OP, NEW.id, NEW.kind, NEW.state, NEW.submitted_by);
      RETURN NEW;
    END $$`);
  await raw(`CREATE TRIGGER test_job_events AFTER INSERT OR UPDATE OR DELETE ON log_jobs
      FOR EACH ROW EXECUTE FUNCTION test_job_event()`);
}

async function stopRecordingJobEvents(raw: Raw): Promise<void> {
  await raw('DROP TRIGGER test_job_events ON log_jobs');
  await raw('DROP FUNCTION test_job_event()');
  await raw('DROP TABLE test_job_events');
}

interface JobEvent {
  op: string;
  kind: string;
  state: string;
  submittedBy: string;
}

/** The job events recorded since the last call, as [op kind state submitter] per job id (in order of ids). */
async function takeJobEvents(raw: Raw): Promise<JobEvent[][]> {
  const rows = (await raw(
    `DELETE FROM test_job_events RETURNING seq, op, id, kind, state, submitted_by AS "submittedBy"`,
  )) as unknown as (JobEvent & { seq: number; id: number })[];
  const byId = new Map<number, JobEvent[]>();
  for (const row of rows.sort((x, y) => x.seq - y.seq)) {
    const list = byId.get(row.id) ?? [];
    list.push({ op: row.op, kind: row.kind, state: row.state, submittedBy: row.submittedBy });
    byId.set(row.id, list);
  }
  return [...byId.entries()].sort(([x], [y]) => x - y).map(([, events]) => events);
}

/** One job submitted by `by` and finished with `state` by the sequencer (the row stays until the sequencer's purge). */
function handedOver(kind: string, by: string, state: 'done' | 'failed'): JobEvent[] {
  return [
    { op: 'INSERT', kind, state: 'queued', submittedBy: by },
    { op: 'UPDATE', kind, state, submittedBy: by },
  ];
}

/**
 * Every row of every registry table, as one fingerprint per table: equal snapshots mean nothing was stored. (log_jobs is
 * the queue itself: its rows are asserted one by one with takeJobEvents.)
 */
async function snapshotTables(raw: Raw): Promise<Record<string, string>> {
  const snapshot: Record<string, string> = {};
  for (const table of REGISTRY_TABLES) {
    const [row] = await raw(
      `SELECT count(*) AS n, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS h FROM ${table} t`,
    );
    snapshot[table] = `${String(row!['n'])}:${String(row!['h'])}`;
  }
  return snapshot;
}

async function refusalCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isToolsealError(error) ? error.code : `not a ToolsealError: ${String(error)}`;
  }
  return 'resolved';
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - started;
}

/** The inclusion proof a publish answered leads from its attestation leaf to a checkpoint signed by the log key. */
function expectProofVerifies(registry: Registry, outcome: Awaited<ReturnType<Registry['publish']>>): void {
  const checkpoint = verifyCheckpoint(outcome.inclusion.checkpoint, registry.log.verifierString);
  expect(outcome.inclusion.index).toBe(outcome.record.logIndex);
  expect(checkpoint.size).toBe(outcome.inclusion.size);
  verifyInclusionProof(
    hashLeaf(outcome.record.attestation),
    outcome.inclusion.index,
    outcome.inclusion.size,
    outcome.inclusion.hashes.map((hash) => new Uint8Array(Buffer.from(hash, 'base64'))),
    checkpoint.rootHash,
  );
}

interface Process {
  holder: string;
  store: PostgresStore;
  registry: Registry;
  events: SequencerEvent[];
}

async function openProcess(
  store: PostgresStore,
  keysDir: string,
  holder: string,
  jobTimeoutMs?: number,
): Promise<Process> {
  const events: SequencerEvent[] = [];
  const registry = await openRegistry({
    store,
    keysDir,
    origin: ORIGIN,
    sequencing: {
      leaseMs: LEASE_MS,
      pollMs: 2,
      holder,
      ...(jobTimeoutMs === undefined ? {} : { jobTimeoutMs }),
      onEvent: (event) => events.push(event),
    },
  });
  return { holder, store, registry, events };
}

async function closeProcesses(processes: Process[]): Promise<void> {
  for (const { registry } of processes) {
    await registry.drain();
    await registry.stopSequencing();
  }
  for (const store of new Set(processes.map((p) => p.store))) await store.close();
}

function errorsOf(process: Process): SequencerEvent[] {
  return process.events.filter((event) => event.type === 'error');
}

describe(`two registries on one log (${onServer ? 'PostgreSQL server, two connections' : 'PGlite, one shared connection'})`, () => {
  it(
    "a follower's publishes, yank and approvals are sequenced by the lease holder; it takes over when that one stops",
    async () => {
      const database = await createDatabase();
      const keysDir = makeTempDir();
      const storeA = await openPostgresStore({ url: database.url });
      // Each registry its own connection on the server; on PGlite both share the one connection there is.
      const storeB = onServer ? await openPostgresStore({ url: database.url }) : storeA;
      const raw = postgresQueryOf(storeA);
      const processes: Process[] = [];
      try {
        const a = await openProcess(storeA, keysDir, 'proc-a');
        processes.push(a);
        const b = await openProcess(storeB, keysDir, 'proc-b');
        processes.push(b);
        expect([a.registry.sequencingRole, b.registry.sequencingRole]).toEqual(['sequencer', 'follower']);
        expect(await raw('SELECT holder, epoch FROM sequencer_lease')).toEqual([{ holder: 'proc-a', epoch: 1 }]);
        // One signing key for both (the second found the first's), one log.
        expect(await b.registry.activeKid()).toBe(await a.registry.activeKid());
        expect(b.registry.log.verifierString).toBe(a.registry.log.verifierString);
        await recordJobEvents(raw);

        const acme = (await a.registry.createPublisher('io.github.acme')).publisher;
        const bytes = manifestBytes({ version: '1.0.0' });
        const published = await b.registry.publish(bytes, acme);
        expect(published.created).toBe(true);
        expect(published.record).toMatchObject({ name: WIDGETS, version: '1.0.0', status: 'active' });
        expect(await storeA.getVersion(WIDGETS, '1.0.0')).toEqual(published.record);
        expect((await storeA.latestCheckpoint())!.size).toBeGreaterThan(published.record.logIndex);
        expectProofVerifies(b.registry, published);
        expect(await takeJobEvents(raw)).toEqual([handedOver('publish', 'proc-b', 'done')]);

        // The same bytes again: stored already (created false, same record); other bytes: VERSION_EXISTS, nothing stored.
        const again = await b.registry.publish(bytes, acme);
        expect(again.created).toBe(false);
        expect(again.record).toEqual(published.record);
        expectProofVerifies(b.registry, again);
        expect(await takeJobEvents(raw)).toEqual([handedOver('publish', 'proc-b', 'done')]);
        const before = await snapshotTables(raw);
        const other = b.registry.publish(manifestBytes({ version: '1.0.0', description: 'other bytes' }), acme);
        await expect(other).rejects.toMatchObject({ code: 'VERSION_EXISTS', pointer: '/version' });
        expect(await snapshotTables(raw)).toEqual(before);
        expect(await takeJobEvents(raw)).toEqual([handedOver('publish', 'proc-b', 'failed')]);

        // A yank through the follower, and again (already yanked).
        const yanked = await b.registry.yank(acme, WIDGETS, '1.0.0', 'broken');
        expect(yanked.alreadyYanked).toBe(false);
        expect(yanked.record).toMatchObject({ status: 'yanked', yankReason: 'broken' });
        expect((await storeA.latestCheckpoint())!.size).toBeGreaterThan(yanked.record.yankLogIndex!);
        expect((await b.registry.yank(acme, WIDGETS, '1.0.0', 'broken')).alreadyYanked).toBe(true);
        expect(await takeJobEvents(raw)).toEqual([
          handedOver('yank', 'proc-b', 'done'),
          handedOver('yank', 'proc-b', 'done'),
        ]);

        // Approvals: requested at the follower (no leaf), decided and consumed through it (a leaf each, by the sequencer).
        const actions = (await a.registry.createPublisher('io.example.actions')).publisher;
        await b.registry.publish(REFUNDS_MANIFEST, actions);
        await takeJobEvents(raw);
        const host = (await a.registry.createPrincipal('host', 'host-a')).principal;
        const operator = (await a.registry.createPrincipal('operator', 'alice')).principal;
        const request = await b.registry.requestApproval(host, await buildEnvelope(b.registry));
        const decided = await b.registry.decideApproval(operator, request.id, decisionBody('approve', request.digest));
        expect(decided).toMatchObject({ id: request.id, digest: request.digest, status: 'approved' });
        expect(await storeA.getApproval(request.id)).toMatchObject({
          status: 'approved',
          decisionLogIndex: decided.logIndex,
        });
        const beforeRefusal = await snapshotTables(raw);
        const twice = b.registry.decideApproval(operator, request.id, decisionBody('deny', request.digest));
        await expect(twice).rejects.toMatchObject({ code: 'APPROVAL_DECIDED' });
        expect(await snapshotTables(raw)).toEqual(beforeRefusal);
        const consumed = await b.registry.consumeApproval(host, request.id, await buildEnvelope(b.registry));
        expect(consumed).toMatchObject({ id: request.id, status: 'consumed', logIndex: decided.logIndex + 1 });
        expect((await storeA.latestCheckpoint())!.size).toBeGreaterThan(consumed.logIndex);
        expect(await takeJobEvents(raw)).toEqual([
          handedOver('approval-decision', 'proc-b', 'done'),
          handedOver('approval-decision', 'proc-b', 'failed'),
          handedOver('approval-consumption', 'proc-b', 'done'),
        ]);

        // The sequencer's own writes do not go through the queue.
        const local = await a.registry.publish(manifestBytes({ version: '1.1.0' }), acme);
        expect(local.created).toBe(true);
        expectProofVerifies(a.registry, local);
        expect(await takeJobEvents(raw)).toEqual([]);

        // The sequencer stops: the follower takes the lease (a new epoch) and commits its next publish itself. (The epoch
        // is read, not assumed: a holder that renewed late on a loaded machine re-took its own lease at a new epoch.)
        const [held] = (await raw('SELECT holder, epoch FROM sequencer_lease')) as { holder: string; epoch: number }[];
        expect(held!.holder).toBe('proc-a');
        await a.registry.stopSequencing();
        expect(a.registry.sequencingRole).toBe('follower');
        const tookMs = await waitFor('the takeover', () => b.registry.sequencingRole === 'sequencer', 5 * LEASE_MS);
        console.info(`takeover after a release: ${Math.round(tookMs)} ms (lease ${LEASE_MS} ms)`);
        const [taken] = (await raw('SELECT holder, epoch FROM sequencer_lease')) as { holder: string; epoch: number }[];
        expect(taken!.holder).toBe('proc-b');
        expect(taken!.epoch).toBe(held!.epoch + 1);
        console.info(`role changes: ${JSON.stringify([...a.events, ...b.events].filter((e) => e.type === 'role'))}`);
        const afterTakeover = await b.registry.publish(manifestBytes({ version: '1.2.0' }), acme);
        expect(afterTakeover.created).toBe(true);
        expectProofVerifies(b.registry, afterTakeover);
        expect(await takeJobEvents(raw)).toEqual([]);
        // The stopped one refuses new sequenced work rather than queueing it.
        expect(await refusalCode(a.registry.publish(manifestBytes({ version: '1.3.0' }), acme))).toBe(
          'SEQUENCER_UNAVAILABLE',
        );
        expect(await storeA.getVersion(WIDGETS, '1.3.0')).toBeUndefined();

        expect(await raw(`SELECT count(*) AS n FROM log_jobs WHERE state = 'queued'`)).toEqual([{ n: 0 }]);
        await stopRecordingJobEvents(raw);
        const report = await runFsck(storeA, a.registry.log.verifierString);
        expect(report.problems).toEqual([]);
        expect(report.ok).toBe(true);
        expect([...errorsOf(a), ...errorsOf(b)]).toEqual([]);
      } finally {
        await closeProcesses(processes);
        if (processes.length === 0) await storeA.close();
        if (onServer && processes.length < 2) await storeB.close();
        await database.drop();
      }
    },
    TIMEOUT,
  );
});

describe(`a follower with no live sequencer (${onServer ? 'PostgreSQL server' : 'PGlite'})`, () => {
  it(
    'refuses a publish with SEQUENCER_UNAVAILABLE after jobTimeoutMs, nothing stored, the job withdrawn; then takes over',
    async () => {
      const database = await createDatabase();
      const store = await openPostgresStore({ url: database.url });
      const raw = postgresQueryOf(store);
      const processes: Process[] = [];
      try {
        // A holder that is gone but whose lease has long to run.
        await raw(
          `INSERT INTO sequencer_lease (id, holder, epoch, expires_at) VALUES (1, 'ghost', 7, now() + interval '1 hour')`,
        );
        const p = await openProcess(store, makeTempDir(), 'proc-f', 300);
        processes.push(p);
        expect(p.registry.sequencingRole).toBe('follower');
        await recordJobEvents(raw);
        const acme: PublisherRecord = (await p.registry.createPublisher('io.github.acme')).publisher;
        const before = await snapshotTables(raw);
        const started = performance.now();
        const code = await refusalCode(p.registry.publish(manifestBytes({ version: '1.0.0' }), acme));
        const waited = performance.now() - started;
        expect(code).toBe('SEQUENCER_UNAVAILABLE');
        expect(waited).toBeGreaterThanOrEqual(300);
        expect(await snapshotTables(raw)).toEqual(before);
        expect(await store.getVersion(WIDGETS, '1.0.0')).toBeUndefined();
        expect(await takeJobEvents(raw)).toEqual([
          [
            { op: 'INSERT', kind: 'publish', state: 'queued', submittedBy: 'proc-f' },
            { op: 'UPDATE', kind: 'publish', state: 'cancelled', submittedBy: 'proc-f' },
          ],
        ]);
        expect(await refusalCode(p.registry.yank(acme, WIDGETS, '1.0.0', 'x'))).toBe('SEQUENCER_UNAVAILABLE');
        await takeJobEvents(raw);

        // The ghost's lease ends: this process takes it at the next epoch, signs over the leaves it left (its key's),
        // and commits locally.
        await raw(`UPDATE sequencer_lease SET expires_at = now() - interval '1 millisecond'`);
        await waitFor('the takeover', () => p.registry.sequencingRole === 'sequencer', 5 * LEASE_MS);
        expect(await raw('SELECT holder, epoch FROM sequencer_lease')).toEqual([{ holder: 'proc-f', epoch: 8 }]);
        await waitFor(
          'a checkpoint over every leaf',
          async () => (await store.latestCheckpoint())?.size === (await store.getLogSize()),
          5_000,
        );
        const bytes = manifestBytes({ version: '1.0.0' });
        const published = await p.registry.publish(bytes, acme);
        expect(published.created).toBe(true);
        expect(published.record.digest).toBe(digestOfBytes((await store.getBlob(published.record.digest))!.bytes));
        expectProofVerifies(p.registry, published);
        expect(await takeJobEvents(raw)).toEqual([]);

        await stopRecordingJobEvents(raw);
        const report = await runFsck(store, p.registry.log.verifierString);
        expect(report.problems).toEqual([]);
        expect(report.ok).toBe(true);
        expect(errorsOf(p)).toEqual([]);
      } finally {
        await closeProcesses(processes);
        if (processes.length === 0) await store.close();
        await database.drop();
      }
    },
    TIMEOUT,
  );
});

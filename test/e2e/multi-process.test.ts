// Issue 16 §2: three `toolseal serve` processes on one PostgreSQL database, six concurrent publishers spread over them,
// the sequencer SIGKILLed mid-stream; a survivor takes the lease within seconds, every acknowledged publish is there
// with its acknowledged digest and log index, fsck is clean and audit proves the log consistent with its pre-kill state.
// The database: a fresh one on TOOLSEAL_TEST_DATABASE_URL's server, else PGlite behind @electric-sql/pglite-socket.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import { startPgliteSocketServer } from '../helpers/pglite-socket-server.ts';
import {
  cleanupTempDirs,
  digestOfBytes,
  makeTempDir,
  manifestBytes,
  runCli,
  startServerProcess,
  type ServerProcess,
} from '../helpers/registry-helpers.ts';
import { createTestDatabase, testDatabaseUrl } from '../store/contract/store-backends.ts';

const PROCESSES = 3;
const PUBLISHERS = 6;
/** The audit state is taken after this many acknowledgements, the sequencer killed after this many more. */
const AUDIT_AFTER_ACKS = 20;
const KILL_AFTER_MORE_ACKS = 30;
/** The publishers go on until this many more were acknowledged after the kill (each at most MAX_VERSIONS). */
const ACKS_AFTER_KILL = 60;
const MAX_VERSIONS_PER_PUBLISHER = 200;
const LEASE_MS = 1500;
/** A survivor must sequence within this long of the kill (the lease, a renewal period, and slack for 2 cores). */
const TAKEOVER_LIMIT_MS = 6000;
/** Publishing (every version acknowledged) must finish within this long: generous, it is a hang detector. */
const PUBLISH_DEADLINE_MS = 80_000;
const ORIGIN = 'http://127.0.0.1:18800';
const NAMESPACE = 'io.github.acme';

interface Health {
  status: string;
  logSize: number;
  sequencer?: 'sequencer' | 'follower';
}

interface Acknowledged {
  name: string;
  version: string;
  digest: string;
  logIndex: number;
  status: number;
}

interface TestDatabase {
  url: string;
  close(): Promise<void>;
}

async function openTestDatabase(): Promise<TestDatabase> {
  if (testDatabaseUrl !== undefined) {
    const database = await createTestDatabase(testDatabaseUrl);
    return { url: database.url, close: database.drop };
  }
  const server = await startPgliteSocketServer();
  return { url: server.url, close: server.stop };
}

async function readHealth(server: ServerProcess): Promise<Health | undefined> {
  try {
    const response = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(3000) });
    return response.status === 200 ? ((await response.json()) as Health) : undefined;
  } catch {
    return undefined;
  }
}

/** Poll `check` every 50 ms until it returns a value, or fail after `timeoutMs`. */
async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await sleep(50);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

async function queryDatabase(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/** The lease epochs a server said it took, from its stderr. */
function epochsTaken(server: ServerProcess): number[] {
  return [...server.stderr().matchAll(/this process now sequences the log \(lease epoch (\d+)\)/g)].map((m) =>
    Number(m[1]),
  );
}

const servers: ServerProcess[] = [];
let database: TestDatabase | undefined;
afterAll(async () => {
  for (const server of servers) server.kill();
  await Promise.all(servers.map((server) => server.exited));
  await database?.close();
  cleanupTempDirs();
});

describe('three serve processes on one PostgreSQL database', () => {
  it('SIGKILL the sequencer mid-stream: a survivor takes over, every acknowledged publish stays, fsck and audit pass', {
    timeout: 120_000,
  }, async () => {
    onTestFailed(() => {
      for (const [i, server] of servers.entries()) console.log(`process ${i} stderr:\n${server.stderr().slice(-4000)}`);
    });
    database = await openTestDatabase();
    const url = database.url;
    const root = makeTempDir();
    const keysDir = join(root, 'keys');
    const statePath = join(root, 'audit-state.json');
    const serveArgs = (i: number): string[] => [
      '--database',
      url,
      '--port',
      '0',
      '--data',
      join(root, `data-${i}`),
      '--keys',
      keysDir,
      '--origin',
      ORIGIN,
      '--sequencer-lease',
      String(LEASE_MS),
      '--pipeline-workers',
      '0',
    ];

    // The first process migrates the database and creates the keys; the others start once it answers.
    servers.push(await startServerProcess(serveArgs(0), { timeoutMs: 40_000 }));
    await waitFor('the first process to sequence', 20_000, async () =>
      (await readHealth(servers[0]!))?.sequencer === 'sequencer' ? true : undefined,
    );
    const followers = Array.from({ length: PROCESSES - 1 }, (_, i) =>
      startServerProcess(serveArgs(i + 1), { timeoutMs: 40_000 }),
    );
    const startedFollowers = await Promise.allSettled(followers);
    for (const result of startedFollowers) if (result.status === 'fulfilled') servers.push(result.value); // killed in afterAll
    for (const result of startedFollowers) if (result.status === 'rejected') throw result.reason;
    for (const server of servers.slice(1)) expect((await readHealth(server))?.sequencer).toBe('follower');
    const added = await runCli(['publisher', 'add', NAMESPACE, '--unverified-namespace'], {
      env: { TOOLSEAL_DATABASE_URL: url },
    });
    expect(added.code, added.stderr).toBe(0);
    const token = added.stdout.trim();
    expect(token).toMatch(/^\S+$/);

    const acknowledged: Acknowledged[] = [];
    const failures: string[] = [];
    let inFlight = 0;
    let victim: ServerProcess | undefined;
    let inFlightAtKill = 0;
    let acksAtKill = 0;
    let socketFailures = 0;
    let survivorSocketFailures = 0;
    let unavailable = 0;
    const started = performance.now();

    /** Publish one version until a process acknowledges it (another process after a socket failure or a 503). */
    const publishUntilAcknowledged = async (
      publisher: number,
      cursor: { next: number },
      name: string,
      version: string,
    ): Promise<void> => {
      const bytes = manifestBytes({ name, version, description: `publisher ${publisher}, version ${version}` });
      const expected = runPipeline(bytes).digest;
      while (performance.now() - started < PUBLISH_DEADLINE_MS) {
        const target = servers[cursor.next++ % servers.length]!;
        let status: number;
        let text: string;
        inFlight++;
        try {
          const response = await fetch(`${target.url}/v1/manifests`, {
            method: 'POST',
            body: bytes,
            headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
            signal: AbortSignal.timeout(45_000),
          });
          status = response.status;
          text = await response.text();
        } catch {
          // The killed process fails at the socket (in flight at the kill, refused after it); a survivor only in a
          // keep-alive race (it is checked to be alive at the end). Never acknowledged: retried on the next process.
          if (target === victim) socketFailures++;
          else survivorSocketFailures++;
          continue;
        } finally {
          inFlight--;
        }
        if (status === 503 && (JSON.parse(text) as { code?: string }).code === 'SEQUENCER_UNAVAILABLE') {
          unavailable++;
          await sleep(100);
          continue;
        }
        if (status !== 201 && status !== 200) {
          failures.push(`${name}@${version}: ${status} ${text.slice(0, 300)}`);
          return;
        }
        const body = JSON.parse(text) as { version?: string; digest?: string; logIndex?: number };
        if (body.version !== version || body.digest !== expected || typeof body.logIndex !== 'number') {
          failures.push(`${name}@${version}: acknowledged ${text.slice(0, 300)}, expected digest ${expected}`);
          return;
        }
        acknowledged.push({ name, version, digest: expected, logIndex: body.logIndex, status });
        return;
      }
      failures.push(`${name}@${version}: not acknowledged within ${PUBLISH_DEADLINE_MS} ms`);
    };

    const publisher = async (k: number): Promise<void> => {
      const cursor = { next: k }; // round-robin over the processes, each publisher starting on another one
      const enough = (): boolean => victim !== undefined && acknowledged.length - acksAtKill >= ACKS_AFTER_KILL;
      for (let i = 0; i < MAX_VERSIONS_PER_PUBLISHER && !enough(); i++) {
        await publishUntilAcknowledged(k, cursor, `${NAMESPACE}/multi-${k}`, `1.0.${i}`);
      }
    };

    let takeoverMs: number | undefined;
    let auditBefore: { size: number } | undefined;
    const controller = async (): Promise<void> => {
      await waitFor('acknowledgements before the audit', PUBLISH_DEADLINE_MS, async () =>
        acknowledged.length >= AUDIT_AFTER_ACKS ? true : undefined,
      );
      const audit = await runCli(['audit', '--registry', servers[0]!.url, '--state', statePath, '--json']);
      expect(audit.code, audit.stdout + audit.stderr).toBe(0);
      auditBefore = JSON.parse(readFileSync(statePath, 'utf8')) as { size: number };
      const acksAtAudit = acknowledged.length;
      await waitFor('acknowledgements before the kill', PUBLISH_DEADLINE_MS, async () =>
        acknowledged.length >= acksAtAudit + KILL_AFTER_MORE_ACKS ? true : undefined,
      );
      // The sequencer, as the processes themselves say (one sample in which exactly one says so).
      const index = await waitFor('exactly one sequencer', 10_000, async () => {
        const roles = await Promise.all(servers.map(readHealth));
        const sequencers = roles.flatMap((health, i) => (health?.sequencer === 'sequencer' ? [i] : []));
        return sequencers.length === 1 ? sequencers[0] : undefined;
      });
      acksAtKill = acknowledged.length;
      inFlightAtKill = inFlight;
      victim = servers[index]!;
      const killedAt = performance.now();
      victim.child.kill('SIGKILL');
      const survivors = servers.filter((server) => server !== victim);
      await waitFor('a survivor to sequence', 20_000, async () => {
        const roles = await Promise.all(survivors.map(readHealth));
        return roles.some((health) => health?.sequencer === 'sequencer') ? true : undefined;
      });
      takeoverMs = performance.now() - killedAt;
    };

    await Promise.all([...Array.from({ length: PUBLISHERS }, (_, k) => publisher(k)), controller()]);

    // The kill happened mid-stream, and a survivor took the lease (a later epoch) within the limit.
    expect(failures).toEqual([]);
    expect(victim).toBeDefined();
    const dead = victim!;
    expect(await dead.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const survivors = servers.filter((server) => server !== dead);
    for (const server of survivors)
      expect(server.child.exitCode ?? server.child.signalCode, server.stderr()).toBeNull();
    expect(inFlightAtKill).toBeGreaterThan(0);
    expect(acknowledged.length - acksAtKill).toBeGreaterThanOrEqual(ACKS_AFTER_KILL);
    expect(takeoverMs).toBeDefined();
    expect(takeoverMs!).toBeLessThan(TAKEOVER_LIMIT_MS);
    const victimEpoch = Math.max(...epochsTaken(dead));
    const survivorEpochs = survivors.flatMap(epochsTaken);
    expect(Math.max(...survivorEpochs)).toBeGreaterThan(victimEpoch);
    console.log(
      `multi-process: ${acknowledged.length} publishes, kill after ${acksAtKill} with ${inFlightAtKill} in flight,` +
        ` takeover ${takeoverMs!.toFixed(0)} ms, ${socketFailures} socket failures at the killed process` +
        ` (${survivorSocketFailures} at survivors), ${unavailable} 503s,` +
        ` ${acknowledged.filter((a) => a.status === 200).length} acknowledged as 200 (retries), ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    // Every version acknowledged once, at its own log index.
    expect(new Set(acknowledged.map((a) => `${a.name}@${a.version}`)).size).toBe(acknowledged.length);
    expect(new Set(acknowledged.map((a) => a.logIndex)).size).toBe(acknowledged.length);

    // The database holds exactly the acknowledged digests and indexes; the log has no gap and only keys + publishes.
    const rows = await queryDatabase(url, 'SELECT name, version, digest, log_index FROM manifest_versions');
    expect(rows.length).toBe(acknowledged.length);
    const stored = new Map(rows.map((row) => [`${String(row['name'])}@${String(row['version'])}`, row]));
    for (const ack of acknowledged) {
      const row = stored.get(`${ack.name}@${ack.version}`);
      expect(row, `${ack.name}@${ack.version}`).toBeDefined();
      expect(row!['digest']).toBe(ack.digest);
      expect(Number(row!['log_index'])).toBe(ack.logIndex);
    }
    const [log] = await queryDatabase(
      url,
      `SELECT count(*)::int AS entries, max(idx)::int AS last,
              count(*) FILTER (WHERE kind = 'key')::int AS keys,
              count(*) FILTER (WHERE kind = 'attestation')::int AS attestations,
              (SELECT count(*)::int FROM signing_keys) AS signing_keys
         FROM log_entries`,
    );
    expect(log!['last']).toBe(Number(log!['entries']) - 1);
    expect(log!['keys']).toBe(log!['signing_keys']);
    expect(Number(log!['keys'])).toBeGreaterThanOrEqual(1);
    expect(log!['attestations']).toBe(acknowledged.length);
    // Each acknowledged publish is two leaves: its attestation and its Sigstore bundle's hashedrekord (issue 26).
    expect(log!['entries']).toBe(Number(log!['keys']) + 2 * acknowledged.length);
    const attestationIndexes = await queryDatabase(
      url,
      `SELECT idx::int AS idx FROM log_entries WHERE kind = 'attestation'`,
    );
    expect(new Set(attestationIndexes.map((row) => Number(row['idx'])))).toEqual(
      new Set(acknowledged.map((a) => a.logIndex)),
    );

    // The survivors serve every acknowledged version's bytes, and their checkpoint covers the whole log.
    for (const [i, ack] of acknowledged.entries()) {
      const server = survivors[i % survivors.length]!;
      const response = await fetch(`${server.url}/v1/manifests/${ack.name}/${ack.version}`);
      expect(response.status, `${ack.name}@${ack.version}`).toBe(200);
      expect(digestOfBytes(new Uint8Array(await response.arrayBuffer())), `${ack.name}@${ack.version}`).toBe(
        ack.digest,
      );
    }
    for (const server of survivors) {
      await waitFor('a checkpoint over the whole log', 20_000, async () =>
        (await readHealth(server))?.logSize === log!['entries'] ? true : undefined,
      );
    }

    const fsck = await runCli(['fsck', '--database', url]);
    expect(fsck.stdout + fsck.stderr).toMatch(/fsck: all intact\n/);
    expect(fsck.stdout).not.toContain('PROBLEM');
    expect(fsck.code).toBe(0);

    // The audit from before the kill: the log now is an extension of the tree it remembered.
    expect(auditBefore!.size).toBeGreaterThan(0);
    expect(auditBefore!.size).toBeLessThan(Number(log!['entries']));
    const audit = await runCli(['audit', '--registry', survivors[0]!.url, '--state', statePath, '--json']);
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    const report = JSON.parse(audit.stdout) as {
      ok: boolean;
      consistency: string;
      previous: { size: number } | null;
      checkpoint: { size: number } | null;
    };
    expect(report.ok).toBe(true);
    expect(report.consistency).toBe('proven');
    expect(report.previous?.size).toBe(auditBefore!.size);
    expect(report.checkpoint?.size).toBe(log!['entries']);
  });
});

// Publish throughput over HTTP on PostgreSQL against SQLite in the same run (issue 16 §4, third bullet), each as a
// ratio to the same baseline as the HTTP bench: runPipeline in process on the same bytes, measured between the HTTP
// runs and paired with each run (the mean of the baselines just before and just after it). The load generator is the
// HTTP bench's (scripts/bench-http-load.ts, autocannon in a forked child); the order of the stores alternates by round.
// PostgreSQL: the machine's server (TOOLSEAL_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test) on a
// fresh database dropped after; without a server, PGlite (WASM, in process: not a server). Several processes on one
// database (issue 16 §2) are not built, so there is no 1/2/3-process figure.
// Run alone: npx tsx scripts/bench-postgres.ts

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { runPipeline } from '../src/pipeline/index.ts';
import { defaultPipelineWorkers, type RunningRegistryServer, startRegistryServer } from '../src/server/index.ts';
import { redactDatabaseUrl } from '../src/store/postgres/index.ts';
import type { LoadJob, LoadResult } from './bench-http-load.ts';
import { LoadClient } from './bench-load-client.ts';
import { median, timeSync } from './bench-stats.ts';

const MANIFEST_FILE = fileURLToPath(new URL('../manifests/payments.json', import.meta.url));
const NAMESPACE = 'io.github.acme';
const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** Requests in flight (autocannon connections). */
const CONCURRENCY = [8, 64] as const;
const ROUNDS = 3;
const SECONDS = 3;
/** The pipeline baseline's length between consecutive HTTP runs (each run is paired with the two around it). */
const PIPELINE_SECONDS = 1;
/** Pause after a publish run before the baseline is measured (the servers' threads finish their work). */
const SETTLE_MILLIS = 300;

function fmt(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function checkClean(what: string, result: LoadResult): void {
  const bad = Object.keys(result.statusCounts).filter((status) => status !== '201');
  if (bad.length > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(
      `${what}: unexpected responses ${JSON.stringify(result.statusCounts)}, errors ${result.errors}, timeouts ${result.timeouts}`,
    );
  }
}

// ── the PostgreSQL under test ───────────────────────────────────────────

interface BenchDatabase {
  url: string;
  /** What it is, for the report. */
  description: string;
  drop(): Promise<void>;
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh database on the machine's server when it answers (dropped after), else a PGlite folder (removed after). */
async function openBenchDatabase(): Promise<BenchDatabase> {
  const serverUrl = process.env['TOOLSEAL_TEST_DATABASE_URL'] || DEFAULT_SERVER_URL;
  const name = `toolseal_bench_${randomBytes(6).toString('hex')}`;
  let settings: string | undefined;
  try {
    settings = await withClient(serverUrl, async (client) => {
      const show = async (setting: string): Promise<string> =>
        String(((await client.query(`SHOW ${setting}`)).rows[0] as Record<string, unknown>)[setting]);
      const described = `PostgreSQL ${await show('server_version')} at ${redactDatabaseUrl(serverUrl)}, synchronous_commit=${await show('synchronous_commit')}, fsync=${await show('fsync')}`;
      await client.query(`CREATE DATABASE ${name}`);
      return described;
    });
  } catch (error) {
    const dir = mkdtempSync(join(tmpdir(), 'toolseal-bench-pglite-'));
    return {
      url: `pglite:${join(dir, 'data')}`,
      description:
        `PGlite on ${tmpdir()} — NOTE: no PostgreSQL server answered at ${redactDatabaseUrl(serverUrl)} (${error instanceof Error ? error.message : String(error)});` +
        ' PGlite is PostgreSQL compiled to WASM running in this process, not a server: its figure is not a PostgreSQL server figure',
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    description: `${settings}, fresh database ${name} (dropped after)`,
    drop: () =>
      withClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

// ── the servers ─────────────────────────────────────────────────────────

interface Target {
  label: string;
  server: RunningRegistryServer;
  token: string;
  /** runs.get(connections)[round]: the run's rate and the pipeline baseline around it. */
  runs: Map<number, { result: LoadResult; baselineRate: number }[]>;
  close(): Promise<void>;
}

/** A registry as `toolseal serve` runs it, on SQLite in a temp folder or on `databaseUrl`. */
async function startTarget(label: string, databaseUrl: string | undefined): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'toolseal-bench-postgres-'));
  try {
    const server = await startRegistryServer({
      dataDir: join(dir, 'data'),
      keysDir: join(dir, 'keys'),
      ...(databaseUrl === undefined ? {} : { databaseUrl }),
      origin: 'http://127.0.0.1',
      port: 0,
      pipelineWorkers: defaultPipelineWorkers(),
      app: { onUnexpectedError: (error) => console.error(`bench-postgres (${label}): server error`, error) },
    });
    const { token } = server.registry.createPublisher(NAMESPACE);
    return {
      label,
      server,
      token,
      runs: new Map(CONCURRENCY.map((c) => [c, []])),
      close: async () => {
        try {
          await server.close();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

function describeTarget(target: Target): string[] {
  const lines = [
    `  ${target.label}: pipeline on ${target.server.pipelineWorkers} worker thread(s), commits ${target.server.writerThread ? 'on the writer thread' : 'on the event loop (the writer thread is SQLite-only)'}`,
  ];
  let best = { connections: 0, rate: -1, ratio: 0 };
  for (const [connections, list] of target.runs) {
    const rate = median(list.map((r) => r.result.okPerSecond));
    const ratio = median(list.map((r) => r.result.okPerSecond / r.baselineRate));
    lines.push(
      `    ${String(connections).padStart(3)} in flight: ${fmt(rate).padStart(6)} req/s  p50 ${fmt(median(list.map((r) => r.result.p50)), 1)} ms` +
        `  p99 ${fmt(median(list.map((r) => r.result.p99)), 1)} ms  ratio to the pipeline ${fmt(ratio, 3)}` +
        `  (rounds: ${list.map((r) => fmt(r.result.okPerSecond)).join(', ')})`,
    );
    if (rate > best.rate) best = { connections, rate, ratio };
  }
  const logSize = target.server.store.getLogSize();
  const checkpoints = target.server.store.listCheckpoints().length;
  lines.push(
    `    best ${fmt(best.rate)} req/s at ${best.connections} in flight, ratio ${fmt(best.ratio, 3)};` +
      ` ${fmt(logSize)} log leaves under ${fmt(checkpoints)} signed checkpoints (${fmt(logSize / Math.max(1, checkpoints), 1)} per checkpoint)`,
  );
  return lines;
}

// ── the section ─────────────────────────────────────────────────────────

async function measure(targets: Target[], load: LoadClient, upload: Buffer): Promise<number[]> {
  const text = upload.toString('utf8');
  const versionMatch = /"version"\s*:\s*"[^"]*"/.exec(text);
  if (!versionMatch) throw new Error('the fixture manifest has no version');
  const template = text.replace(versionMatch[0], '"version": "@@VERSION@@"');
  // The baseline runs on the same bytes the HTTP publishes send (only the version differs).
  const bodies = Array.from({ length: 256 }, (_, i) => Buffer.from(template.replace('@@VERSION@@', `7.0.${i}`)));
  const runPipelines = (seconds: number): number => timeSync(seconds, (i) => runPipeline(bodies[i % bodies.length]!));
  const job = (target: Target, connections: number, seconds: number): LoadJob => ({
    kind: 'publish',
    url: target.server.url,
    path: '/v1/manifests',
    connections,
    seconds,
    token: target.token,
    template,
    versionPrefix: '9.0.',
  });
  runPipelines(0.5);
  for (const target of targets) checkClean(`${target.label} warm-up`, await load.run(job(target, CONCURRENCY[0], 1)));
  const pipelineRates = [runPipelines(PIPELINE_SECONDS)];
  for (let round = 0; round < ROUNDS; round++) {
    for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
      for (const connections of CONCURRENCY) {
        const result = await load.run(job(target, connections, SECONDS));
        checkClean(`${target.label}, ${connections} in flight`, result);
        await target.server.registry.drain();
        await sleep(SETTLE_MILLIS);
        const before = pipelineRates.at(-1)!;
        pipelineRates.push(runPipelines(PIPELINE_SECONDS));
        target.runs.get(connections)!.push({ result, baselineRate: (before + pipelineRates.at(-1)!) / 2 });
      }
    }
  }
  return pipelineRates;
}

export async function benchPostgres(): Promise<string[]> {
  const upload = readFileSync(MANIFEST_FILE);
  const database = await openBenchDatabase();
  const lines = [
    `postgres bench: publish over HTTP (POST /v1/manifests, ${fmt(upload.byteLength)}-byte upload, a new version each time), SQLite against PostgreSQL, same run;` +
      ` ${availableParallelism()} CPUs, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    `  SQLite: WAL + synchronous=FULL on ${tmpdir()}; PostgreSQL: ${database.description}`,
    `  ${CONCURRENCY.join(' and ')} requests in flight (autocannon in a forked child, as the http bench), ${ROUNDS} rounds x ${SECONDS} s per store and load,` +
      ' store order alternating by round; medians; each run paired with the runPipeline baseline measured just before and after it',
  ];
  const load = new LoadClient();
  const targets: Target[] = [];
  try {
    targets.push(await startTarget('SQLite', undefined));
    targets.push(await startTarget(database.url.startsWith('pglite:') ? 'PGlite' : 'PostgreSQL', database.url));
    const pipelineRates = await measure(targets, load, upload);
    const pipelineRate = median(pipelineRates);
    lines.push(
      `  pipeline in-process (runPipeline, parse -> digest) ${fmt(pipelineRate)} ops/s = ${fmt(1e6 / pipelineRate)} µs/op` +
        ` (${pipelineRates.length} runs of ${PIPELINE_SECONDS} s: ${fmt(Math.min(...pipelineRates))} to ${fmt(Math.max(...pipelineRates))})`,
    );
    for (const target of targets) lines.push(...describeTarget(target));
    const [sqlite, postgres] = targets.map((t) =>
      Math.max(...[...t.runs.values()].map((list) => median(list.map((r) => r.result.okPerSecond)))),
    );
    lines.push(
      `  ${targets[1]!.label}/SQLite best throughput ${fmt(postgres! / sqlite!, 2)}`,
      '  several processes on one PostgreSQL database are not supported yet (issue 16 §2): no 1/2/3-process figure',
    );
    return lines;
  } finally {
    load.close();
    try {
      for (const target of targets) await target.close();
    } finally {
      await database.drop();
    }
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await benchPostgres()) console.log(line);
}

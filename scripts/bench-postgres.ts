// Publish throughput over HTTP on PostgreSQL against SQLite in the same run (issue 16 §4, third bullet), each as a
// ratio to the same baseline as the HTTP bench: runPipeline in process on the same bytes, measured between the HTTP
// runs and paired with each run (the mean of the baselines just before and just after it). The load generator is the
// HTTP bench's (scripts/bench-http-load.ts, autocannon in a forked child); the order of the stores alternates by round.
// PostgreSQL: the machine's server (TOOLSEAL_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test) on a
// fresh database dropped after; without a server, PGlite (WASM, in process: not a server). Then the same publish load
// (64 in flight) spread over 1, 2 and 3 `toolseal serve` processes on one fresh server database each (issue 16 §2), one
// load generator per process, each run paired with the pipeline baseline; on 2 cores that is a floor, not a curve.
// Run alone: npx tsx scripts/bench-postgres.ts

import { type ChildProcess, spawn } from 'node:child_process';
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
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI_MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const NAMESPACE = 'io.github.acme';
const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** Requests in flight (autocannon connections). */
const CONCURRENCY = [8, 64] as const;
const ROUNDS = 3;
const SECONDS = 3;
/** How long each read measurement runs (idle, then under publish load). */
const READ_SECONDS = 3;
/** The pipeline baseline's length between consecutive HTTP runs (each run is paired with the two around it). */
const PIPELINE_SECONDS = 1;
/** Pause after a publish run before the baseline is measured (the servers' threads finish their work). */
const SETTLE_MILLIS = 300;
/** The several-process figure: this many serve processes on one database, this many requests in flight over them. */
const PROCESS_COUNTS = [1, 2, 3] as const;
const PROCESS_CONNECTIONS = 64;
/** Longer runs than SECONDS: a follower's publish waits on the sequencer, seconds at the p99 on a loaded machine. */
const PROCESS_SECONDS = 5;

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
    const { token } = await server.registry.createPublisher(NAMESPACE);
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

async function describeTarget(target: Target): Promise<string[]> {
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
  const logSize = await target.server.store.getLogSize();
  const checkpoints = (await target.server.store.listCheckpoints()).length;
  lines.push(
    `    best ${fmt(best.rate)} req/s at ${best.connections} in flight, ratio ${fmt(best.ratio, 3)};` +
      ` ${fmt(logSize)} log leaves under ${fmt(checkpoints)} signed checkpoints (${fmt(logSize / Math.max(1, checkpoints), 1)} per checkpoint)`,
  );
  return lines;
}

// ── several serve processes on one database (issue 16 §2) ───────────────

interface ServeProcess {
  url: string;
  child: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

/** The environment for the children: nothing of the caller's TOOLSEAL_* settings, plus `extra`. */
function childEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { NODE_NO_WARNINGS: '1', ...extra };
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('TOOLSEAL_')) env[key] ??= value;
  return env;
}

/** `toolseal serve ARGS` as its own process (node --import tsx src/cli/main.ts), once it prints its URL. */
async function startServeProcess(args: string[]): Promise<ServeProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI_MAIN, 'serve', ...args], {
    cwd: REPO_ROOT,
    env: childEnvironment(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within 60 s:\n${stdout}\n${stderr}`)), 60_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const match = /^toolseal registry listening on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`serve exited before listening:\n${stdout}\n${stderr}`));
    });
  });
  return {
    url,
    child,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Run the CLI to completion; its stdout, or an error with its output. */
async function runToolseal(args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI_MAIN, ...args], {
    cwd: REPO_ROOT,
    env: childEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  if (code !== 0) throw new Error(`toolseal ${args[0]} exited ${code}: ${stderr}`);
  return stdout;
}

async function waitForRole(server: ServeProcess, role: 'sequencer' | 'follower'): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      const health = (await (await fetch(`${server.url}/healthz`)).json()) as { sequencer?: string };
      if (health.sequencer === role) return;
    } catch {
      // not answering yet
    }
    await sleep(50);
  }
  throw new Error(`${server.url} never reported itself the ${role}:\n${server.stderr()}`);
}

interface ProcessRun {
  okPerSecond: number;
  /** Each process's share of it. */
  perProcess: number[];
  p50: number;
  p99: number;
  baselineRate: number;
}

/** `count` serve processes on one fresh database: ROUNDS runs of the load spread over them, each with its baseline. */
async function measureProcesses(
  count: number,
  database: BenchDatabase,
  loads: LoadClient[],
  template: string,
  runPipelines: (seconds: number) => number,
): Promise<{ runs: ProcessRun[]; logSize: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'toolseal-bench-processes-'));
  const servers: ServeProcess[] = [];
  try {
    const args = (i: number): string[] => [
      '--database',
      database.url,
      '--port',
      '0',
      '--data',
      join(dir, `data-${i}`),
      '--keys',
      join(dir, 'keys'),
      '--origin',
      'http://127.0.0.1',
    ];
    // The first process migrates the database and creates the keys; the others start once it sequences.
    servers.push(await startServeProcess(args(0)));
    await waitForRole(servers[0]!, 'sequencer');
    for (let i = 1; i < count; i++) {
      const server = await startServeProcess(args(i));
      servers.push(server);
      await waitForRole(server, 'follower');
    }
    const token = (
      await runToolseal(['publisher', 'add', NAMESPACE, '--unverified-namespace'], {
        TOOLSEAL_DATABASE_URL: database.url,
      })
    ).trim();
    const jobs = (connectionsTotal: number, seconds: number): LoadJob[] =>
      servers.map((server, i) => ({
        kind: 'publish',
        url: server.url,
        path: '/v1/manifests',
        // The in-flight total split as evenly as it goes.
        connections: Math.floor(connectionsTotal / count) + (i < connectionsTotal % count ? 1 : 0),
        seconds,
        token,
        template,
        versionPrefix: `9.${i}.`, // each load generator counts its own versions
      }));
    const runAll = async (what: string, connectionsTotal: number, seconds: number): Promise<LoadResult[]> => {
      const results = await Promise.all(jobs(connectionsTotal, seconds).map((job, i) => loads[i]!.run(job)));
      for (const [i, result] of results.entries()) checkClean(`${what}, process ${i + 1} of ${count}`, result);
      return results;
    };
    await runAll(`${count} process(es) warm-up`, CONCURRENCY[0] * count, 1);
    await sleep(SETTLE_MILLIS);
    let before = runPipelines(PIPELINE_SECONDS);
    const runs: ProcessRun[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const results = await runAll(`${count} process(es)`, PROCESS_CONNECTIONS, PROCESS_SECONDS);
      await sleep(SETTLE_MILLIS);
      const after = runPipelines(PIPELINE_SECONDS);
      const perProcess = results.map((result) => result.okPerSecond);
      runs.push({
        okPerSecond: perProcess.reduce((a, b) => a + b, 0),
        perProcess,
        p50: median(results.map((result) => result.p50)),
        p99: Math.max(...results.map((result) => result.p99)),
        baselineRate: (before + after) / 2,
      });
      before = after;
    }
    const health = (await (await fetch(`${servers[0]!.url}/healthz`)).json()) as { logSize: number };
    return { runs, logSize: health.logSize };
  } finally {
    for (const server of servers.reverse()) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The several-process figure, or why there is none (no PostgreSQL server: PGlite is one process's). */
async function benchProcesses(upload: Buffer): Promise<string[]> {
  const template = templateOf(upload);
  const runPipelines = pipelineBaseline(template);
  const lines = [
    `  several serve processes on one fresh PostgreSQL database each (issue 16 §2): ${PROCESS_CONNECTIONS} requests in flight spread evenly over` +
      ` ${PROCESS_COUNTS.join(', ')} processes (one autocannon child per process), ${ROUNDS} runs x ${PROCESS_SECONDS} s each, each paired with the pipeline baseline`,
  ];
  const loads = Array.from({ length: Math.max(...PROCESS_COUNTS) }, () => new LoadClient());
  const figures: { count: number; rate: number; ratio: number }[] = [];
  try {
    runPipelines(0.5);
    for (const count of PROCESS_COUNTS) {
      const database = await openBenchDatabase();
      try {
        if (database.url.startsWith('pglite:')) {
          lines.push('    no PostgreSQL server answered: no several-process figure (PGlite is in one process)');
          return lines;
        }
        const { runs, logSize } = await measureProcesses(count, database, loads, template, runPipelines);
        const rate = median(runs.map((run) => run.okPerSecond));
        const ratio = median(runs.map((run) => run.okPerSecond / run.baselineRate));
        figures.push({ count, rate, ratio });
        lines.push(
          `    ${count} process(es): ${fmt(rate).padStart(6)} req/s  p50 ${fmt(median(runs.map((run) => run.p50)), 1)} ms` +
            `  p99 ${fmt(median(runs.map((run) => run.p99)), 1)} ms  ratio to the pipeline ${fmt(ratio, 3)}` +
            `  (rounds: ${runs.map((run) => `${fmt(run.okPerSecond)} = ${run.perProcess.map((r) => fmt(r)).join(' + ')}`).join('; ')}; ${fmt(logSize)} log leaves)`,
        );
      } finally {
        await database.drop();
      }
    }
  } finally {
    for (const load of loads) load.close();
  }
  const one = figures[0]!;
  lines.push(
    `    against 1 process: ${figures
      .slice(1)
      .map(
        (figure) =>
          `${figure.count} processes x${fmt(figure.ratio / one.ratio, 2)} (raw req/s x${fmt(figure.rate / one.rate, 2)})`,
      )
      .join(', ')} (ratios of the baseline-paired figures; raw: not corrected for the machine's drift)`,
    `    on ${availableParallelism()} cores this is a floor, not a scaling curve: the processes, their load generators and the database` +
      ' share the cores, and one process sequences every write',
  );
  return lines;
}

// ── the section ─────────────────────────────────────────────────────────

/** The upload with `@@VERSION@@` where its version goes (the load generator fills in a new one per request). */
function templateOf(upload: Buffer): string {
  const text = upload.toString('utf8');
  const versionMatch = /"version"\s*:\s*"[^"]*"/.exec(text);
  if (!versionMatch) throw new Error('the fixture manifest has no version');
  return text.replace(versionMatch[0], '"version": "@@VERSION@@"');
}

/** The pipeline baseline: runPipeline's rate (ops/s) over `seconds` on the bytes the publishes send. */
function pipelineBaseline(template: string): (seconds: number) => number {
  // Only the version differs from the HTTP uploads.
  const bodies = Array.from({ length: 256 }, (_, i) => Buffer.from(template.replace('@@VERSION@@', `7.0.${i}`)));
  return (seconds) => timeSync(seconds, (i) => runPipeline(bodies[i % bodies.length]!));
}

async function measure(targets: Target[], load: LoadClient, upload: Buffer): Promise<number[]> {
  const template = templateOf(upload);
  const runPipelines = pipelineBaseline(template);
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

/** Reads while publishes saturate the writer (issue 24 §4): each read's p99 under load against its idle p99. */
async function measureReadsUnderLoad(target: Target, upload: Buffer): Promise<string[]> {
  const reads = new LoadClient();
  const writes = new LoadClient();
  try {
    const name = (JSON.parse(upload.toString('utf8')) as { name: string }).name;
    const versions = await target.server.registry.listVersions(name);
    const digest = versions.at(-1)!.digest;
    const paths = [
      ['checkpoint', '/v1/log/checkpoint'],
      ['attestations by digest (store + inclusion proof)', `/v1/attestations/${digest}`],
    ] as const;
    const read = (path: string, seconds: number): LoadJob => ({
      kind: 'get',
      url: target.server.url,
      path,
      connections: 4,
      seconds,
    });
    const publish: LoadJob = {
      kind: 'publish',
      url: target.server.url,
      path: '/v1/manifests',
      connections: 64,
      seconds: READ_SECONDS + 1,
      token: target.token,
      template: templateOf(upload),
      versionPrefix: '8.0.',
    };
    const lines = [
      `  reads on ${target.label} while 64 publishes are in flight, against idle (4 readers, ${READ_SECONDS} s each):`,
    ];
    for (const [label, path] of paths) {
      const idle = await reads.run(read(path, READ_SECONDS));
      const [busy, writing] = await Promise.all([reads.run(read(path, READ_SECONDS)), writes.run(publish)]);
      await target.server.registry.drain();
      lines.push(
        `    ${label}: p99 idle ${fmt(idle.p99, 2)} ms, under load ${fmt(busy.p99, 2)} ms = ${fmt(busy.p99 / Math.max(idle.p99, 0.01), 2)}x` +
          ` (target <= 3); ${fmt(busy.okPerSecond)} reads/s alongside ${fmt(writing.okPerSecond)} publishes/s`,
      );
    }
    return lines;
  } finally {
    reads.close();
    writes.close();
  }
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
    for (const target of targets) lines.push(...(await describeTarget(target)));
    const [sqlite, postgres] = targets.map((t) =>
      Math.max(...[...t.runs.values()].map((list) => median(list.map((r) => r.result.okPerSecond)))),
    );
    lines.push(`  ${targets[1]!.label}/SQLite best throughput ${fmt(postgres! / sqlite!, 2)}`);
    lines.push(...(await measureReadsUnderLoad(targets[1]!, upload)));
  } finally {
    load.close();
    try {
      for (const target of targets) await target.close();
    } finally {
      await database.drop();
    }
  }
  lines.push(...(await benchProcesses(upload)));
  return lines;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of await benchPostgres()) console.log(line);
}

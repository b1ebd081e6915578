// Where the registry's event loop spends a publish (issue 24: "the resolution shows exactly which figure is not met
// and why, with the profile"): a registry as `toolseal serve` runs it (in this process, on SQLite or on a fresh
// PostgreSQL database), 64 publishes in flight from the HTTP bench's load generator (its own process), and the V8 CPU
// profile of this process's main thread (node:inspector) while they run, summed by where the code lives.
// Run alone: npx tsx scripts/profile-publish.ts [sqlite|postgres] [seconds]

import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { defaultPipelineWorkers, startRegistryServer } from '../src/server/index.ts';
import { LoadClient } from './bench-load-client.ts';

const MANIFEST_FILE = fileURLToPath(new URL('../manifests/payments.json', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVER_URL = process.env['TOOLSEAL_TEST_DATABASE_URL'] || 'postgres://postgres@127.0.0.1:5432/test';
const CONNECTIONS = 64;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

/** Where a frame's code lives: a package, a folder of src/, node's internals, or V8's own buckets. */
function placeOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const packaged = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packaged) return `npm:${packaged[1]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const path = url.replace(/^file:\/\//, '').replace(REPO_ROOT, '');
  const ours = /^src\/([^/]+)\/(.*)$/.exec(path);
  return ours ? `src/${ours[1]}` : path;
}

/** Who calls the heaviest native functions (writev, run, fsync…): their nearest JavaScript frames, by self time. */
function printNativeCallers(nodes: readonly ProfileNode[], share: (hits: number) => string): void {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, ProfileNode>();
  for (const node of nodes) for (const child of node.children ?? []) parentOf.set(child, node);
  const natives = new Map<string, number>();
  for (const node of nodes) {
    const { functionName, url } = node.callFrame;
    if (url === '' && !functionName.startsWith('(') && functionName !== '') {
      natives.set(functionName, (natives.get(functionName) ?? 0) + (node.hitCount ?? 0));
    }
  }
  for (const [name] of [...natives].sort((a, b) => b[1] - a[1]).slice(0, 3)) {
    const callers = new Map<string, number>();
    for (const node of nodes) {
      if (node.callFrame.functionName !== name || node.callFrame.url !== '' || !node.hitCount) continue;
      const chain: string[] = [];
      for (let up = parentOf.get(node.id); up && chain.length < 3; up = parentOf.get(up.id)) {
        const frame = byId.get(up.id)!.callFrame;
        if (frame.url === '' || frame.url.startsWith('node:')) continue;
        chain.push(`${frame.functionName || '(anonymous)'} ${placeOf(frame.url, '')}:${frame.lineNumber + 1}`);
      }
      const key = chain.join(' < ') || '(no JavaScript caller)';
      callers.set(key, (callers.get(key) ?? 0) + node.hitCount);
    }
    console.log(`  callers of ${name}:`);
    for (const [chain, hits] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 4))
      console.log(`    ${share(hits)}  ${chain}`);
  }
}

/** Runs of busy samples longer than 5 ms (what a request arriving then waits behind), by the frames they hold most. */
function printLongTasks(profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const frames = new Map<string, number>();
  let run: number[] = [];
  let runMicros = 0;
  let longRuns = 0;
  const flush = () => {
    if (runMicros > 5_000) {
      longRuns++;
      const seen = new Set<string>();
      for (const id of run) {
        for (let up: number | undefined = id; up !== undefined; up = parentOf.get(up)) {
          const f = byId.get(up)!.callFrame;
          if (f.url === '' || f.url.startsWith('node:')) continue;
          const key = `${f.functionName || '(anonymous)'} ${placeOf(f.url, '')}:${f.lineNumber + 1}`;
          if (!seen.has(key)) {
            seen.add(key);
            frames.set(key, (frames.get(key) ?? 0) + 1);
          }
        }
      }
    }
    run = [];
    runMicros = 0;
  };
  profile.samples.forEach((id, i) => {
    if (idle.has(id)) flush();
    else {
      run.push(id);
      runMicros += profile.timeDeltas[i] ?? 0;
    }
  });
  flush();
  console.log(`  busy runs over 5 ms: ${longRuns}; the frames in most of them:`);
  for (const [frame, count] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`    ${count}  ${frame}`);
}

async function openDatabase(kind: string): Promise<{ url?: string; drop(): Promise<void> }> {
  if (kind === 'sqlite') return { drop: async () => {} };
  const name = `toolseal_profile_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: SERVER_URL });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

async function main(): Promise<void> {
  const kind = process.argv[2] ?? 'postgres';
  const seconds = Number(process.argv[3] ?? 5);
  const database = await openDatabase(kind);
  const dir = mkdtempSync(join(tmpdir(), 'toolseal-profile-'));
  const load = new LoadClient();
  const session = new Session();
  try {
    const server = await startRegistryServer({
      dataDir: join(dir, 'data'),
      keysDir: join(dir, 'keys'),
      ...(database.url === undefined ? {} : { databaseUrl: database.url }),
      origin: 'http://127.0.0.1',
      port: 0,
      pipelineWorkers: defaultPipelineWorkers(),
    });
    const { token } = await server.registry.createPublisher('io.github.acme');
    const text = readFileSync(MANIFEST_FILE, 'utf8');
    const template = text.replace(/"version"\s*:\s*"[^"]*"/, '"version": "@@VERSION@@"');
    const job = (prefix: string, time: number) =>
      ({
        kind: 'publish',
        url: server.url,
        path: '/v1/manifests',
        connections: CONNECTIONS,
        seconds: time,
        token,
        template,
        versionPrefix: prefix,
      }) as const;
    await load.run(job('8.0.', 1)); // warm-up
    await server.registry.drain();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const started = process.cpuUsage();
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const result = await load.run(job('9.0.', seconds));
    delay.disable();
    const cpu = process.cpuUsage(started);
    const { profile } = await session.post('Profiler.stop');
    await server.registry.drain();
    const leaves = await server.store.getLogSize();
    const checkpoints = (await server.store.listCheckpoints()).length;
    await server.close();

    const nodes = profile.nodes as ProfileNode[];
    const total = nodes.reduce((sum, node) => sum + (node.hitCount ?? 0), 0);
    const byPlace = new Map<string, number>();
    const byFunction = new Map<string, number>();
    for (const node of nodes) {
      const hits = node.hitCount ?? 0;
      if (hits === 0) continue;
      const { functionName, url, lineNumber } = node.callFrame;
      const place = placeOf(url, functionName);
      byPlace.set(place, (byPlace.get(place) ?? 0) + hits);
      const where = `${functionName || '(anonymous)'} ${url === '' ? '' : `${placeOf(url, '')}:${lineNumber + 1}`}`;
      byFunction.set(where, (byFunction.get(where) ?? 0) + hits);
    }
    const share = (hits: number) => `${((100 * hits) / total).toFixed(1).padStart(5)}%`;
    const perPublish = (micros: number) => (micros / Math.max(1, result.ok)).toFixed(0);
    console.log(
      `${kind}: ${result.okPerSecond.toFixed(0)} publishes/s at ${CONNECTIONS} in flight for ${seconds} s` +
        ` (p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms); ${(leaves / Math.max(1, checkpoints)).toFixed(1)} leaves per checkpoint`,
    );
    console.log(
      `  this process's CPU per publish (main thread and pipeline workers): ${perPublish(cpu.user + cpu.system)} µs;` +
        ` main-thread samples: ${total}`,
    );
    // How long a request that arrives waits for the event loop (what reads under load wait for, issue 24 §4).
    const ms = (nanos: number) => (nanos / 1e6).toFixed(1);
    console.log(
      `  event-loop delay (under the profiler): p50 ${ms(delay.percentile(50))} ms, p99 ${ms(delay.percentile(99))} ms,` +
        ` max ${ms(delay.max)} ms`,
    );
    console.log('  main thread, self time by place:');
    for (const [place, hits] of [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, 20))
      console.log(`    ${share(hits)}  ${place}`);
    console.log('  main thread, self time by function (top 25):');
    for (const [where, hits] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25))
      console.log(`    ${share(hits)}  ${where}`);
    printNativeCallers(nodes, share);
    if (process.env['LONG_TASKS']) printLongTasks(profile as never);
  } finally {
    session.disconnect();
    load.close();
    rmSync(dir, { recursive: true, force: true });
    await database.drop();
  }
}

await main();

// The mirror bench (issue 16 §4): a registry's read side mirrored by `toolseal mirror` and served by nginx with the
// configuration of docs/deploy.md (taken from the document itself), against the direct server: fetch-by-version
// throughput with the same load generator as the HTTP bench (scripts/bench-http-load.ts, a forked autocannon).
// nginx (Debian package `nginx`) is optional: without the binary the section prints why it skipped it.

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mirrorRegistry } from '../src/mirror/mirror-registry.ts';
import { versionPath } from '../src/protocol/routes.ts';
import { type RunningRegistryServer, startRegistryServer } from '../src/server/index.ts';
import { fetchVerified } from '../src/verify/index.ts';
import type { LoadJob } from './bench-http-load.ts';
import { LoadClient } from './bench-load-client.ts';
import { median } from './bench-stats.ts';

const MANIFESTS = 200;
const CONNECTIONS = 10;
const ROUNDS = 3;
const SECONDS = 3;
const NAME = 'io.github.bench/mirror';

function fmt(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function findNginx(): string | undefined {
  for (const candidate of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx']) {
    if (existsSync(candidate)) return candidate;
  }
  try {
    return execFileSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** The `server { … }` block of docs/deploy.md, listening on 127.0.0.1:`port` over plain HTTP, rooted at `root`. */
async function documentedServerBlock(port: number, root: string): Promise<string> {
  const doc = await readFile(fileURLToPath(new URL('../docs/deploy.md', import.meta.url)), 'utf8');
  const block = /```nginx\n([\s\S]*?)```/.exec(doc)?.[1];
  if (block === undefined) throw new Error('docs/deploy.md has no nginx block');
  return block
    .replace(/listen 443 ssl;/, `listen 127.0.0.1:${port};`)
    .replace(/server_name [^;]+;/, 'server_name localhost;')
    .replace(/root [^;]+;/, `root ${root};`);
}

async function startNginx(binary: string, root: string, work: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const temp = (name: string): string => `${name}_temp_path ${join(work, name)};`;
  const config = [
    process.getuid?.() === 0 ? 'user root;' : '',
    'worker_processes 1;',
    'daemon off;',
    `pid ${join(work, 'nginx.pid')};`,
    `error_log ${join(work, 'error.log')} warn;`,
    'events { worker_connections 1024; }',
    'http {',
    '  access_log off;',
    // nginx closes a keep-alive connection after 1000 requests by default; autocannon counts that as an error.
    '  keepalive_requests 1000000;',
    `  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}`,
    await documentedServerBlock(port, root),
    '}',
  ].join('\n');
  const file = join(work, 'nginx.conf');
  await writeFile(file, config);
  const child = spawn(binary, ['-c', file, '-p', work], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    try {
      await fetch(`${url}/v1/log/key`);
      return { url, child };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  child.kill();
  throw new Error(`nginx did not answer: ${stderr}`);
}

/** The documented configuration answers like the registry, and a host verifies against it. */
async function checkNginxMirror(nginxUrl: string, registry: RunningRegistryServer, path: string): Promise<void> {
  const [direct, mirrored] = await Promise.all([fetch(`${registry.url}${path}`), fetch(`${nginxUrl}${path}`)]);
  const same = Buffer.from(await direct.arrayBuffer()).equals(Buffer.from(await mirrored.arrayBuffer()));
  if (!same || mirrored.headers.get('content-type') !== 'application/json') {
    throw new Error(`nginx does not serve ${path} as the registry does`);
  }
  const attestation = await fetch(`${nginxUrl}${path}/attestation`);
  if (attestation.headers.get('content-type') !== 'application/jose+json') throw new Error('attestation type');
  const missing = await fetch(`${nginxUrl}/v1/log/proof/consistency?from=1&to=2`);
  if (missing.status !== 404 || !(await missing.text()).includes('"NOT_FOUND"')) throw new Error('404 page');
  await fetchVerified(nginxUrl, `${NAME}@1.0.${MANIFESTS - 1}`);
}

export async function benchMirror(): Promise<string[]> {
  const work = await mkdtemp(join(tmpdir(), 'toolseal-bench-mirror-'));
  const registry = await startRegistryServer({ dataDir: ':memory:', keysDir: join(work, 'keys'), port: 0 });
  const lines: string[] = [];
  let nginx: ChildProcess | undefined;
  const load = new LoadClient();
  try {
    const { publisher } = await registry.registry.createPublisher('io.github.bench');
    for (let i = 0; i < MANIFESTS; i++) {
      const manifest = { name: NAME, version: `1.0.${i}`, tools: [{ name: 'run', inputSchema: { type: 'object' } }] };
      await registry.registry.publish(Buffer.from(JSON.stringify(manifest)), publisher);
    }
    const out = join(work, 'mirror');
    let started = performance.now();
    const first = await mirrorRegistry({ registry: registry.url, out });
    const firstMs = performance.now() - started;
    started = performance.now();
    await mirrorRegistry({ registry: registry.url, out });
    const idleMs = performance.now() - started;
    lines.push(
      `mirror: ${first.size} log entries (${MANIFESTS} manifests) into ${first.written.length} files in ${fmt(firstMs)} ms; ` +
        `a run with nothing new ${fmt(idleMs)} ms`,
    );
    const binary = findNginx();
    if (binary === undefined) {
      lines.push('mirror bench: nginx skipped (no nginx binary; Debian: apt-get install nginx)');
      return lines;
    }
    const nginxServer = await startNginx(binary, out, work);
    nginx = nginxServer.child;
    const path = versionPath(NAME, '1.0.7');
    await checkNginxMirror(nginxServer.url, registry, path);
    const job = (url: string): LoadJob => ({ kind: 'get', url, path, connections: CONNECTIONS, seconds: SECONDS });
    await load.run({ ...job(registry.url), seconds: 1 });
    await load.run({ ...job(nginxServer.url), seconds: 1 });
    const rates = { direct: [] as number[], nginx: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['direct', 'nginx'] as const) : (['nginx', 'direct'] as const);
      for (const which of order) {
        const result = await load.run(job(which === 'direct' ? registry.url : nginxServer.url));
        if (result.errors > 0 || Object.keys(result.statusCounts).some((status) => status !== '200')) {
          throw new Error(`GET ${which}: ${JSON.stringify(result.statusCounts)}, ${result.errors} errors`);
        }
        rates[which].push(result.okPerSecond);
      }
    }
    const direct = median(rates.direct);
    const served = median(rates.nginx);
    lines.push(
      `GET ${path} (${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${SECONDS} s, medians):`,
      `  direct toolseal (1 process)  ${fmt(direct).padStart(8)} req/s  (rounds: ${rates.direct.map((r) => fmt(r)).join(', ')})`,
      `  nginx mirror (1 worker)      ${fmt(served).padStart(8)} req/s  (rounds: ${rates.nginx.map((r) => fmt(r)).join(', ')})`,
      `  one nginx worker serves ${fmt(served / direct, 2)}x the direct server: about ${Math.ceil(served / direct)} direct process(es) to match it` +
        ' (2 shared cores with the load generator: a floor, not a scaling curve)',
    );
    return lines;
  } finally {
    load.close();
    nginx?.kill();
    await registry.close();
    await rm(work, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const line of await benchMirror()) console.log(line);
}

// The witness bench (issue 25 "Figures"): publishing over HTTP to a registry with three witnesses configured
// (`serve --witness-policy`, three real `toolseal witness serve` processes, as they run elsewhere in production;
// on this machine they still share its CPUs) against one with none, in the
// same run, alternating rounds (scripts/bench-stats.ts) so a noisy machine slows both alike. The figure: the
// witnessed registry's publish rate within 10% of the bare one; and that every witness cosigned the final checkpoint.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWitnessPolicy } from '../src/log/index.ts';
import { type RunningRegistryServer, startRegistryServer } from '../src/server/index.ts';
import { initWitness } from '../src/witness/index.ts';
import { measureAlternating, median } from './bench-stats.ts';

const NAMESPACE = 'io.github.bench-witness';
const ROUNDS = 4;
const SECONDS = 3;
const IN_FLIGHT = 16;
const WITNESSES = 3;
const CLI = new URL('../src/cli/main.ts', import.meta.url).pathname;

/** `toolseal witness serve` as a child process; resolves with its URL and vkey once it listens. */
function spawnWitness(dataDir: string, logKey: string): Promise<{ url: string; vkey: string; child: ChildProcess }> {
  const args = ['--import', 'tsx', CLI, 'witness', 'serve', '--data', dataDir, '--listen', '127.0.0.1:0'];
  const child = spawn(process.execPath, [...args, '--log', logKey], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      const vkey = /vkey: (\S+)/.exec(stdout)?.[1];
      if (url && vkey) resolve({ url, vkey, child });
    });
    child.once('exit', () => reject(new Error(`witness exited before listening: ${stderr}`)));
  });
}

interface Target {
  server: RunningRegistryServer;
  token: string;
  prefix: string;
}

function manifest(name: string): string {
  return JSON.stringify({
    name: `${NAMESPACE}/${name}`,
    version: '1.0.0',
    description: `Bench tool ${name}`,
    tools: [{ name: 'run', description: 'Runs it', inputSchema: { type: 'object' } }],
  });
}

/** Publishes per second over HTTP, IN_FLIGHT at a time, for about SECONDS. */
async function publishRate(target: Target, round: number): Promise<number> {
  let count = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < deadline) {
        const name = `${target.prefix}-${round}-${count++}`;
        const response = await fetch(`${target.server.url}/v1/manifests`, {
          method: 'POST',
          body: manifest(name),
          headers: { Authorization: `Bearer ${target.token}` },
        });
        if (response.status !== 201) throw new Error(`publish answered ${response.status}: ${await response.text()}`);
        await response.arrayBuffer();
      }
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

export async function benchWitness(): Promise<string[]> {
  const work = mkdtempSync(join(tmpdir(), 'toolseal-bench-witness-'));
  const closers: (() => Promise<void>)[] = [];
  try {
    const start = async (name: string, policyText?: string): Promise<RunningRegistryServer> => {
      const server = await startRegistryServer({
        dataDir: join(work, name, 'data'),
        keysDir: join(work, name, 'keys'),
        port: 0,
        ...(policyText === undefined ? {} : { witnessing: { policy: parseWitnessPolicy(policyText) } }),
      });
      closers.push(() => server.close());
      return server;
    };
    const bare = await start('bare');
    // The witnessed registry: its log key first, then three witnesses of it, then the registry with the policy.
    const first = await start('witnessed');
    const logKey = first.registry.log.verifierString;
    await closers.pop()?.();
    const witnesses: { url: string; vkey: string }[] = [];
    for (let i = 1; i <= WITNESSES; i++) {
      const dataDir = join(work, `witness-${i}`);
      initWitness(dataDir, `bench.example/w${i}`);
      const witness = await spawnWitness(dataDir, logKey);
      closers.push(async () => {
        witness.child.kill('SIGTERM');
      });
      witnesses.push(witness);
    }
    const policyText = [
      `log ${logKey}`,
      ...witnesses.map((w, i) => `witness W${i + 1} ${w.vkey} ${w.url}`),
      'group Q 2 W1 W2 W3',
      'quorum Q',
      '',
    ].join('\n');
    const witnessed = await start('witnessed', policyText);
    const targets = await Promise.all(
      [bare, witnessed].map(async (server, i) => ({
        server,
        token: (await server.registry.createPublisher(NAMESPACE)).token,
        prefix: i === 0 ? 'bare' : 'witnessed',
      })),
    );
    // Warm-up (JIT, SQLite pages, keep-alive sockets) on both.
    for (const target of targets) await publishRate(target, -1);
    let round = 0;
    const rates = await measureAlternating(
      ROUNDS,
      () => publishRate(targets[0] as Target, round++),
      () => publishRate(targets[1] as Target, round++),
    );
    const none = median(rates.first);
    const three = median(rates.second);
    const ratio = three / none;
    // Every witness catches up with the final checkpoint (the publishes never waited for them).
    const size = (await witnessed.registry.latestCheckpoint())?.size ?? 0;
    let cosigned = 0;
    for (let i = 0; i < 100; i++) {
      const health = (await (await fetch(`${witnessed.url}/healthz`)).json()) as {
        witnesses: { cosignedSize: number | null }[];
      };
      cosigned = health.witnesses.filter((w) => w.cosignedSize === size).length;
      if (cosigned === WITNESSES) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return [
      `publish over HTTP, ${IN_FLIGHT} in flight, median of ${ROUNDS} alternating ${SECONDS} s rounds:`,
      `  no witnesses     ${none.toFixed(0)} publishes/s   (rounds: ${rates.first.map((r) => r.toFixed(0)).join(', ')})`,
      `  3 witnesses      ${three.toFixed(0)} publishes/s   (rounds: ${rates.second.map((r) => r.toFixed(0)).join(', ')})`,
      `  ratio ${(ratio * 100).toFixed(1)}% — ${ratio >= 0.9 ? 'within 10%' : 'NOT within 10%'} (issue 25 figure)`,
      `  witnesses that cosigned the final checkpoint (size ${size}): ${cosigned} of ${WITNESSES}`,
    ];
  } finally {
    for (const close of closers.reverse()) await close();
    rmSync(work, { recursive: true, force: true });
  }
}

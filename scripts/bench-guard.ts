// Benchmark of `toolseal guard`: what the verifying proxy adds to a tools/call (and a tools/list) round trip.
// One run, one SDK Client configuration, one fixture server: N sequential calls straight to the fixture and
// N through `toolseal guard` in front of the same fixture, in alternating rounds; medians of the per-round means.
//
//   npx tsx scripts/bench-guard.ts

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { runPipeline } from '../src/pipeline/index.ts';
import { fixtureCommand, repoRoot, startTestRegistry, toolsealBin } from '../test/fixtures/guard-env.ts';
import { FIXTURE_MANIFEST_NAME, fixtureTools } from '../test/fixtures/mcp-tools.ts';
import { median } from './bench-stats.ts';

const CALLS_PER_ROUND = 200;
const ROUNDS = 10;
const WARMUP_CALLS = 200;
const LISTS_PER_ROUND = 20;
const VERSION = '1.0.0';

async function connect(command: string[]): Promise<Client> {
  const client = new Client({ name: 'bench-guard', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({ command: command[0]!, args: command.slice(1), cwd: repoRoot, stderr: 'ignore' }),
  );
  return client;
}

/** Mean milliseconds per operation over `count` sequential operations. */
async function timeSequential(count: number, operation: (i: number) => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await operation(i);
  return Number(process.hrtime.bigint() - start) / 1e6 / count;
}

const call = (client: Client, i: number): Promise<unknown> =>
  client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });

export async function benchGuard(): Promise<string[]> {
  const registry = await startTestRegistry();
  const clients: Client[] = [];
  try {
    const signed = runPipeline(
      Buffer.from(JSON.stringify({ name: FIXTURE_MANIFEST_NAME, version: VERSION, tools: fixtureTools })),
    );
    await registry.publish(signed.canonicalBytes);
    const server = fixtureCommand('faithful');
    const direct = await connect(server);
    clients.push(direct);
    const guarded = await connect([
      process.execPath,
      toolsealBin,
      'guard',
      '--manifest',
      `${FIXTURE_MANIFEST_NAME}@${VERSION}`,
      '--registry',
      registry.url,
      '--',
      ...server,
    ]);
    clients.push(guarded);

    // Sanity: the guard hands out the signed tools, and both paths answer a call the same way.
    const listed = await guarded.listTools();
    if (listed.tools.length !== fixtureTools.length)
      throw new Error(`guard listed ${listed.tools.length} tools, expected ${fixtureTools.length}`);
    const [viaDirect, viaGuard] = await Promise.all([call(direct, 0), call(guarded, 0)]);
    if (JSON.stringify(viaDirect) !== JSON.stringify(viaGuard))
      throw new Error('the guard changed a tools/call result');

    for (const client of [direct, guarded]) {
      await timeSequential(WARMUP_CALLS, (i) => call(client, i));
      await timeSequential(WARMUP_CALLS / 4, () => client.listTools());
    }
    const callMs = { direct: [] as number[], guard: [] as number[] };
    const listMs = { direct: [] as number[], guard: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['direct', 'guard'] as const) : (['guard', 'direct'] as const);
      for (const path of order) {
        const client = path === 'direct' ? direct : guarded;
        callMs[path].push(await timeSequential(CALLS_PER_ROUND, (i) => call(client, i)));
        listMs[path].push(await timeSequential(LISTS_PER_ROUND, () => client.listTools()));
      }
    }

    const format = (ms: number): string => ms.toFixed(3);
    const callDirect = median(callMs.direct);
    const callGuard = median(callMs.guard);
    const listDirect = median(listMs.direct);
    const listGuard = median(listMs.guard);
    return [
      `guard bench: ${ROUNDS} alternating rounds of ${CALLS_PER_ROUND} sequential tools/call (echo) and ${LISTS_PER_ROUND} tools/list (${fixtureTools.length} tools), SDK Client over stdio; medians of round means`,
      `tools/call  direct ${format(callDirect)} ms/call   guard ${format(callGuard)} ms/call   overhead ${format(callGuard - callDirect)} ms   ratio ${(callGuard / callDirect).toFixed(2)}`,
      `tools/list  direct ${format(listDirect)} ms/list   guard ${format(listGuard)} ms/list   overhead ${format(listGuard - listDirect)} ms   ratio ${(listGuard / listDirect).toFixed(2)}`,
      `  (the guard path has one more process and two more pipe hops per round trip; tools/list includes checking every tool against the signed bytes)`,
    ];
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    await registry.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await benchGuard()) console.log(line);
}

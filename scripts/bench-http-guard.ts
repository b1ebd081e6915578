// Benchmark of the HTTP guard (issue 14 §5): what it adds to a tools/call and a tools/list round trip over Streamable
// HTTP. One run, one SDK Client configuration, one SDK server (stateful, on 127.0.0.1): sequential operations
// straight to the server and through the guard in front of it, in alternating rounds; p50 of every operation.
// The guard runs in this process (as the server and the client do): no extra process, one extra loopback hop.
//
//   npx tsx scripts/bench-http-guard.ts

import { setMaxListeners } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpGuard } from '../src/guard/http-guard.ts';
import { ToolGuard } from '../src/guard/index.ts';
import { localSigned } from '../test/guard/guard-helpers.ts';
import { startHttpTestServer } from '../test/guard/http-guard-helpers.ts';
import { fixtureTools } from '../test/fixtures/mcp-tools.ts';
import { median } from './bench-stats.ts';

const ROUNDS = 10;
const CALLS_PER_ROUND = 200;
const LISTS_PER_ROUND = 20;
const WARMUP = 200;

type Path = 'direct' | 'guard';

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'bench-http-guard', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** Milliseconds of each of `count` sequential operations, appended to `into`. */
async function timeEach(count: number, operation: (i: number) => Promise<unknown>, into: number[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await operation(i);
    into.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
}

const call = (client: Client, i: number): Promise<unknown> =>
  client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });

async function measure(json: boolean): Promise<string[]> {
  const server = await startHttpTestServer({ json });
  const guard = await startHttpGuard({
    createPolicy: () => new ToolGuard(localSigned.canonicalBytes, { requireListed: true }),
    upstream: server.url,
    onFinding: (finding) => {
      throw new Error(`unexpected finding in the bench: ${JSON.stringify(finding)}`);
    },
  });
  const clients: Record<Path, Client> = { direct: await connect(server.url), guard: await connect(guard.url) };
  try {
    const listed = await clients.guard.listTools();
    if (listed.tools.length !== fixtureTools.length)
      throw new Error(`guard listed ${listed.tools.length} tools, expected ${fixtureTools.length}`);
    for (const path of ['direct', 'guard'] as const) {
      await timeEach(WARMUP, (i) => call(clients[path], i), []);
      await timeEach(WARMUP / 4, () => clients[path].listTools(), []);
    }
    const calls: Record<Path, number[]> = { direct: [], guard: [] };
    const lists: Record<Path, number[]> = { direct: [], guard: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order: Path[] = round % 2 === 0 ? ['direct', 'guard'] : ['guard', 'direct'];
      for (const path of order) {
        await timeEach(CALLS_PER_ROUND, (i) => call(clients[path], i), calls[path]);
        await timeEach(LISTS_PER_ROUND, () => clients[path].listTools(), lists[path]);
      }
    }
    const format = (ms: number): string => ms.toFixed(3);
    const line = (what: string, samples: Record<Path, number[]>): string => {
      const direct = median(samples.direct);
      const guarded = median(samples.guard);
      return `${what}  direct ${format(direct)} ms   guard ${format(guarded)} ms   added ${format(guarded - direct)} ms (p50)`;
    };
    return [`answers as ${json ? 'JSON' : 'SSE'}:`, `  ${line('tools/call', calls)}`, `  ${line('tools/list', lists)}`];
  } finally {
    for (const client of Object.values(clients)) await client.close().catch(() => undefined);
    await guard.close();
    await server.close();
  }
}

export async function benchHttpGuard(): Promise<string[]> {
  // The SDK's StreamableHTTPClientTransport hands one AbortSignal to every fetch of a session, and undici lets go of
  // each listener only when its request is collected: thousands of sequential calls pass Node's warning threshold
  // (a client-side artefact of the bench's long session; the guard removes its own listeners).
  setMaxListeners(0);
  return [
    `http guard bench: ${ROUNDS} alternating rounds of ${CALLS_PER_ROUND} sequential tools/call (echo) and ${LISTS_PER_ROUND} tools/list (${fixtureTools.length} tools), SDK Client on Streamable HTTP, the guard in process; p50 of every operation (target: ≤ 0.3 ms added per call)`,
    ...(await measure(true)),
    ...(await measure(false)),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await benchHttpGuard()) console.log(line);
}

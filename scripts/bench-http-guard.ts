// Benchmark of the HTTP guard (issue 14 §5): what it adds to a tools/call and a tools/list round trip over Streamable
// HTTP. One run, one SDK Client configuration, one SDK server (stateful, on 127.0.0.1): sequential operations
// straight to the server, through the HTTP guard in front of it (with the policy `toolseal guard --upstream` builds:
// a GuardSession whose CallGate checks every call's arguments; and with a bare ToolGuard, as this bench measured
// first), and through the in-process wrapper (GuardedClient, as guardClient builds it) on the same transport, in
// rounds whose order rotates; p50 of every operation. Also a bare pass-through proxy on the same HTTP stack, which
// checks nothing: the cost of the extra hop alone. The guard runs in this process (as the server and the client do):
// no extra process, one extra loopback hop.
//
//   npx tsx scripts/bench-http-guard.ts

import { setMaxListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallGate } from '../src/guard/core/call-gate.ts';
import { startHttpGuard } from '../src/guard/http/http-guard.ts';
import { selectClientResponseHeaders, selectUpstreamRequestHeaders } from '../src/guard/http/http-headers.ts';
import { createPooledUpstream, readReadableWithin, Stop } from '../src/guard/http/http-upstream.ts';
import { GuardedClient, GuardSession, ToolGuard } from '../src/guard/index.ts';
import { localSigned } from '../test/guard/guard-helpers.ts';
import { startHttpTestServer } from '../test/guard/http/http-guard-helpers.ts';
import { fixtureTools } from '../test/fixtures/mcp-tools.ts';
import { median } from './bench-stats.ts';

const ROUNDS = 10;
const CALLS_PER_ROUND = 200;
const LISTS_PER_ROUND = 20;
const WARMUP = 200;

const PATHS = ['direct', 'bare-proxy', 'guard', 'guard-toolguard', 'in-process'] as const;
type Path = (typeof PATHS)[number];
/** What the bench calls on each path: a bare SDK Client, or the in-process wrapper around one. */
type Caller = Pick<Client, 'callTool' | 'listTools' | 'close'>;

/** The registry origin the CallGate is given (its argument checks do not use it). */
const GATE_REGISTRY = 'http://127.0.0.1';

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: 'bench-http-guard', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** The in-process wrapper as guardClient builds it (ToolGuard with requireListed, a CallGate), without a registry. */
async function connectGuarded(url: string): Promise<GuardedClient> {
  const guarded = new GuardedClient(
    new Client({ name: 'bench-http-guard', version: '1.0.0' }),
    new ToolGuard(localSigned.canonicalBytes, { requireListed: true }),
    { gate: await CallGate.open({ signedBytes: localSigned.canonicalBytes, registry: GATE_REGISTRY }) },
  );
  await guarded.connect(new StreamableHTTPClientTransport(new URL(url)));
  return guarded;
}

/**
 * The floor: a pass-through proxy on the guard's own HTTP stack (node:http server, the pooled upstream, the guard's
 * header selection) that checks nothing, so `guard − bare proxy` is what the guard's checks cost.
 */
async function startBareProxy(upstreamUrl: string): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = createPooledUpstream(new URL(upstreamUrl));
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readReadableWithin(req, 1 << 22, () => new RangeError()) : undefined;
      const answer = await upstream.send({
        method: req.method as 'GET' | 'POST' | 'DELETE',
        headers: selectUpstreamRequestHeaders(req.headers),
        ...(body === undefined ? {} : { body }),
        stop: new Stop(),
      });
      res.writeHead(answer.status, selectClientResponseHeaders(answer.headers));
      if (answer.body === null) res.end();
      else await pipeline(answer.body, res);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        upstream.close();
      }),
  };
}

/** Every path once per round, in an order that rotates (and reverses every other round) so drift hits all alike. */
function orderOf(round: number): Path[] {
  const rotated = PATHS.map((_, index) => PATHS[(index + round) % PATHS.length]!);
  return Math.floor(round / PATHS.length) % 2 === 0 ? rotated : rotated.reverse();
}

/** Milliseconds of each of `count` sequential operations, appended to `into`. */
async function timeEach(count: number, operation: (i: number) => Promise<unknown>, into: number[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    await operation(i);
    into.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
}

const call = (client: Caller, i: number): Promise<unknown> =>
  client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });

async function measure(json: boolean): Promise<string[]> {
  const server = await startHttpTestServer({ json });
  const onFinding = (finding: unknown): void => {
    throw new Error(`unexpected finding in the bench: ${JSON.stringify(finding)}`);
  };
  const gate = await CallGate.open({ signedBytes: localSigned.canonicalBytes, registry: GATE_REGISTRY });
  const guard = await startHttpGuard({
    createPolicy: () => new GuardSession(new ToolGuard(localSigned.canonicalBytes, { requireListed: true }), gate),
    upstream: server.url,
    onFinding,
    onEvent: onFinding,
  });
  const bareGuard = await startHttpGuard({
    createPolicy: () => new ToolGuard(localSigned.canonicalBytes, { requireListed: true }),
    upstream: server.url,
    onFinding,
  });
  const bareProxy = await startBareProxy(server.url);
  const clients: Record<Path, Caller> = {
    direct: await connect(server.url),
    'bare-proxy': await connect(bareProxy.url),
    guard: await connect(guard.url),
    'guard-toolguard': await connect(bareGuard.url),
    'in-process': await connectGuarded(server.url),
  };
  try {
    for (const path of PATHS) {
      const listed = await clients[path].listTools();
      if (listed.tools.length !== fixtureTools.length)
        throw new Error(`${path} listed ${listed.tools.length} tools, expected ${fixtureTools.length}`);
    }
    for (const path of PATHS) {
      await timeEach(WARMUP, (i) => call(clients[path], i), []);
      await timeEach(WARMUP / 4, () => clients[path].listTools(), []);
    }
    const calls = Object.fromEntries(PATHS.map((path) => [path, [] as number[]])) as Record<Path, number[]>;
    const lists = Object.fromEntries(PATHS.map((path) => [path, [] as number[]])) as Record<Path, number[]>;
    for (let round = 0; round < ROUNDS; round++) {
      for (const path of orderOf(round)) {
        await timeEach(CALLS_PER_ROUND, (i) => call(clients[path], i), calls[path]);
        await timeEach(LISTS_PER_ROUND, () => clients[path].listTools(), lists[path]);
      }
    }
    const format = (ms: number): string => ms.toFixed(3);
    const line = (what: string, samples: Record<Path, number[]>): string[] => {
      const direct = median(samples.direct);
      const added = (path: Path): string =>
        `${format(median(samples[path]))} ms, added ${format(median(samples[path]) - direct)} ms`;
      return [
        `  ${what}  direct ${format(direct)} ms (p50)`,
        `    a bare pass-through proxy (the hop alone)         ${added('bare-proxy')}`,
        `    HTTP guard (GuardSession + CallGate, as the CLI)  ${added('guard')}`,
        `    HTTP guard (ToolGuard alone)                      ${added('guard-toolguard')}`,
        `    in-process GuardedClient vs the bare client       ${added('in-process')}`,
      ];
    };
    return [`answers as ${json ? 'JSON' : 'SSE'}:`, ...line('tools/call', calls), ...line('tools/list', lists)];
  } finally {
    for (const client of Object.values(clients)) await client.close().catch(() => undefined);
    await guard.close();
    await bareGuard.close();
    await bareProxy.close();
    await server.close();
  }
}

export async function benchHttpGuard(): Promise<string[]> {
  // The SDK's StreamableHTTPClientTransport hands one AbortSignal to every fetch of a session, and undici lets go of
  // each listener only when its request is collected: thousands of sequential calls pass Node's warning threshold
  // (a client-side artefact of the bench's long session; the guard removes its own listeners).
  setMaxListeners(0);
  return [
    `http guard bench: ${ROUNDS} rounds (order rotating) of ${CALLS_PER_ROUND} sequential tools/call (echo) and ${LISTS_PER_ROUND} tools/list (${fixtureTools.length} tools) per path, SDK Client on Streamable HTTP, the guard in process; p50 of every operation (target: ≤ 0.3 ms added per call through the HTTP guard)`,
    ...(await measure(true)),
    ...(await measure(false)),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await benchHttpGuard()) console.log(line);
}

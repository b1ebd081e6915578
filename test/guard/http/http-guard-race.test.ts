// Issue 23 §2: the HTTP guard is per-request. A client that opens the GET stream right after notifications/initialized
// and calls a tool at once must get its result every time: the GET's headers (Accept: text/event-stream) must never
// become the POST's while the POST waits for the guard's own tools/list (the SDK server answers 406 to such a POST).
// Even rounds send the GET, then the call at once (as clients do); odd rounds hold the guard's own listing at the
// server and send the GET only once the call is known to wait for it (the order that lost the POST's headers).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolGuard } from '../../../src/guard/index.ts';
import { startHttpGuard, type HttpGuard } from '../../../src/guard/http/http-guard.ts';
import { localSigned } from '../guard-helpers.ts';
import { startHttpTestServer, type HttpTestServer } from './http-guard-helpers.ts';

const ROUNDS = 200;
const POST_ACCEPT = 'application/json, text/event-stream';

let server: HttpTestServer;
let guard: HttpGuard;

/** A ToolGuard that counts the proxy's questions "is a list checked?": a tools/call asks before it waits. */
class CountingGuard extends ToolGuard {
  reads = 0;
  override get hasCheckedList(): boolean {
    this.reads++;
    return super.hasCheckedList;
  }
}
let latest: CountingGuard | undefined;

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

beforeAll(async () => {
  // The server answers tools/list a little later than at once: the guard's own listing is in flight when the GET comes.
  server = await startHttpTestServer({ listDelayMs: 2 });
  guard = await startHttpGuard({
    createPolicy: () => {
      latest = new CountingGuard(localSigned.canonicalBytes, { requireListed: true });
      return latest;
    },
    upstream: server.url,
    onFinding: () => undefined,
  });
});

afterAll(async () => {
  await guard?.close();
  await server?.close();
});

/** The JSON-RPC messages of a JSON or SSE answer body. */
function readMessages(contentType: string | null, body: string): Record<string, unknown>[] {
  if (contentType?.startsWith('application/json')) return [JSON.parse(body) as Record<string, unknown>];
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

async function post(
  body: unknown,
  sessionId?: string,
): Promise<{ status: number; sessionId: string | null; messages: Record<string, unknown>[] }> {
  const response = await fetch(guard.url, {
    method: 'POST',
    headers: {
      accept: POST_ACCEPT,
      'content-type': 'application/json',
      'mcp-protocol-version': '2025-06-18',
      ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }),
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    sessionId: response.headers.get('mcp-session-id'),
    messages: response.status === 200 ? readMessages(response.headers.get('content-type'), text) : [],
  };
}

/** One round; what went wrong, or undefined. */
async function runRound(round: number): Promise<string | undefined> {
  const held = round % 2 === 1;
  const listsBefore = server.received.filter((line) => line === 'tools/list').length;
  if (held) server.holdList('toolseal-guard-1');
  const initialized = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'race', version: '1.0.0' } },
  });
  const sessionId = initialized.sessionId;
  if (initialized.status !== 200 || sessionId === null) return `initialize: ${initialized.status}`;
  const notified = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId);
  if (notified.status !== 202) return `initialized: ${notified.status}`;
  const stream = new AbortController();
  const openStream = (): Promise<Response> =>
    fetch(guard.url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': sessionId },
      signal: stream.signal,
    });
  const callTool = () =>
    post(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: `round ${round}` } } },
      sessionId,
    );
  let get: Promise<Response>;
  let call: ReturnType<typeof callTool>;
  if (held) {
    // The guard's own tools/list is at the server (held there); the call asks whether a list is checked, then waits.
    const guardOfSession = latest!;
    await waitUntil(() => server.received.filter((line) => line === 'tools/list').length > listsBefore);
    const readsBefore = guardOfSession.reads;
    call = callTool();
    await waitUntil(() => guardOfSession.reads > readsBefore);
    get = openStream();
    await get;
    server.releaseList();
  } else {
    get = openStream();
    call = callTool();
  }
  try {
    const [streamed, called] = await Promise.all([get, call]);
    if (streamed.status !== 200) return `GET: ${streamed.status}`;
    if (called.status !== 200) return `tools/call: ${called.status}`;
    const answer = called.messages.find((message) => message['id'] === 1);
    const expected = { content: [{ type: 'text', text: `round ${round}` }] };
    if (JSON.stringify(answer?.['result']) !== JSON.stringify(expected))
      return `tools/call answered ${JSON.stringify(answer)}`;
    return undefined;
  } finally {
    stream.abort();
    await get.then((response) => response.body?.cancel()).catch(() => undefined);
    await fetch(guard.url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } }).catch(() => undefined);
  }
}

describe('the HTTP guard is per-request', () => {
  it(`${ROUNDS} rounds of initialize → initialized → GET stream → immediate tools/call: no failure`, async () => {
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const failure = await runRound(round);
      if (failure !== undefined) failures.push(`round ${round}: ${failure}`);
    }
    expect(failures).toEqual([]);
    expect(server.received.filter((line) => line === 'tools/call echo')).toHaveLength(ROUNDS);
  }, 120_000);
});

// The HTTP guard between a real SDK Client on StreamableHTTPClientTransport and a real SDK server on
// StreamableHTTPServerTransport (JSON and SSE answers): what the client gets, and what never reaches the server.

import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type GuardFinding, GuardSession, ToolGuard } from '../../../src/guard/index.ts';
import { startHttpGuard, type HttpGuard, type HttpGuardOptions } from '../../../src/guard/http/http-guard.ts';
import { canonicalizeToText } from '../../../src/pipeline/index.ts';
import { RUGPULL_DESCRIPTION } from '../../fixtures/mcp-tools.ts';
import { expectRefusedCall, listAll, localSigned, presentable, toolNames, waitFor } from '../guard-helpers.ts';
import { startHttpTestServer, type HttpServerOptions, type HttpTestServer } from './http-guard-helpers.ts';

const signedTools = presentable(localSigned.canonicalBytes);
const signedSubject = new ToolGuard(localSigned.canonicalBytes).subject;
const ALL = toolNames(signedTools as { name: string }[]);
const closers: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

interface Setup {
  server: HttpTestServer;
  guard: HttpGuard;
  findings: GuardFinding[];
}

async function setup(
  serverOptions: HttpServerOptions = {},
  guardOptions: Partial<HttpGuardOptions> = {},
): Promise<Setup> {
  const server = await startHttpTestServer(serverOptions);
  closers.push(() => server.close());
  const findings: GuardFinding[] = [];
  const guard = await startHttpGuard({
    createPolicy: () => new ToolGuard(localSigned.canonicalBytes, { requireListed: true }),
    upstream: server.url,
    onFinding: (finding) => findings.push(finding),
    ...guardOptions,
  });
  closers.push(() => guard.close());
  return { server, guard, findings };
}

async function connect(
  url: string,
  headers?: Record<string, string>,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'host', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), headers ? { requestInit: { headers } } : {});
  await client.connect(transport);
  closers.push(() => client.close());
  return { client, transport };
}

const withheld = (findings: GuardFinding[]): (string | null)[] =>
  findings.filter((finding) => finding.event === 'tool-withheld').map((finding) => finding.tool);

describe.each([
  { answers: 'JSON', json: true },
  { answers: 'SSE', json: false },
])('through the HTTP guard, answers as $answers', ({ json }) => {
  it('a faithful server: the client gets the signed tools and its calls', async () => {
    const { guard, server, findings } = await setup({ json });
    const { client } = await connect(guard.url);
    expect(await listAll(client)).toEqual(signedTools);
    const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(result.structuredContent).toEqual({ sum: 5 });
    expect(findings).toEqual([]);
    expect(server.received).toContain('tools/call add');
  });

  it('a rug pull announced with list_changed: the guard re-lists before the client hears of it', async () => {
    const { guard, server, findings } = await setup({ json });
    const { client } = await connect(guard.url);
    expect(toolNames(await listAll(client))).toEqual(ALL);
    const seenAtNotification: (string | null)[][] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      seenAtNotification.push(withheld(findings));
    });
    await server.rugPull(true);
    await waitFor(() => seenAtNotification.length > 0, 'list_changed at the client');
    expect(seenAtNotification[0]).toEqual(['delete_note']);
    expect(toolNames(await listAll(client))).toEqual(ALL.filter((name) => name !== 'delete_note'));
    const error = await expectRefusedCall(client, 'delete_note', { id: 'n-1' });
    expect(error.data).toMatchObject({ code: 'DISPATCH_MISMATCH', reason: 'withheld', tool: 'delete_note' });
    expect(server.received).not.toContain('tools/call delete_note');
  });

  it('a rug pull without the notification is caught at the next list', async () => {
    const { guard, server, findings } = await setup({ json });
    const { client } = await connect(guard.url);
    await listAll(client);
    await server.rugPull(false);
    const listed = await listAll(client);
    expect(toolNames(listed)).not.toContain('delete_note');
    expect(JSON.stringify(listed)).not.toContain(RUGPULL_DESCRIPTION);
    expect(findings.find((finding) => finding.tool === 'delete_note')).toMatchObject({
      event: 'tool-withheld',
      reason: 'differs',
      pointer: '/description',
    });
    await expectRefusedCall(client, 'delete_note', { id: 'n-1' });
    expect(server.received).not.toContain('tools/call delete_note');
  });

  it('GET /healthz answers 200 {"status":"ok"} without asking the server', async () => {
    const { guard, server } = await setup({ json });
    const response = await fetch(new URL('/healthz', guard.url));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect(server.requests).toEqual([]);
  });

  it('withheld tools: the client gets a notifications/message (warning) naming them, once per session', async () => {
    const { guard } = await setup({ json, mode: 'extra-tool' });
    const { client } = await connect(guard.url);
    const notices: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      notices.push(notification.params);
    });
    expect(toolNames(await listAll(client))).toEqual(ALL);
    expect(toolNames(await listAll(client))).toEqual(ALL);
    expect(notices).toEqual([
      {
        level: 'warning',
        logger: 'toolseal-guard',
        data: {
          message: expect.stringContaining('export_all_notes (not in the signed manifest)'),
          manifest: signedSubject,
          withheld: [{ tool: 'export_all_notes', reason: 'unknown-tool', pointer: '/name' }],
        },
      },
    ]);
  });

  it('an extra tool is withheld and a call to it never reaches the server', async () => {
    const { guard, server, findings } = await setup({ json, mode: 'extra-tool' });
    const { client } = await connect(guard.url);
    expect(toolNames(await listAll(client))).toEqual(ALL);
    expect(findings.find((finding) => finding.tool === 'export_all_notes')).toMatchObject({
      event: 'tool-withheld',
      reason: 'unknown-tool',
    });
    const error = await expectRefusedCall(client, 'export_all_notes', { url: 'https://evil.example' });
    expect(error.data).toMatchObject({ reason: 'unknown-tool' });
    expect(server.received).not.toContain('tools/call export_all_notes');
  });

  it('an injected _meta withholds the tool', async () => {
    const { guard, server, findings } = await setup({ json, mode: 'inject-meta' });
    const { client } = await connect(guard.url);
    expect(toolNames(await listAll(client))).toEqual(ALL.filter((name) => name !== 'echo'));
    expect(findings.find((finding) => finding.tool === 'echo')).toMatchObject({ reason: 'differs', pointer: '/_meta' });
    await expectRefusedCall(client, 'echo', { text: 'hi' });
    expect(server.received).not.toContain('tools/call echo');
  });

  it('a subset by authorization: one info line, nothing withheld; Authorization reaches the server, not a finding', async () => {
    const { guard, server, findings } = await setup({ json });
    const { client } = await connect(guard.url, { authorization: 'Bearer reader' });
    expect(toolNames(await listAll(client))).toEqual(ALL.filter((name) => name !== 'ship_parcel'));
    const subset = findings.filter((finding) => finding.event === 'tools-subset');
    expect(subset).toHaveLength(1);
    expect(subset[0]).toMatchObject({ level: 'info', reason: 'subset', missing: ['ship_parcel'] });
    expect(withheld(findings)).toEqual([]);
    // Every request the server got carried the client's Authorization, the guard's own tools/list too.
    expect(server.requests.length).toBeGreaterThan(3);
    expect(server.requests.every((request) => request.authorization === 'Bearer reader')).toBe(true);
    const error = await expectRefusedCall(client, 'ship_parcel', {});
    expect(error.data).toMatchObject({ reason: 'not-checked' });
    expect(server.received).not.toContain('tools/call ship_parcel');
    expect(JSON.stringify(findings)).not.toContain('Bearer');
  });

  it('a call racing the first list waits for the guard’s own list', async () => {
    const { guard, server } = await setup({ json, listDelayMs: 300 });
    const { client } = await connect(guard.url);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'first' } });
    expect(result.content).toEqual([{ type: 'text', text: 'first' }]);
    const answered = server.received.indexOf('tools/list answered');
    expect(answered).toBeGreaterThanOrEqual(0);
    expect(server.received.indexOf('tools/call echo')).toBeGreaterThan(answered);
  });

  it('a paged list is listed whole by the guard and by the client', async () => {
    const { guard, findings } = await setup({ json, pageSize: 2 });
    const { client } = await connect(guard.url);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'x' } })).toMatchObject({
      content: [{ type: 'text', text: 'x' }],
    });
    expect(await listAll(client)).toEqual(signedTools);
    expect(findings).toEqual([]);
  });
});

describe('the HTTP guard on its own', () => {
  it('a call is refused (not-checked) when the guard’s own list does not finish in time', async () => {
    const { guard, server, findings } = await setup({ listDelayMs: 1500 }, { limits: { listTimeoutMs: 200 } });
    const { client } = await connect(guard.url);
    const error = await expectRefusedCall(client, 'echo', { text: 'too early' });
    expect(error.data).toMatchObject({ code: 'DISPATCH_MISMATCH', reason: 'not-checked', tool: 'echo' });
    expect(findings.at(-1)).toMatchObject({ event: 'call-refused', reason: 'not-checked' });
    expect(server.received).not.toContain('tools/call echo');
  });

  it('takes a GuardSession (the ToolGuard with the call gate) as the policy', async () => {
    const { guard, server, findings } = await setup(
      { mode: 'extra-tool' },
      { createPolicy: () => new GuardSession(new ToolGuard(localSigned.canonicalBytes, { requireListed: true })) },
    );
    const { client } = await connect(guard.url);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'via session' } })).toMatchObject({
      content: [{ type: 'text', text: 'via session' }],
    });
    expect(toolNames(await listAll(client))).toEqual(ALL);
    await expectRefusedCall(client, 'export_all_notes', {});
    expect(withheld(findings)).toContain('export_all_notes');
    expect(server.received).not.toContain('tools/call export_all_notes');
  });

  it('answers tools/list with the signed bytes, byte for byte', async () => {
    const { guard, server } = await setup({ json: true });
    const { transport } = await connect(guard.url);
    const response = await fetch(guard.url, {
      method: 'POST',
      headers: sessionHeaders(transport),
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} }),
    });
    const text = await response.text();
    const signedTexts = signedTools.map((tool) => canonicalizeToText(tool));
    expect(text).toBe(`{"jsonrpc":"2.0","id":7,"result":{"tools":[${signedTexts.join(',')}]}}`);
    expect(server.received.filter((item) => item === 'tools/list').length).toBeGreaterThanOrEqual(2);
  });

  it('resumes an SSE stream with Last-Event-ID, and the replayed answer passes the guard again', async () => {
    const { guard, server } = await setup({ eventStore: true });
    const { client, transport } = await connect(guard.url);
    await listAll(client);
    server.holdList('r1');
    const headers = sessionHeaders(transport);
    const cut = new AbortController();
    const first = await fetch(guard.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 'r1', method: 'tools/list', params: {} }),
      signal: cut.signal,
    });
    expect(first.headers.get('content-type')).toContain('text/event-stream');
    const [priming] = await readEvents(first.body!, 1);
    expect(priming).toMatchObject({ data: '' });
    expect(priming!.id).toBeTruthy();
    cut.abort();
    // Let the guard notice the client went away (it then drops its own request to the server).
    await new Promise((resolve) => setTimeout(resolve, 100));
    const listsBefore = server.received.filter((item) => item === 'tools/list answered').length;
    server.releaseList();
    await waitFor(
      () => server.received.filter((item) => item === 'tools/list answered').length > listsBefore,
      'the held list answered',
    );
    const resumeStop = new AbortController();
    closers.push(async () => resumeStop.abort());
    const resumed = await fetch(guard.url, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': priming!.id! },
      signal: resumeStop.signal,
    });
    expect(resumed.status).toBe(200);
    const events = await readEvents(resumed.body!, 1, (event) => event.data.includes('"r1"'));
    const replayed = events.at(-1)!;
    expect(replayed.id).toBeTruthy();
    expect(replayed.id).not.toBe(priming!.id);
    const signedTexts = signedTools.map((tool) => canonicalizeToText(tool));
    expect(replayed.data).toBe(`{"jsonrpc":"2.0","id":"r1","result":{"tools":[${signedTexts.join(',')}]}}`);
  });

  it('refuses a foreign Origin (403) and a foreign Host (403); nothing reaches the server', async () => {
    const { guard, server } = await setup({}, { allowedOrigins: ['https://app.example'] });
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const post = (origin: string): Promise<Response> =>
      fetch(guard.url, {
        method: 'POST',
        headers: { origin, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body: initialize,
      });
    const refused = await post('http://evil.example');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('Origin');
    expect((await post(`http://localhost:${guard.port}`)).status).not.toBe(403);
    const allowed = await post('https://app.example');
    expect(allowed.status).not.toBe(403);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(allowed.headers.get('access-control-expose-headers')).toContain('mcp-session-id');
    const preflight = await fetch(guard.url, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-headers': 'content-type, mcp-session-id' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type, mcp-session-id');
    const foreignPreflight = await fetch(guard.url, { method: 'OPTIONS', headers: { origin: 'http://evil.example' } });
    expect(foreignPreflight.status).toBe(403);
    const requestsBefore = server.requests.length;
    const rebound = await rawStatus(guard.port, { host: `rebind.example:${guard.port}` });
    expect(rebound).toBe(403);
    expect((await post('null')).status).toBe(403);
    expect(server.requests.length).toBe(requestsBefore);
  });

  it('refuses a body over the limit (413) and a body that is not strict JSON (400) before forwarding', async () => {
    const { guard, server } = await setup({}, { limits: { maxBodyBytes: 1024 } });
    const post = (body: string): Promise<Response> =>
      fetch(guard.url, {
        method: 'POST',
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        body,
      });
    expect((await post(`{"jsonrpc":"2.0","method":"x","params":{"p":"${'a'.repeat(2000)}"}}`)).status).toBe(413);
    // Without a declared length (chunked), the limit holds as the bytes arrive, and the client still gets its 413.
    expect(
      await rawChunkedPost(guard.port, ['{"jsonrpc":"2.0","method":"x","params":{"p":"', 'a'.repeat(2000), '"}}']),
    ).toBe(413);
    const duplicate = await post('{"jsonrpc":"2.0","id":1,"id":2,"method":"initialize"}');
    expect(duplicate.status).toBe(400);
    expect(((await duplicate.json()) as { error: { code: number } }).error.code).toBe(-32700);
    expect(server.requests).toEqual([]);
  });

  it('DELETE ends the session at the server and in the guard', async () => {
    const { guard, server } = await setup();
    const { transport } = await connect(guard.url);
    await waitFor(() => guard.sessionCount === 1 && server.sessionCount === 1, 'the session');
    const headers = sessionHeaders(transport);
    await transport.terminateSession();
    expect(server.requests.some((request) => request.method === 'DELETE')).toBe(true);
    await waitFor(() => guard.sessionCount === 0 && server.sessionCount === 0, 'the session to end');
    const stale = await fetch(guard.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(stale.status).toBe(404);
  });

  it('listens on 127.0.0.1 only and forwards to http(s) only', async () => {
    const base = {
      createPolicy: () => new ToolGuard(localSigned.canonicalBytes, { requireListed: true }),
      upstream: 'http://127.0.0.1:9/mcp',
    };
    await expect(startHttpGuard({ ...base, host: '0.0.0.0' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(startHttpGuard({ ...base, upstream: 'file:///etc/passwd' })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
  });
});

function sessionHeaders(transport: StreamableHTTPClientTransport): Record<string, string> {
  return {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-session-id': transport.sessionId!,
    'mcp-protocol-version': transport.protocolVersion ?? '2025-11-25',
  };
}

interface RawEvent {
  id: string | undefined;
  data: string;
}

/** Read SSE events until `count` of them satisfy `until` (every event counts by default). */
async function readEvents(
  body: ReadableStream<Uint8Array>,
  count: number,
  until: (event: RawEvent) => boolean = () => true,
): Promise<RawEvent[]> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const events: RawEvent[] = [];
  let buffer = '';
  let matched = 0;
  while (matched < count) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      const lines = block.split('\n');
      const data = lines.filter((line) => line.startsWith('data:')).map((line) => line.slice(5).replace(/^ /, ''));
      if (data.length === 0) continue;
      const id = lines
        .find((line) => line.startsWith('id:'))
        ?.slice(3)
        .trim();
      const event = { id, data: data.join('\n') };
      events.push(event);
      if (until(event)) matched++;
    }
  }
  reader.releaseLock();
  return events;
}

/** The status of a raw chunked POST to the guard (no Content-Length). */
function rawChunkedPost(port: number, chunks: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.once('error', reject);
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

/** The status of a raw GET to the guard with the given headers (node:http, which lets a test set Host). */
function rawStatus(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: '/mcp', method: 'GET', headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once('error', reject);
    request.end();
  });
}

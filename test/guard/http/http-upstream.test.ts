// The HTTP guard's default way to the server (src/guard/http/http-upstream.ts, createPooledUpstream) against a raw
// node:http server on 127.0.0.1: what is sent and received byte for byte, credentials, stopping (RFC 9112 §9:
// a stopped exchange closes its connection), no redirect followed, a long answer that does not hold up others, and
// HTTPS only with a certificate the machine trusts (RFC 9110 §4.3.4).

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpGuard } from '../../../src/guard/http/http-guard.ts';
import { createPooledUpstream, readBodyWithin, Stop, type Upstream } from '../../../src/guard/http/http-upstream.ts';
import { ToolGuard } from '../../../src/guard/index.ts';
import { localSigned, waitFor } from '../guard-helpers.ts';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

interface RawServer {
  url: URL;
  received: Received[];
  /** Requests whose connection closed before their answer was complete. */
  cutOff: string[];
  close(): Promise<void>;
}

const servers: RawServer[] = [];
const upstreams: Upstream[] = [];

afterEach(async () => {
  for (const upstream of upstreams.splice(0)) upstream.close();
  for (const server of servers.splice(0)) await server.close();
});

async function startRawServer(
  answer: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void,
  path = '/mcp?tenant=a',
): Promise<RawServer> {
  const received: Received[] = [];
  const cutOff: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.on('close', () => {
        if (!res.writableFinished) cutOff.push(req.url ?? '');
      });
      answer(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const raw: RawServer = {
    url: new URL(`http://127.0.0.1:${port}${path}`),
    received,
    cutOff,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(raw);
  return raw;
}

function pooled(url: URL): Upstream {
  const upstream = createPooledUpstream(url);
  upstreams.push(upstream);
  return upstream;
}

const readAll = (body: AsyncIterable<Uint8Array> | null): Promise<Uint8Array> =>
  readBodyWithin(body, 1 << 20, () => new RangeError('too large'));

describe('createPooledUpstream', () => {
  it('sends the method, path and query, headers and body as given, and returns status, headers and body bytes', async () => {
    const server = await startRawServer((_req, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, { 'content-type': 'application/json', 'mcp-session-id': 's-1' });
      res.end('{"jsonrpc":"2.0","id":1,"result":{}}');
    });
    const upstream = pooled(server.url);
    // A multi-byte character: the length must be counted in bytes.
    const body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"écho"}}';
    const answer = await upstream.send({
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': '2025-06-18', 'x-repeated': ['1', '2'] },
      body,
      stop: new Stop(),
    });
    expect(answer.status).toBe(201);
    expect(answer.headers['mcp-session-id']).toBe('s-1');
    expect(answer.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(Buffer.from(await readAll(answer.body)).toString('utf8')).toBe('{"jsonrpc":"2.0","id":1,"result":{}}');
    const [request] = server.received;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/mcp?tenant=a');
    expect(request?.headers['mcp-protocol-version']).toBe('2025-06-18');
    expect(request?.headers['x-repeated']).toBe('1, 2');
    expect(request?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(request?.body.toString('utf8')).toBe(body);
    // The guard asks for no content coding (it relays bytes it has checked, never decodes them).
    expect(request?.headers['accept-encoding']).toBeUndefined();
  });

  it('turns credentials in the URL into Basic authentication, unless the client sends its own Authorization', async () => {
    const server = await startRawServer((_req, res) => res.writeHead(202).end());
    const url = new URL(server.url);
    url.username = 'us%40er';
    url.password = 'p:w';
    const upstream = pooled(url);
    await upstream.send({ method: 'POST', headers: {}, body: '{}', stop: new Stop() }).then((a) => a.cancel());
    await upstream
      .send({ method: 'POST', headers: { authorization: 'Bearer client-token' }, body: '{}', stop: new Stop() })
      .then((a) => a.cancel());
    expect(server.received.map((request) => request.headers['authorization'])).toEqual([
      `Basic ${Buffer.from('us@er:p:w').toString('base64')}`,
      'Bearer client-token',
    ]);
  });

  it('does not follow a redirect: the 3xx answer is returned as it is', async () => {
    const server = await startRawServer((_req, res) => res.writeHead(307, { location: '/elsewhere' }).end());
    const answer = await pooled(server.url).send({ method: 'GET', headers: {}, stop: new Stop() });
    expect(answer.status).toBe(307);
    expect(answer.headers['location']).toBe('/elsewhere');
    answer.cancel();
    expect(server.received.map((request) => request.url)).toEqual(['/mcp?tenant=a']);
  });

  it('a stopped request is never sent', async () => {
    const server = await startRawServer((_req, res) => res.writeHead(200).end());
    const stop = new Stop();
    stop.stop();
    await expect(pooled(server.url).send({ method: 'POST', headers: {}, body: '{}', stop })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(server.received).toEqual([]);
  });

  it('stopping before the answer rejects the request and closes its connection', async () => {
    const server = await startRawServer(() => undefined); // never answers
    const stop = new Stop();
    const sent = pooled(server.url).send({ method: 'POST', headers: {}, body: '{}', stop });
    await waitFor(() => server.received.length === 1, 'the request at the server');
    stop.stop();
    await expect(sent).rejects.toBeInstanceOf(Error);
    await waitFor(() => server.cutOff.length === 1, 'the connection closed at the server');
  });

  it('stopping while the body streams ends the body and closes its connection', async () => {
    const server = await startRawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {}\n\n'); // and never ends
    });
    const stop = new Stop();
    const answer = await pooled(server.url).send({ method: 'GET', headers: {}, stop });
    const chunks: Uint8Array[] = [];
    const reading = (async () => {
      for await (const chunk of answer.body!) chunks.push(chunk);
    })();
    await waitFor(() => chunks.length > 0, 'the first event');
    stop.stop();
    await expect(reading).rejects.toBeInstanceOf(Error);
    await waitFor(() => server.cutOff.length === 1, 'the connection closed at the server');
  });

  it('a long-lived answer (an SSE stream) does not hold up the requests after it', async () => {
    const server = await startRawServer((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': open\n\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const upstream = pooled(server.url);
    const stream = await upstream.send({ method: 'GET', headers: {}, stop: new Stop() });
    const answers = await Promise.all(
      [1, 2, 3].map((id) =>
        upstream.send({ method: 'POST', headers: {}, body: `{"id":${id}}`, stop: new Stop() }).then(async (a) => {
          return Buffer.from(await readAll(a.body)).toString('utf8');
        }),
      ),
    );
    expect(answers).toEqual(['{"ok":true}', '{"ok":true}', '{"ok":true}']);
    stream.cancel();
  });

  it('a server that cannot be reached rejects the request', async () => {
    const server = await startRawServer((_req, res) => res.end());
    const url = new URL(server.url);
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    await expect(
      pooled(url).send({ method: 'POST', headers: {}, body: '{}', stop: new Stop() }),
    ).rejects.toBeInstanceOf(Error);
  });

  it('through the guard: a server that cannot be reached is a 502 that names neither its address nor the error', async () => {
    const server = await startRawServer((_req, res) => res.end());
    const url = new URL(server.url);
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const guard = await startHttpGuard({
      createPolicy: () => new ToolGuard(localSigned.canonicalBytes, { requireListed: true }),
      upstream: url,
      onFinding: () => undefined,
    });
    try {
      const answer = await fetch(guard.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
      });
      const text = await answer.text();
      expect(answer.status).toBe(502);
      expect(JSON.parse(text)).toMatchObject({
        error: { message: 'toolseal guard: the MCP server could not be reached' },
      });
      expect(text).not.toContain(url.port);
      expect(text).not.toMatch(/ECONNREFUSED|UND_ERR/);
    } finally {
      await guard.close();
    }
  });
});

describe('createPooledUpstream over HTTPS', () => {
  const tls = (name: string): string => fileURLToPath(new URL(`../../fixtures/tls/${name}`, import.meta.url));
  const upstreamModule = fileURLToPath(new URL('../../../src/guard/http/http-upstream.ts', import.meta.url));

  async function startHttpsServer(): Promise<{ url: URL; requests: () => number; close: () => Promise<void> }> {
    let requests = 0;
    const server = createHttpsServer(
      { cert: readFileSync(tls('cert.pem')), key: readFileSync(tls('key.pem')) },
      (_req, res) => {
        requests++;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: new URL(`https://127.0.0.1:${port}/mcp`),
      requests: () => requests,
      close: () =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  it('refuses a server whose certificate is not trusted: nothing is sent', async () => {
    const server = await startHttpsServer();
    try {
      await expect(
        pooled(server.url).send({ method: 'POST', headers: {}, body: '{}', stop: new Stop() }),
      ).rejects.toMatchObject({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
      expect(server.requests()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('reaches it once the machine trusts the certificate (NODE_EXTRA_CA_CERTS, in a fresh process)', async () => {
    const server = await startHttpsServer();
    const script = `const { createPooledUpstream, readBodyWithin, Stop } = await import(${JSON.stringify(upstreamModule)});
      const upstream = createPooledUpstream(new URL(${JSON.stringify(server.url.href)}));
      const answer = await upstream.send({ method: 'POST', headers: {}, body: '{}', stop: new Stop() });
      const body = await readBodyWithin(answer.body, 1024, () => new RangeError());
      console.log(JSON.stringify({ status: answer.status, body: Buffer.from(body).toString('utf8') }));
      upstream.close();`;
    try {
      const printed = await new Promise<string>((resolve, reject) =>
        execFile(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '-e', script],
          { env: { ...process.env, NODE_EXTRA_CA_CERTS: tls('cert.pem') }, timeout: 30_000 },
          (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
        ),
      );
      expect(JSON.parse(printed)).toEqual({ status: 200, body: '{"ok":true}' });
      expect(server.requests()).toBe(1);
    } finally {
      await server.close();
    }
  });
});

// Requests refused before the app runs, on a real socket (raw node:net): what Node's HTTP parser refuses (a non-ASCII
// byte or a control character in the request target, a bad header, a header section over 16 KiB) and what the adapter
// refuses (a backslash in the path) are answered as RFC 9457 problem+json with a code, like every other refusal.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpStatusByCode } from '../../src/http/problem.ts';
import { startHttpServer, type RunningServer } from '../../src/http/serve.ts';
import type { ErrorCode } from '../../src/core/errors.ts';
import { cleanupTempDirs, createTestEnv, type TestEnv } from '../helpers/registry-helpers.ts';
import {
  connect,
  onlyResponse,
  parseResponses,
  type RawResponse,
  readToClose,
  requestHead,
  writeAllThenRead,
} from './raw-http.ts';

describe('requests the HTTP parser or the adapter refuses', () => {
  let env: TestEnv;
  let server: RunningServer;
  beforeAll(async () => {
    env = await createTestEnv();
    server = await startHttpServer(env.app, 0);
  });
  afterAll(async () => {
    await server.close();
    await env.close();
    cleanupTempDirs();
  });

  function expectRawProblem(response: RawResponse, code: ErrorCode): Record<string, unknown> {
    const text = response.body.toString('utf8');
    expect(response.status, text).toBe(httpStatusByCode[code]);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(Number(response.headers['content-length'])).toBe(response.body.byteLength);
    const problem = JSON.parse(text) as Record<string, unknown>;
    expect(problem).toMatchObject({ code, title: code, status: httpStatusByCode[code] });
    expect(problem['type']).toBe(`https://toolseal.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`);
    expect(typeof problem['detail']).toBe('string');
    return problem;
  }

  async function refuse(request: Buffer | string, code: ErrorCode): Promise<Record<string, unknown>> {
    const exchange = await writeAllThenRead(server.port, [request]);
    expect(exchange.error, exchange.error?.message).toBeUndefined();
    expect(exchange.ended).toBe(true);
    const response = onlyResponse(exchange);
    expect(response.headers['connection']).toBe('close');
    return expectRawProblem(response, code);
  }

  it('a non-ASCII byte in the request target: 400 BAD_REQUEST problem', async () => {
    const request = Buffer.concat([
      Buffer.from('GET /v1/manifests/io.github.acme/caf'),
      Buffer.from([0xc3, 0xa9]),
      Buffer.from(' HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
    ]);
    const problem = await refuse(request, 'BAD_REQUEST');
    expect(problem['detail']).toMatch(/^the request is not valid HTTP\/1\.1/);
    await refuse(Buffer.from('GET /v1/\x7f HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 'latin1'), 'BAD_REQUEST');
  });

  it('a malformed request line, header name or header value: 400 BAD_REQUEST problem', async () => {
    await refuse('NOT-HTTP\r\n\r\n', 'BAD_REQUEST');
    await refuse('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n', 'BAD_REQUEST');
    await refuse('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: a\x01b\r\n\r\n', 'BAD_REQUEST');
    await refuse(
      'POST /v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
      'BAD_REQUEST',
    );
  });

  it('a header section over 16 KiB: 431 HEADERS_TOO_LARGE problem, read through to the end', async () => {
    for (const size of [17 * 1024, 64 * 1024, 1024 * 1024]) {
      const head = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(size)}\r\n\r\n`;
      const problem = await refuse(head, 'HEADERS_TOO_LARGE');
      expect(problem['detail']).toContain('16384');
    }
  });

  it('a backslash in the path (the adapter refuses it): 400 BAD_REQUEST problem, on a connection that stays open', async () => {
    const socket = await connect(server.port);
    socket.write(requestHead('GET', '/v1/manifests/io.github.acme\\widgets'));
    socket.write(requestHead('GET', '/healthz', { Connection: 'close' }));
    const responses = parseResponses((await readToClose(socket)).received);
    expect(responses.map((response) => response.status)).toEqual([400, 200]);
    const problem = expectRawProblem(responses[0]!, 'BAD_REQUEST');
    expect(problem['detail']).toBe('the request cannot be served: Backslash in request path');
  });

  it('pipelined after a good request on a keep-alive connection, a bad one gets its problem after the first answer', async () => {
    const exchange = await writeAllThenRead(server.port, [
      `${requestHead('GET', '/healthz')}GET /caf\u00e9 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    ]);
    const responses = parseResponses(exchange.received);
    expect(responses.map((response) => response.status)).toEqual([200, 400]);
    // The first answer was whole before the parser reached the second request: the problem follows it.
    expectRawProblem(responses[1]!, 'BAD_REQUEST');
  });

  it('a client that goes on sending header bytes forever is cut off within the bounds', async () => {
    const socket = await connect(server.port, true);
    socket.on('error', () => undefined);
    socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20 * 1024)}`);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let written = 0;
    const timer = setInterval(() => {
      if (socket.destroyed || !socket.writable) return;
      socket.write(chunk, (error) => {
        if (!error) written += 1;
      });
    }, 5);
    const started = Date.now();
    const exchange = await readToClose(socket, () => undefined, false);
    clearInterval(timer);
    expect(Date.now() - started).toBeLessThan(8_000);
    expectRawProblem(onlyResponse(exchange), 'HEADERS_TOO_LARGE');
    expect(written * chunk.byteLength).toBeLessThan(40 * 1024 * 1024);
  });

  it('a request cut short by the client half-closing: the 400 problem, and the connection closes at once', async () => {
    const socket = await connect(server.port, true);
    socket.end('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ');
    const started = Date.now();
    const exchange = await readToClose(socket);
    expect(Date.now() - started).toBeLessThan(2_000);
    expectRawProblem(onlyResponse(exchange), 'BAD_REQUEST');
  });

  it('the server goes on serving, and none of it reached the app as an unexpected error', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(env.unexpectedErrors).toEqual([]);
  });
});

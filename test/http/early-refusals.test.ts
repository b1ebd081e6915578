// The answers to requests refused before the app runs (src/http/early-refusals.ts), on a plain socket pair: which
// parser errors get which problem (400, 408, 413, 431), which get none (a reset, a connection still answering), and
// the adapter's errorHandler.

import net from 'node:net';
import { RequestError } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answerAdapterError,
  answerParserError,
  codeOfParserError,
  formatRawProblemResponse,
} from '../../src/http/early-refusals.ts';
import { httpStatusByCode } from '../../src/http/problem.ts';

function parserError(code: string, reason?: string): Error & { code: string; reason?: string } {
  return Object.assign(new Error(`Parse Error: ${reason ?? code}`), { code, ...(reason ? { reason } : {}) });
}

describe('codeOfParserError', () => {
  it('maps the parser refusals to codes, and socket errors to none', () => {
    expect(codeOfParserError(parserError('HPE_HEADER_OVERFLOW'))).toBe('HEADERS_TOO_LARGE');
    expect(codeOfParserError(parserError('HPE_CHUNK_EXTENSIONS_OVERFLOW'))).toBe('TOO_LARGE');
    expect(codeOfParserError(parserError('ERR_HTTP_REQUEST_TIMEOUT'))).toBe('REQUEST_TIMEOUT');
    for (const code of [
      'HPE_INVALID_URL',
      'HPE_INVALID_METHOD',
      'HPE_INVALID_HEADER_TOKEN',
      'HPE_UNEXPECTED_CONTENT_LENGTH',
    ])
      expect(codeOfParserError(parserError(code))).toBe('BAD_REQUEST');
    for (const code of ['ECONNRESET', 'EPIPE', 'ETIMEDOUT'])
      expect(codeOfParserError(parserError(code))).toBeUndefined();
    expect(codeOfParserError(new Error('no code'))).toBeUndefined();
    expect(httpStatusByCode.HEADERS_TOO_LARGE).toBe(431);
    expect(httpStatusByCode.REQUEST_TIMEOUT).toBe(408);
  });

  it('formatRawProblemResponse is a complete HTTP/1.1 response whose Content-Length is the body in bytes', () => {
    const raw = formatRawProblemResponse('BAD_REQUEST', 'caf\u00e9');
    const [head, body] = raw.split('\r\n\r\n') as [string, string];
    const lines = head.split('\r\n');
    expect(lines[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(lines).toContain('Content-Type: application/problem+json');
    expect(lines).toContain('Connection: close');
    expect(lines).toContain(`Content-Length: ${Buffer.byteLength(body)}`);
    expect(lines.some((line) => /^Date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(line))).toBe(true);
    expect(JSON.parse(body)).toEqual({
      type: 'https://toolseal.dev/problems/bad-request',
      title: 'BAD_REQUEST',
      status: 400,
      detail: 'caf\u00e9',
      code: 'BAD_REQUEST',
    });
  });
});

describe('answerParserError on a socket', () => {
  let server: net.Server;
  let port: number;
  const accepted: net.Socket[] = [];
  beforeAll(async () => {
    server = net.createServer({ allowHalfOpen: true }, (socket) => accepted.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Connect, hand the server side to `act`, and return what the client read until the close. */
  async function exchange(act: (socket: net.Socket) => void): Promise<string> {
    const client = net.connect({ host: '127.0.0.1', port });
    client.on('error', () => undefined);
    await new Promise((resolve) => client.once('connect', resolve));
    while (accepted.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    act(accepted.shift()!);
    let text = '';
    client.setEncoding('latin1').on('data', (chunk: string) => (text += chunk));
    await new Promise((resolve) => client.once('close', resolve));
    return text;
  }

  it('a request timeout is answered 408 REQUEST_TIMEOUT as a problem, then the connection closes', async () => {
    const text = await exchange((socket) => answerParserError(parserError('ERR_HTTP_REQUEST_TIMEOUT'), socket, false));
    expect(text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      status: 408,
    });
  });

  it("llhttp's reason is named in the detail; nothing else from the error is echoed", async () => {
    const text = await exchange((socket) =>
      answerParserError(parserError('HPE_INVALID_URL', 'Invalid char in url path'), socket, false),
    );
    const problem = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { detail: string };
    expect(problem.detail).toBe('the request is not valid HTTP/1.1: Invalid char in url path');
    const odd = await exchange((socket) =>
      answerParserError(parserError('HPE_INVALID_URL', '/etc/secret <script>'), socket, false),
    );
    expect((JSON.parse(odd.slice(odd.indexOf('\r\n\r\n') + 4)) as { detail: string }).detail).toBe(
      'the request is not valid HTTP/1.1',
    );
  });

  it('no answer for a reset, or while a response on the connection is still being written: just closed', async () => {
    expect(await exchange((socket) => answerParserError(parserError('ECONNRESET'), socket, false))).toBe('');
    expect(await exchange((socket) => answerParserError(parserError('HPE_INVALID_URL'), socket, true))).toBe('');
  });
});

describe('answerAdapterError', () => {
  it("the adapter's RequestError is a 400 BAD_REQUEST problem; anything else a 500 INTERNAL one", async () => {
    const refused = answerAdapterError(new RequestError('Invalid host header'));
    expect(refused.status).toBe(400);
    expect(refused.headers.get('Content-Type')).toBe('application/problem+json');
    expect(await refused.json()).toMatchObject({
      code: 'BAD_REQUEST',
      detail: 'the request cannot be served: Invalid host header',
    });
    const failed = answerAdapterError(new Error('/srv/secret/path exploded'));
    expect(failed.status).toBe(500);
    expect(await failed.json()).toMatchObject({ code: 'INTERNAL', detail: 'internal error' });
  });
});

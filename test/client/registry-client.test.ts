// The one registry client (src/client/registry-client.ts) against small local servers: evidence reads report only
// NOT_FOUND or FETCH_FAILED, calls relay the registry's own codes (never a verifier's), a problem's detail arrives
// whole, gzip answers are decoded within the limit, and a publish answered 503 SERVER_BUSY is retried, then given up.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { RegistryClient } from '../../src/client/registry-client.ts';
import { ToolsealError } from '../../src/core/errors.ts';

type Handler = (request: IncomingMessage, response: ServerResponse, body: Buffer) => void;

const servers: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((close) => close()));
});

/** A 127.0.0.1 server answering with `handle`; returns its URL and the requests it saw. */
async function serve(handle: Handler): Promise<{ url: string; seen: { method: string; url: string }[] }> {
  const seen: { method: string; url: string }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '' });
      handle(request, response, Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function problem(response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'Content-Type': 'application/problem+json', ...headers });
  response.end(body);
}

async function refusal(promise: Promise<unknown>): Promise<ToolsealError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolsealError);
  return error as ToolsealError;
}

describe('refusals', () => {
  it("a read reports only NOT_FOUND or FETCH_FAILED; a call relays the registry's code and pointer", async () => {
    const { url } = await serve((request, response) => {
      if (request.url === '/missing') return problem(response, 404, '{"code":"NOT_FOUND","detail":"no such"}');
      if (request.url === '/claims') return problem(response, 401, '{"code":"SIGNATURE_INVALID","detail":"trust me"}');
      if (request.url === '/dup') return problem(response, 400, '{"code":"FORBIDDEN","code":"BAD_REQUEST"}');
      problem(response, 400, '{"code":"UNKNOWN_FIELD","detail":"no","pointer":"/x"}');
    });
    const client = new RegistryClient(url, { token: 'tsk_abc' });
    expect((await refusal(client.getBytes('/missing'))).code).toBe('NOT_FOUND');
    const read = await refusal(client.getBytes('/refused'));
    expect([read.code, read.message]).toEqual(['FETCH_FAILED', '/refused: HTTP 400 UNKNOWN_FIELD: no']);
    const call = await refusal(client.call('POST', '/refused', new Uint8Array([0x7b, 0x7d])));
    expect([call.code, call.pointer, call.message]).toEqual(['UNKNOWN_FIELD', '/x', '/refused: no']);
    // A verifier's code is never relayed, and a problem with a duplicated member has no code at all.
    const claims = await refusal(client.call('GET', '/claims'));
    expect([claims.code, claims.message]).toEqual(['FETCH_FAILED', '/claims: SIGNATURE_INVALID: trust me']);
    expect((await refusal(client.call('GET', '/dup'))).code).toBe('FETCH_FAILED');
  });

  it("a problem's detail arrives whole, however long (up to the 64 KiB a refusal may take)", async () => {
    const detail = `the operator was shown ${'another digest, '.repeat(200)}end`;
    const { url } = await serve((_request, response) =>
      problem(response, 409, JSON.stringify({ code: 'APPROVAL_DIGEST_MISMATCH', detail })),
    );
    for (const client of [new RegistryClient(url), new RegistryClient(url, { fetch })]) {
      const error = await refusal(client.call('POST', '/v1/approvals/x/decision', new Uint8Array([0x7b, 0x7d])));
      expect(error.code).toBe('APPROVAL_DIGEST_MISMATCH');
      expect(error.message).toBe(`/v1/approvals/x/decision: ${detail}`);
    }
  });

  it('a token that is not an RFC 6750 b64token is refused before any request, and never echoed', () => {
    for (const token of ['', 'tsk_a\r\nX-Evil: 1', 'Bearer tsk_a']) {
      const error = (() => {
        try {
          return new RegistryClient('http://127.0.0.1:1', { token });
        } catch (caught) {
          return caught as ToolsealError;
        }
      })();
      expect(error).toBeInstanceOf(ToolsealError);
      expect((error as ToolsealError).code).toBe('UNAUTHENTICATED');
      if (token !== '') expect((error as ToolsealError).message).not.toContain(token);
    }
  });

  it('a success that is not strict JSON, or not an object, is FETCH_FAILED', async () => {
    const { url } = await serve((request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(request.url === '/dup' ? '{"a":1,"a":2}' : '[]');
    });
    const client = new RegistryClient(url);
    expect((await refusal(client.call('GET', '/dup'))).message).toBe('/dup: the answer is not strict JSON');
    expect((await refusal(client.call('GET', '/array'))).message).toBe('/array: the answer is not a JSON object');
  });
});

describe('gzip', () => {
  it('decodes a gzip answer over node:http, and refuses one that expands past the limit', async () => {
    const body = Buffer.from('tile bytes '.repeat(100));
    const { url } = await serve((request, response) => {
      expect(request.headers['accept-encoding']).toBe('gzip');
      response.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip' });
      response.end(gzipSync(request.url === '/bomb' ? Buffer.alloc(1 << 20) : body));
    });
    expect(Buffer.from(await new RegistryClient(url).getBytes('/tile'))).toEqual(body);
    const bomb = await refusal(new RegistryClient(url, { maxResponseBytes: 4096 }).getBytes('/bomb'));
    expect([bomb.code, bomb.message]).toEqual(['FETCH_FAILED', '/bomb: the answer exceeds the 4096-byte limit']);
  });
});

describe('publish when the registry is busy', () => {
  const busy = (response: ServerResponse, retryAfter = '0'): void =>
    problem(response, 503, '{"code":"SERVER_BUSY","detail":"too many writes in flight"}', {
      'Retry-After': retryAfter,
    });

  it('retries SERVER_BUSY the number of times asked, with growing waits, then gives up with SERVER_BUSY', async () => {
    const { url, seen } = await serve((_request, response) => busy(response));
    const waits: number[] = [];
    const client = new RegistryClient(url, { token: 'tsk_abc' });
    const error = await refusal(
      client.publish(new Uint8Array([0x7b, 0x7d]), {
        retries: 3,
        baseDelayMs: 2,
        onRetry: (attempt, delay) => waits.push(attempt, delay),
      }),
    );
    expect([error.code, error.message]).toEqual(['SERVER_BUSY', '/v1/manifests: too many writes in flight']);
    expect(seen).toEqual(Array(4).fill({ method: 'POST', url: '/v1/manifests' }));
    const [one, first, two, second, three, third] = waits;
    expect([one, two, three]).toEqual([1, 2, 3]);
    // Exponential backoff with up to a quarter of jitter: 2, 4, 8 ms (Retry-After 0 asks for no more).
    expect(first).toBeGreaterThanOrEqual(2);
    expect(first).toBeLessThanOrEqual(3);
    expect(second).toBeGreaterThanOrEqual(4);
    expect(third).toBeGreaterThanOrEqual(8);
    expect(third).toBeLessThanOrEqual(10);
  });

  it('waits at least what Retry-After asks (capped by maxDelayMs)', async () => {
    const { url, seen } = await serve((_request, response) => busy(response, '3'));
    const waits: number[] = [];
    const client = new RegistryClient(url, { token: 'tsk_abc' });
    await refusal(
      client.publish(new Uint8Array([0x7b, 0x7d]), {
        retries: 1,
        baseDelayMs: 1,
        maxDelayMs: 20,
        onRetry: (_attempt, delay) => waits.push(delay),
      }),
    );
    expect(seen).toHaveLength(2);
    expect(waits).toEqual([20]);
  });

  it('does not retry any other refusal, nor a SERVER_BUSY that is not a 503', async () => {
    let nth = 0;
    const { url, seen } = await serve((_request, response) => {
      nth++;
      if (nth === 1) return problem(response, 503, '{"code":"STORAGE_UNAVAILABLE","detail":"down"}');
      problem(response, 500, '{"code":"SERVER_BUSY","detail":"odd"}', { 'Retry-After': '0' });
    });
    const client = new RegistryClient(url, { token: 'tsk_abc' });
    const retry = { baseDelayMs: 1, onRetry: () => expect.unreachable('no retry') };
    expect((await refusal(client.publish(new Uint8Array([0x7b, 0x7d]), retry))).code).toBe('STORAGE_UNAVAILABLE');
    expect((await refusal(client.publish(new Uint8Array([0x7b, 0x7d]), retry))).code).toBe('SERVER_BUSY');
    expect(seen).toHaveLength(2);
  });
});

// Request bodies on a real socket (startHttpServer over the app, raw node:net clients): an oversized body is answered
// 413 and then drained before the connection closes (a lingering close, as nginx does, so the client reads the 413
// instead of a reset), bounded in bytes and time; a client that disconnects mid-body is no internal error.

import type net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LINGER_MAX_BYTES, LINGER_MAX_MS } from '../../src/http/lingering-close.ts';
import { startHttpServer, type RunningServer } from '../../src/http/serve.ts';
import { cleanupTempDirs, createTestEnv, manifestBytes, type TestEnv } from '../helpers/registry-helpers.ts';
import { connect, onlyResponse, readToClose, requestHead, writeAllThenRead } from './raw-http.ts';

const MiB = 1024 * 1024;

describe('an oversized publish body on a real socket', () => {
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

  function oversizedPublish(size: number, headers: Record<string, string | number>): (Buffer | string)[] {
    const head = requestHead('POST', '/v1/manifests', {
      Authorization: `Bearer ${env.token}`,
      'Content-Type': 'application/json',
      ...headers,
    });
    const body = Buffer.alloc(size, 0x20);
    // Written in 64 KiB pieces, as a client's stream would.
    const chunks: (Buffer | string)[] = [head];
    for (let at = 0; at < size; at += 64 * 1024) chunks.push(body.subarray(at, at + 64 * 1024));
    return chunks;
  }

  async function expectTooLarge(chunks: readonly (Buffer | string)[], what: string): Promise<void> {
    const exchange = await writeAllThenRead(server.port, chunks);
    expect(exchange.error?.code, `${what}: ${exchange.error?.message}`).toBeUndefined();
    expect(exchange.ended, what).toBe(true);
    const response = onlyResponse(exchange);
    expect(response.status, what).toBe(413);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(response.headers['connection']).toBe('close');
    expect(JSON.parse(response.body.toString('utf8'))).toMatchObject({ status: 413, code: 'TOO_LARGE' });
  }

  it('Connection: close, the whole ~1.05 MB body written before reading: the 413 problem every time (10 times)', async () => {
    const size = Math.round(1.05 * MiB);
    for (let i = 0; i < 10; i++)
      await expectTooLarge(oversizedPublish(size, { 'Content-Length': size, Connection: 'close' }), `try ${i}`);
  });

  it('Connection: close, an 8 MB body written before reading: the 413 problem every time (3 times)', async () => {
    for (let i = 0; i < 3; i++)
      await expectTooLarge(oversizedPublish(8 * MiB, { 'Content-Length': 8 * MiB, Connection: 'close' }), `try ${i}`);
  });

  it('keep-alive and chunked bodies over the limit get the same 413 and a clean close', async () => {
    const size = Math.round(1.05 * MiB);
    await expectTooLarge(oversizedPublish(size, { 'Content-Length': size }), 'keep-alive');
    const chunked = oversizedPublish(2 * MiB, { 'Transfer-Encoding': 'chunked', Connection: 'close' });
    const framed = [chunked[0]!, ...chunked.slice(1).map((c) => frameChunk(c as Buffer)), '0\r\n\r\n'];
    await expectTooLarge(framed, 'chunked');
  });

  it('a client that never stops sending as fast as it can is cut off after about 16 MiB', async () => {
    const socket = await connect(server.port, true);
    socket.write(
      requestHead('POST', '/v1/manifests', {
        Authorization: `Bearer ${env.token}`,
        'Content-Length': 1024 * MiB,
        Connection: 'close',
      }),
    );
    const started = Date.now();
    const written = keepWriting(socket, 64 * 1024, 0);
    const exchange = await readToClose(socket, () => undefined, false);
    const elapsed = Date.now() - started;
    expect(onlyResponse(exchange).status).toBe(413);
    // What the server read is bounded; the kernel's socket buffers hold a few MiB more.
    expect(written.bytes()).toBeLessThan(40 * MiB);
    expect(elapsed).toBeLessThan(8_000);
    // Cut by the byte bound (unless the machine is so slow that the time bound came first).
    if (elapsed < LINGER_MAX_MS - 500) expect(written.bytes()).toBeGreaterThan(LINGER_MAX_BYTES);
  });

  it('a client that trickles forever is cut off after about 5 seconds', async () => {
    const socket = await connect(server.port, true);
    socket.write(
      requestHead('POST', '/v1/manifests', {
        Authorization: `Bearer ${env.token}`,
        'Content-Length': 1024 * MiB,
        Connection: 'close',
      }),
    );
    const started = Date.now();
    const written = keepWriting(socket, 1024, 50);
    const exchange = await readToClose(socket, () => undefined, false);
    const elapsed = Date.now() - started;
    written.stop();
    expect(onlyResponse(exchange).status).toBe(413);
    expect(elapsed).toBeGreaterThan(LINGER_MAX_MS - 1_000);
    expect(elapsed).toBeLessThan(LINGER_MAX_MS + 3_000);
  });

  it('the server answers normally after all of that', async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    const published = await fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      body: manifestBytes(),
      headers: { Authorization: `Bearer ${env.token}` },
    });
    expect(published.status).toBe(201);
    expect(env.unexpectedErrors).toEqual([]);
  });
});

describe('a client that disconnects in the middle of its body', () => {
  let env: TestEnv;
  let server: RunningServer;
  const answered: Promise<Response>[] = [];
  beforeAll(async () => {
    env = await createTestEnv();
    // Record what the app answers each request with.
    server = await startHttpServer(
      {
        fetch: (request, bindings) => {
          const response = Promise.resolve(env.app.fetch(request, bindings));
          answered.push(response);
          return response;
        },
      },
      0,
    );
  });
  afterAll(async () => {
    await server.close();
    await env.close();
    cleanupTempDirs();
  });
  afterEach(async () => vi.restoreAllMocks());

  async function sendHalfAndDestroy(path: string): Promise<Response> {
    const body = path.endsWith('/yank') ? Buffer.from(`{"reason":"${'x'.repeat(2000)}"}`) : manifestBytes({}, 2);
    const socket: net.Socket = await connect(server.port);
    socket.on('error', () => undefined);
    socket.write(
      requestHead('POST', path, {
        Authorization: `Bearer ${env.token}`,
        'Content-Type': 'application/json',
        'Content-Length': body.byteLength,
      }),
    );
    socket.write(body.subarray(0, Math.floor(body.byteLength / 2)));
    // Let the server read the head and start waiting for the rest of the body.
    await vi.waitFor(() => expect(answered.length).toBeGreaterThan(0), { timeout: 5_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    return answered.splice(0)[0]!;
  }

  it('publish: no unexpected error, nothing logged, no answer attempted; the server goes on', async () => {
    const logged = [
      vi.spyOn(console, 'error').mockImplementation(() => undefined),
      vi.spyOn(console, 'warn').mockImplementation(() => undefined),
      vi.spyOn(console, 'info').mockImplementation(() => undefined),
      vi.spyOn(console, 'log').mockImplementation(() => undefined),
    ];
    const response = await sendHalfAndDestroy('/v1/manifests');
    expect(env.unexpectedErrors).toEqual([]);
    // The app tells the adapter the exchange is over: nothing is written to the dead socket.
    expect(response.headers.get('x-hono-already-sent')).toBe('true');
    expect(response.body).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (const spy of logged) expect(spy).not.toHaveBeenCalled();
    vi.restoreAllMocks();
    expect(await env.store.getVersion('io.github.acme/widgets', '1.0.0')).toBeUndefined();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    answered.splice(0);
  });

  it('yank: the same', async () => {
    const publish = await fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      body: manifestBytes(),
      headers: { Authorization: `Bearer ${env.token}` },
    });
    expect(publish.status).toBe(201);
    answered.splice(0);
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const response = await sendHalfAndDestroy('/v1/manifests/io.github.acme/widgets/1.0.0/yank');
    expect(env.unexpectedErrors).toEqual([]);
    expect(response.headers.get('x-hono-already-sent')).toBe('true');
    expect(error).not.toHaveBeenCalled();
    expect((await env.store.getVersion('io.github.acme/widgets', '1.0.0'))?.status).toBe('active');
  });
});

/** One chunk of a chunked body (RFC 9112 §7.1). */
function frameChunk(chunk: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${chunk.byteLength.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
}

/** Write `size`-byte chunks every `everyMs` (0: as fast as the socket takes them) until the socket fails or closes. */
function keepWriting(socket: net.Socket, size: number, everyMs: number): { bytes(): number; stop(): void } {
  const chunk = Buffer.alloc(size, 0x20);
  let bytes = 0;
  let stopped = false;
  socket.on('error', () => (stopped = true));
  socket.on('close', () => (stopped = true));
  const next = (): void => {
    if (stopped || socket.destroyed || !socket.writable) return;
    const more = socket.write(chunk, (error) => {
      if (!error) bytes += size;
    });
    if (everyMs > 0) setTimeout(next, everyMs);
    else if (more) setImmediate(next);
    else socket.once('drain', next);
  };
  next();
  return { bytes: () => bytes, stop: () => (stopped = true) };
}

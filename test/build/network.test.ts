// The build never opens a network connection unless --allow-http is given: refs to a local port that counts its
// connections are refused without one. With --allow-http only https: is read, bounded in time, size and redirects.

import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildManifest } from '../../src/build/build-manifest.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { expectBuildRefusal, manifestOf, removeTrees, writeTree } from './helpers.ts';

const at = '/tools/0/inputSchema/properties/x/$ref';

let server: Server;
let port = 0;
let connections = 0;
const sockets = new Set<Socket>();

beforeAll(async () => {
  // Accepts and counts every connection and never answers (so an https fetch can only time out).
  server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  removeTrees();
});

function folderWithRef(ref: string, files: Record<string, JsonObject> = {}): string {
  return writeTree({ 'manifest.json': manifestOf({ type: 'object', properties: { x: { $ref: ref } } }), ...files });
}

describe('no network by default', () => {
  it('refs to a local port (http:, https:, //host, file://host) are refused and the port sees no connection', async () => {
    const before = connections;
    const refs = [
      `http://127.0.0.1:${port}/a.json`,
      `https://127.0.0.1:${port}/a.json`,
      `//127.0.0.1:${port}/a.json`,
      `file://127.0.0.1:${port}/a.json`,
      `HTTPS://localhost:${port}/a.json#/$defs/x`,
    ];
    for (const ref of refs) {
      const root = folderWithRef(ref);
      const refusal = await expectBuildRefusal(buildManifest(join(root, 'manifest.json')), 'EXTERNAL_REF', at);
      if (ref.toLowerCase().startsWith('https:')) expect(refusal.message).toContain('--allow-http');
    }
    // A network ref inside a schema file is refused the same way.
    const nested = folderWithRef('a.json', { 'a.json': { $ref: `https://127.0.0.1:${port}/b.json` } });
    await expectBuildRefusal(buildManifest(join(nested, 'manifest.json')), 'EXTERNAL_REF', at);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(connections).toBe(before);
  });

  it('with --allow-http, plain http: is still refused without a connection', async () => {
    const before = connections;
    const root = folderWithRef(`http://127.0.0.1:${port}/a.json`);
    await expectBuildRefusal(buildManifest(join(root, 'manifest.json'), { allowHttp: true }), 'EXTERNAL_REF', at);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(connections).toBe(before);
  });
});

describe('--allow-http: https only, bounded', () => {
  it('a server that never answers is given up on within the time bound (FETCH_FAILED)', async () => {
    const before = connections;
    const root = folderWithRef(`https://127.0.0.1:${port}/slow.json`);
    const started = Date.now();
    const refusal = await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json'), { allowHttp: true, limits: { httpTimeoutMs: 300 } }),
      'FETCH_FAILED',
      at,
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(refusal.message).toContain('did not answer within 300 ms');
    expect(connections).toBe(before + 1);
  });

  it('reads an https document, resolves its relative refs against it, and refuses its file: refs', async () => {
    const seen: { url: string; redirect: RequestInit['redirect'] }[] = [];
    const documents: Record<string, JsonObject> = {
      'https://schemas.example/v1/address.json': { type: 'object', properties: { c: { $ref: 'country.json' } } },
      'https://schemas.example/v1/country.json': { type: 'string', pattern: '^[A-Z]{2}$' },
      'https://schemas.example/v1/leak.json': { $ref: 'file:///etc/hostname' },
    };
    const fakeFetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input);
      seen.push({ url, redirect: init?.redirect });
      const body = documents[url];
      return body === undefined ? new Response('no', { status: 404 }) : new Response(JSON.stringify(body));
    }) as typeof fetch;
    const root = folderWithRef('https://schemas.example/v1/address.json');
    const built = await buildManifest(join(root, 'manifest.json'), { allowHttp: true, fetch: fakeFetch });
    expect(built.documents).toEqual([
      'manifest.json',
      'https://schemas.example/v1/address.json',
      'https://schemas.example/v1/country.json',
    ]);
    expect(seen.every((request) => request.redirect === 'error')).toBe(true);

    const leak = folderWithRef('https://schemas.example/v1/leak.json');
    const refusal = await expectBuildRefusal(
      buildManifest(join(leak, 'manifest.json'), { allowHttp: true, fetch: fakeFetch }),
      'EXTERNAL_REF',
      at,
    );
    expect(refusal.message).toContain('may not read local files');
    const missing = folderWithRef('https://schemas.example/v1/none.json');
    await expectBuildRefusal(
      buildManifest(join(missing, 'manifest.json'), { allowHttp: true, fetch: fakeFetch }),
      'FETCH_FAILED',
      at,
    );
  });

  it('a body over the size bound is refused (TOO_LARGE), declared or streamed', async () => {
    const big = `{"description":"${'x'.repeat(5000)}"}`;
    const declared = (async () =>
      new Response(big, { headers: { 'content-length': String(big.length) } })) as typeof fetch;
    const streamed = (async () =>
      new Response(
        new ReadableStream({
          start(controller) {
            for (let i = 0; i < 10; i++)
              controller.enqueue(new TextEncoder().encode(big.slice(i * 500, i * 500 + 500)));
            controller.close();
          },
        }),
      )) as typeof fetch;
    for (const fakeFetch of [declared, streamed]) {
      const root = folderWithRef('https://schemas.example/big.json');
      await expectBuildRefusal(
        buildManifest(join(root, 'manifest.json'), {
          allowHttp: true,
          fetch: fakeFetch,
          limits: { maxDocumentBytes: 1000 },
        }),
        'TOO_LARGE',
        at,
      );
    }
  });

  it('credentials in an https ref are refused, never sent', async () => {
    const root = folderWithRef('https://user:secret@schemas.example/a.json');
    const refusal = await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json'), {
        allowHttp: true,
        fetch: (async () => new Response('{}')) as typeof fetch,
      }),
      'EXTERNAL_REF',
      at,
    );
    expect(refusal.message).not.toContain('secret@');
  });
});

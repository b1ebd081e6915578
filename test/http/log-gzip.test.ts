// Tiles and entry bundles gzip-compressed for a client that accepts it (C2SP tlog-tiles SHOULD; RFC 9110 §12.5.3),
// identity otherwise, always with Vary: Accept-Encoding; and the registry client reading either the same way.

import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryClient } from '../../src/client/registry-client.ts';
import { acceptsGzip } from '../../src/http/routes/log.ts';
import { formatEntryBundlePath, formatTilePath } from '../../src/log/index.ts';
import { startRegistryServer, type RunningRegistryServer } from '../../src/server/index.ts';
import { bodyBytes, cleanupTempDirs, makeTempDir, manifestBytes } from '../helpers/registry-helpers.ts';

let server: RunningRegistryServer;
let size: number;

beforeAll(async () => {
  server = await startRegistryServer({ dataDir: ':memory:', keysDir: makeTempDir(), port: 0 });
  const { publisher } = await server.registry.createPublisher('io.github.acme');
  for (let i = 0; i < 5; i++) await server.registry.publish(manifestBytes({ version: `1.0.${i}` }), publisher);
  size = (await server.registry.latestCheckpoint())?.size ?? 0;
});

afterAll(async () => {
  await server?.close();
  cleanupTempDirs();
});

describe('gzip tiles', () => {
  it('reads Accept-Encoding as RFC 9110 does', async () => {
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('br, GZIP;q=0.5')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('deflate, br')).toBe(false);
  });

  for (const [what, path] of [
    ['an entry bundle', () => formatEntryBundlePath(0, size)],
    ['a hash tile', () => formatTilePath(0, 0, size)],
  ] as const) {
    it(`serves ${what} gzip-compressed only when the client accepts it`, async () => {
      const url = `${server.url}/v1/log/${path()}`;
      const plain = await fetch(url, { headers: { 'Accept-Encoding': 'identity' } });
      expect(plain.headers.get('content-encoding')).toBeNull();
      expect(plain.headers.get('vary')).toBe('Accept-Encoding');
      const identity = await bodyBytes(plain);
      // Node's fetch decodes gzip itself: ask through node:http-level bytes with a raw request instead.
      const raw = await rawGet(url, { 'Accept-Encoding': 'gzip' });
      expect(raw.headers['content-encoding']).toBe('gzip');
      expect(raw.headers['vary']).toBe('Accept-Encoding');
      expect(raw.headers['content-type']).toBe('application/octet-stream');
      expect(new Uint8Array(gunzipSync(raw.body))).toEqual(identity);
      expect(raw.body.byteLength).not.toBe(identity.byteLength);
      // The registry client gets the same bytes whatever the encoding.
      const client = new RegistryClient(server.url);
      expect(await client.getBytes(`/v1/log/${path()}`)).toEqual(identity);
    });
  }
});

async function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

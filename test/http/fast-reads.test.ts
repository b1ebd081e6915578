// The fast read path (issue 16 §4) on a real server: a repeated GET of an immutable resource is answered in front of
// the router with exactly the router's status, header fields (names, values, order) and bytes; anything unusual, and
// bytes that fail their digest, go to the router; what changes with a yank is never answered from the cache.

import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { computeDigest } from '../../src/core/digest.ts';
import { ImmutableBodyCache } from '../../src/http/immutable-body-cache.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { cleanupTempDirs, makeTempDir, manifestBytes } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

interface RawAnswer {
  status: number;
  /** Raw header pairs as sent, without Date (it changes every second). */
  headers: string[];
  body: Buffer;
}

function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    // Host, port and the path exactly as written (a URL object would remove dot segments).
    const { hostname, port } = new URL(url);
    const path = url.slice(url.indexOf('/', 'http://'.length));
    const init = { hostname, port, path, method: options.method ?? 'GET', headers: options.headers ?? {} };
    const req = httpRequest(init, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const headers: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (res.rawHeaders[i]!.toLowerCase() !== 'date') headers.push(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        }
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const NAME = 'io.github.acme/widgets';
const VERSION_PATH = '/v1/manifests/io.github.acme/widgets/1.0.0';

describe('fast reads in front of the router', () => {
  let server: RunningRegistryServer;
  let cache: ImmutableBodyCache;
  let token: string;
  let canonical: Buffer;
  let digest: string;
  /** Route handlers read the cache with get(); the fast path only with lookup(). */
  let routed: ReturnType<typeof vi.spyOn>;

  beforeAll(async () => {
    const dir = makeTempDir();
    cache = new ImmutableBodyCache(1024 * 1024);
    server = await startRegistryServer({
      dataDir: join(dir, 'data'),
      keysDir: join(dir, 'keys'),
      port: 0,
      app: { cache },
    });
    ({ token } = await server.registry.createPublisher('io.github.acme'));
    const upload = manifestBytes({}, 2);
    const published = await fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: upload,
    });
    expect(published.status).toBe(201);
    const result = runPipeline(upload);
    canonical = Buffer.from(result.canonicalBytes);
    digest = result.digest;
    routed = vi.spyOn(cache, 'get');
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await server.close();
  });

  /** GET `path` twice: the router answers the first, the fast path the second, with the same answer. */
  async function expectSameAnswerTwice(path: string): Promise<RawAnswer> {
    routed.mockClear();
    const first = await rawRequest(server.url + path);
    expect(routed, 'the first GET is the router').toHaveBeenCalled();
    routed.mockClear();
    const second = await rawRequest(server.url + path);
    expect(routed, 'the second GET is the fast path').not.toHaveBeenCalled();
    expect(first.status).toBe(200);
    expect(second.status).toBe(first.status);
    expect(second.headers).toEqual(first.headers);
    expect(second.body.equals(first.body)).toBe(true);
    return second;
  }

  it('a version, its attestation and a blob: the fast answer is the router answer, status, headers and bytes', async () => {
    const bytes = await expectSameAnswerTwice(VERSION_PATH);
    expect(bytes.body.equals(canonical)).toBe(true);
    const names = bytes.headers.filter((_, i) => i % 2 === 0);
    expect(names).toEqual(expect.arrayContaining(['cache-control', 'content-length', 'content-type', 'etag', 'link']));
    expect(names).toContain('repr-digest');

    const row = (await server.store.getVersion(NAME, '1.0.0'))!;
    const attestation = await expectSameAnswerTwice(`${VERSION_PATH}/attestation`);
    expect(attestation.body.equals(row.attestation)).toBe(true);
    expect(attestation.headers).toContain('application/jose+json');
    expect(attestation.headers).toContain(`"${computeDigest(row.attestation)}"`);

    const blob = await expectSameAnswerTwice(`/v1/blobs/${digest}`);
    expect(blob.body.equals(canonical)).toBe(true);
  });

  it('anything unusual goes to the router: HEAD, conditionals, ranges, a body, another spelling, another method', async () => {
    await rawRequest(server.url + VERSION_PATH); // remembered
    const etag = `"${digest}"`;
    const cases: { options: Parameters<typeof rawRequest>[1]; status: number; path?: string }[] = [
      { options: { method: 'HEAD' }, status: 200 },
      { options: { headers: { 'If-None-Match': etag } }, status: 304 },
      { options: { headers: { 'If-Modified-Since': new Date().toUTCString() } }, status: 200 },
      { options: { headers: { Range: 'bytes=0-1' } }, status: 200 },
      { options: { headers: { 'Content-Type': 'text/plain', 'Content-Length': '2' }, body: 'xx' }, status: 200 },
      { options: { headers: { 'Transfer-Encoding': 'chunked' }, body: 'xx' }, status: 200 },
      { options: { headers: { Host: 'LOCALHOST' } }, status: 200 },
      { options: {}, status: 200, path: `${VERSION_PATH}?x=1` },
      { options: {}, status: 200, path: '/v1/manifests/io.github.acme/widgets/./1.0.0' },
      { options: { method: 'PUT', body: '{}' }, status: 405 },
    ];
    for (const { options, status, path } of cases) {
      routed.mockClear();
      const answer = await rawRequest(server.url + (path ?? VERSION_PATH), options);
      expect(answer.status, JSON.stringify(options)).toBe(status);
      if (status !== 405) expect(routed, JSON.stringify({ options, path })).toHaveBeenCalled();
    }
  });

  it('bytes that no longer match their digest are never sent: the router refuses with INTEGRITY_ERROR', async () => {
    const upload = manifestBytes({ version: '3.0.0', description: 'to be corrupted in memory' });
    const published = await fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: upload,
    });
    expect(published.status).toBe(201);
    const path = '/v1/manifests/io.github.acme/widgets/3.0.0';
    expect((await rawRequest(server.url + path)).status).toBe(200);
    const entry = cache.get(`v:${NAME}@3.0.0`)!;
    const original = Buffer.from(entry.bytes);
    entry.bytes[10] = (entry.bytes[10] ?? 0) ^ 1;
    for (let i = 0; i < 2; i++) {
      const refused = await rawRequest(server.url + path);
      expect(refused.status).toBe(500);
      expect(JSON.parse(refused.body.toString('utf8')).code).toBe('INTEGRITY_ERROR');
      expect(refused.body.includes(Buffer.from(entry.bytes))).toBe(false);
    }
    entry.bytes.set(original);
    expect((await rawRequest(server.url + path)).body.equals(original)).toBe(true);
  });

  it('a yank is never answered stale: listings and bindings go to the router; the bytes stay served', async () => {
    const upload = manifestBytes({ version: '2.0.0' });
    const published = await fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: upload,
    });
    expect(published.status).toBe(201);
    const yanked = runPipeline(upload);
    const path = '/v1/manifests/io.github.acme/widgets/2.0.0';
    const listing = '/v1/manifests/io.github.acme/widgets';
    const bindings = `/v1/attestations/${yanked.digest}`;
    for (let i = 0; i < 2; i++) {
      for (const url of [path, `${path}/attestation`, listing, bindings]) await rawRequest(server.url + url);
    }
    const before = await rawRequest(server.url + path);
    const yank = await fetch(`${server.url}${path}/yank`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ reason: 'bad build' }),
    });
    expect(yank.status).toBe(200);

    const versions = JSON.parse((await rawRequest(server.url + listing)).body.toString('utf8')) as {
      versions: { version: string; status: string }[];
    };
    expect(versions.versions.find((v) => v.version === '2.0.0')?.status).toBe('yanked');
    const bound = JSON.parse((await rawRequest(server.url + bindings)).body.toString('utf8')) as {
      bindings: { status: string; yankReason?: string }[];
    };
    expect(bound.bindings[0]).toMatchObject({ status: 'yanked', yankReason: 'bad build' });
    for (const url of [listing, bindings]) expect(cache.lookup(url)).toBeUndefined();
    // Yanked bytes stay fetchable, byte for byte, with the same header fields (none of them states a status).
    const after = await rawRequest(server.url + path);
    expect(after).toEqual(before);
    expect(after.body.equals(Buffer.from(yanked.canonicalBytes))).toBe(true);
  });
});

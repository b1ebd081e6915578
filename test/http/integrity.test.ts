// A corrupted stored row is a 500 INTEGRITY_ERROR, never wrong bytes; errors never leak server paths.

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openRegistry } from '../../src/registry/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import {
  bodyBytes,
  cleanupTempDirs,
  corruptBlob,
  createTestEnv,
  expectProblem,
  manifestBytes,
  postManifest,
  postYank,
  snapshotDb,
  type TestEnv,
} from '../helpers/registry-helpers.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';

afterAll(cleanupTempDirs);

const PATH = '/v1/manifests/io.github.acme/widgets/1.0.0';

async function publishOne(env: TestEnv): Promise<{ canonical: Buffer; digest: string }> {
  const bytes = manifestBytes({ description: 'original text' });
  expect((await postManifest(env.app, bytes, env.token)).status).toBe(201);
  const result = runPipeline(bytes);
  return { canonical: Buffer.from(result.canonicalBytes), digest: result.digest };
}

async function expectIntegrityError(response: Response, corrupted: Buffer): Promise<void> {
  const raw = Buffer.from(await response.clone().arrayBuffer());
  expect(raw.includes(corrupted)).toBe(false);
  expect(response.headers.get('ETag')).toBeNull();
  expect(response.headers.get('Cache-Control')).toBeNull();
  await expectProblem(response, 'INTEGRITY_ERROR');
}

describe('corrupted stored bytes', () => {
  it('a corrupted blob row is 500 INTEGRITY_ERROR by version and by digest, on every read, with no cache', async () => {
    const env = await createTestEnv({ app: { cacheBytes: 0 } });
    const { canonical, digest } = await publishOne(env);
    // A first read succeeds (and, with cacheBytes 0, keeps nothing).
    expect((await env.app.request(PATH)).status).toBe(200);
    const corrupted = Buffer.from(canonical.toString('utf8').replace('original text', 'tampered text'));
    expect(corrupted.byteLength).toBe(canonical.byteLength);
    corruptBlob(env, digest, corrupted);
    for (let i = 0; i < 2; i++) {
      await expectIntegrityError(await env.app.request(PATH), corrupted);
      await expectIntegrityError(await env.app.request(`/v1/blobs/${digest}`), corrupted);
      await expectIntegrityError(
        await env.app.request(PATH, { headers: { 'If-None-Match': `"${digest}"` } }),
        corrupted,
      );
    }
    await env.close();
  });

  it('corrupting before the first read: a caching app refuses too', async () => {
    const env = await createTestEnv();
    const { canonical, digest } = await publishOne(env);
    const corrupted = Buffer.concat([canonical, Buffer.from(' ')]);
    corruptBlob(env, digest, corrupted);
    await expectIntegrityError(await env.app.request(PATH), corrupted);
    await expectIntegrityError(await env.app.request(`/v1/blobs/${digest}`), corrupted);
    await env.close();
  });

  it('a size column that disagrees with the bytes is an integrity error too', async () => {
    const env = await createTestEnv({ app: { cacheBytes: 0 } });
    const { canonical, digest } = await publishOne(env);
    corruptBlob(env, digest, canonical, canonical.byteLength + 1);
    await expectProblem(await env.app.request(PATH), 'INTEGRITY_ERROR');
    await env.close();
  });

  it('bytes verified and cached before the row was corrupted are still the right bytes; a fresh app refuses', async () => {
    const env = await createTestEnv();
    const { canonical, digest } = await publishOne(env);
    expect((await env.app.request(PATH)).status).toBe(200);
    const corrupted = Buffer.from(canonical.toString('utf8').replace('original text', 'tampered text'));
    corruptBlob(env, digest, corrupted);
    const cached = await env.app.request(PATH);
    expect(cached.status).toBe(200);
    expect(Buffer.from(await bodyBytes(cached)).equals(canonical)).toBe(true);
    await expectIntegrityError(await env.newApp().request(PATH), corrupted);
    await env.close();
  });

  it('bytes corrupted in memory after they were cached are never served', async () => {
    const env = await createTestEnv();
    const { canonical, digest } = await publishOne(env);
    // Capture the very buffers the app receives from the registry (and caches), then corrupt them in place.
    const handedOut: Buffer[] = [];
    const getManifest = env.registry.getManifest.bind(env.registry);
    const getBlob = env.registry.getBlob.bind(env.registry);
    vi.spyOn(env.registry, 'getManifest').mockImplementation(async (name, version) => {
      const stored = await getManifest(name, version);
      handedOut.push(stored.bytes);
      return stored;
    });
    vi.spyOn(env.registry, 'getBlob').mockImplementation(async (d) => {
      const blob = await getBlob(d);
      handedOut.push(blob.bytes);
      return blob;
    });
    const app = env.newApp();
    expect(Buffer.from(await bodyBytes(await app.request(PATH))).equals(canonical)).toBe(true);
    expect(Buffer.from(await bodyBytes(await app.request(`/v1/blobs/${digest}`))).equals(canonical)).toBe(true);
    expect(handedOut).toHaveLength(2);
    const position = canonical.indexOf('original');
    for (const buffer of handedOut) buffer.write('ORIGINAL', position, 'utf8');
    const corrupted = Buffer.from(canonical.toString('utf8').replace('original', 'ORIGINAL'));
    for (const url of [PATH, `/v1/blobs/${digest}`]) {
      const response = await app.request(url);
      const bytes = Buffer.from(await response.clone().arrayBuffer());
      expect(bytes.equals(corrupted)).toBe(false);
      if (response.status === 200) {
        // A cache that kept its own copy may serve it, but only the right bytes.
        expect(bytes.equals(canonical)).toBe(true);
      } else {
        await expectIntegrityError(response, corrupted);
      }
    }
    vi.restoreAllMocks();
    await env.close();
  });
});

describe('errors never leak server paths or internals', () => {
  it('no problem body names the data or keys folder, a stack frame or a cause, even for internal errors', async () => {
    const env = await createTestEnv({ onDisk: true });
    const { digest } = await publishOne(env);
    const otherToken = await env.addPublisher('io.github.other');
    const bodies: string[] = [];
    const collect = async (response: Response | Promise<Response>): Promise<Response> => {
      const r = await response;
      bodies.push(await r.clone().text());
      return r;
    };

    await collect(postManifest(env.app, '{"name":', env.token));
    await collect(
      postManifest(
        env.app,
        manifestBytes({
          tools: [{ name: 't', inputSchema: { type: 'object', properties: { a: { $ref: 'file:///etc/hostname' } } } }],
        }),
        env.token,
      ),
    );
    await collect(
      postManifest(
        env.app,
        manifestBytes({
          tools: [
            { name: 't', inputSchema: { type: 'object', properties: { a: { $ref: '../../../../etc/passwd' } } } },
          ],
        }),
        env.token,
      ),
    );
    await collect(postManifest(env.app, manifestBytes({ description: 'other' }), env.token));
    await collect(postManifest(env.app, manifestBytes(), otherToken));
    await collect(postManifest(env.app, manifestBytes()));
    await collect(env.app.request('/v1/manifests/io.github.acme/widgets/9.9.9'));
    await collect(env.app.request('/v1/manifests?cursor=zz'));
    await collect(env.app.request(`/v1/blobs/sha256:${'0'.repeat(64)}`));
    await collect(postYank(env.app, PATH, { reason: '' }, env.token));

    // Another process rotates the key (as `toolseal keys rotate` would) and the new private key file goes missing:
    // the publish fails inside its transaction with an internal error whose cause names a file path.
    const other = await openRegistry({ store: env.store, keysDir: env.keysDir, origin: 'http://127.0.0.1:8787' });
    const { active } = await other.rotateSigningKey();
    rmSync(join(env.keysDir, `${active}.private.jwk.json`));
    const before = snapshotDb(env.store);
    const internal = await collect(postManifest(env.app, manifestBytes({ version: '2.0.0' }), env.token));
    await expectProblem(internal, 'INTERNAL');
    expect(snapshotDb(env.store)).toEqual(before);

    // Corrupted bytes.
    sqliteDatabaseOf(env.store).exec('DROP TRIGGER blobs_no_update');
    sqliteDatabaseOf(env.store).prepare('UPDATE blobs SET bytes = ? WHERE digest = ?').run(Buffer.from('{}'), digest);
    await collect(env.newApp().request(PATH));

    // An unexpected error (the database is gone): a generic INTERNAL problem, the error goes to the hook only.
    await env.store.close();
    const unexpected = await collect(env.newApp().request(PATH));
    await expectProblem(unexpected, 'INTERNAL');
    expect(env.unexpectedErrors.length).toBeGreaterThan(0);

    expect(bodies.length).toBe(13);
    for (const body of bodies) {
      expect(body).not.toContain(env.root);
      expect(body).not.toContain(env.dataDir);
      expect(body).not.toContain(env.keysDir);
      expect(body).not.toContain('toolseal.db');
      expect(body).not.toContain('.jwk.json');
      expect(body).not.toMatch(/ENOENT|SQLITE|\n\s+at |node_modules|\/src\//);
      const problem = JSON.parse(body) as Record<string, unknown>;
      expect(Object.keys(problem).sort()).toEqual(
        expect.arrayContaining(['code', 'detail', 'status', 'title', 'type']),
      );
      expect(
        Object.keys(problem).every((key) => ['code', 'detail', 'status', 'title', 'type', 'pointer'].includes(key)),
      ).toBe(true);
    }
  });
});

// GET /v1/blobs/{digest}/bundle (issue 26 §1, "and by digest"): the same bundle bytes, media type and Cache-Control as
// GET …/{version}/bundle for the one version whose bytes have that digest (a yanked one too); NOT_FOUND for a digest
// no version has and for a version without a bundle; INTEGRITY_ERROR, never served, for a stored bundle that fails its
// check (as by version); 405 with Allow for another method. verifyBundle accepts what the route serves.

import { afterAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import { bundleByDigestPath, bundlePath } from '../../src/protocol/routes.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';
import { verifyBundle } from '../../src/verify/index.ts';
import {
  cleanupTempDirs,
  createTestEnv,
  expectProblem,
  manifestBytes,
  postManifest,
  postYank,
  type TestEnv,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

const NAME = 'io.github.acme/widgets';
const BUNDLE_TYPE = 'application/vnd.dev.sigstore.bundle.v0.3+json';

async function publish(env: TestEnv, version: string): Promise<{ bytes: Uint8Array; digest: string }> {
  const result = runPipeline(manifestBytes({ version }));
  expect((await postManifest(env.app, result.canonicalBytes, env.token)).status).toBe(201);
  return { bytes: result.canonicalBytes, digest: result.digest };
}

async function readBundle(env: TestEnv, path: string): Promise<{ bytes: Uint8Array; headers: Headers }> {
  const response = await env.app.request(path);
  expect(response.status, path).toBe(200);
  return { bytes: new Uint8Array(await response.arrayBuffer()), headers: response.headers };
}

describe('GET /v1/blobs/{digest}/bundle', () => {
  it('answers exactly the bytes and headers of the version route, a yanked version too, and they verify', async () => {
    const env = await createTestEnv();
    const first = await publish(env, '1.0.0');
    const second = await publish(env, '1.1.0');
    expect((await postYank(env.app, `/v1/manifests/${NAME}/1.0.0`, { reason: 'broken' }, env.token)).status).toBe(200);
    const jwks = await env.registry.jwks();
    for (const [version, { bytes, digest }] of [
      ['1.0.0', first],
      ['1.1.0', second],
    ] as const) {
      expect(bundleByDigestPath(digest)).toBe(`/v1/blobs/${digest}/bundle`);
      const byVersion = await readBundle(env, bundlePath(NAME, version));
      const byDigest = await readBundle(env, bundleByDigestPath(digest));
      expect(Buffer.from(byDigest.bytes).equals(Buffer.from(byVersion.bytes))).toBe(true);
      for (const headers of [byVersion.headers, byDigest.headers]) {
        expect(headers.get('Content-Type')).toBe(BUNDLE_TYPE);
        expect(headers.get('Cache-Control')).toBe('no-cache');
      }
      const verified = verifyBundle({
        bytes,
        bundle: byDigest.bytes,
        bundleKeys: jwks,
        logKey: env.registry.log.verifierString,
        expected: { name: NAME, version },
      });
      expect(verified).toMatchObject({ name: NAME, version, digest });
    }
    await env.close();
  });

  it('is NOT_FOUND for a digest no version has and for a version without a bundle; 405 for POST', async () => {
    const env = await createTestEnv();
    const { digest } = await publish(env, '1.0.0');
    const unknown = `sha256:${'0'.repeat(64)}`;
    await expectProblem(await env.app.request(bundleByDigestPath(unknown)), 'NOT_FOUND');
    const post = await env.app.request(bundleByDigestPath(digest), { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('Allow')).toBe('GET, HEAD');
    // As a version published before bundles existed (and before the backfill at the next start).
    const db = sqliteDatabaseOf(env.store);
    db.exec('DROP TRIGGER version_bundles_no_delete');
    db.exec('DELETE FROM version_bundles');
    await expectProblem(await env.app.request(bundleByDigestPath(digest)), 'NOT_FOUND');
    await expectProblem(await env.app.request(bundlePath(NAME, '1.0.0')), 'NOT_FOUND');
    await env.close();
  });

  it('refuses a stored bundle that fails its check with INTEGRITY_ERROR, as the version route does', async () => {
    const env = await createTestEnv();
    const { digest } = await publish(env, '1.0.0');
    const db = sqliteDatabaseOf(env.store);
    const { envelope } = db.prepare('SELECT envelope FROM version_bundles').get() as { envelope: string };
    const altered = JSON.parse(envelope) as { payload: string };
    altered.payload = Buffer.from('{"_type":"altered"}').toString('base64');
    db.exec('DROP TRIGGER version_bundles_no_update');
    db.prepare('UPDATE version_bundles SET envelope = ?').run(JSON.stringify(altered));
    for (const path of [bundleByDigestPath(digest), bundlePath(NAME, '1.0.0')]) {
      const problem = await expectProblem(await env.app.request(path), 'INTEGRITY_ERROR');
      expect(problem.detail).toBe(
        `the bundle of ${NAME}@1.0.0 carries another envelope than the one logged; not served`,
      );
    }
    await env.close();
  });
});

// Headers the other suites do not pin: the JWKS, the checkpoint, the log key, tiles, entry bundles and proofs.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatEntryBundlePath, formatTilePath } from '../../src/log/index.ts';
import {
  cleanupTempDirs,
  createTestEnv,
  expectProblem,
  manifestBytes,
  postManifest,
  type TestEnv,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

const IMMUTABLE = 'public, max-age=31536000, immutable';

function expectHeaders(response: Response, expected: Record<string, string>): void {
  const names = [...response.headers.keys()].filter((name) => name !== 'content-length');
  expect(names.sort()).toEqual(Object.keys(expected).sort());
  for (const [name, value] of Object.entries(expected)) expect(response.headers.get(name), name).toBe(value);
}

describe('log and key headers', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv();
    expect((await postManifest(env.app, manifestBytes(), env.token)).status).toBe(201);
  });
  afterAll(async () => await env.close());

  it('GET /healthz is application/json with no caching header', async () => {
    expectHeaders(await env.app.request('/healthz'), { 'content-type': 'application/json' });
  });

  it('GET /.well-known/jwks.json may be cached for 60 seconds', async () => {
    expectHeaders(await env.app.request('/.well-known/jwks.json'), {
      'cache-control': 'public, max-age=60',
      'content-type': 'application/json',
    });
  });

  it('GET /v1/log/checkpoint is a text note cached for 5 seconds', async () => {
    const response = await env.app.request('/v1/log/checkpoint');
    expectHeaders(response, { 'cache-control': 'public, max-age=5', 'content-type': 'text/plain; charset=utf-8' });
    expect(await response.text()).toBe((await env.registry.latestCheckpoint())?.note);
  });

  it('GET /v1/log/key is the verifier line, cached for an hour', async () => {
    const response = await env.app.request('/v1/log/key');
    expectHeaders(response, { 'cache-control': 'public, max-age=3600', 'content-type': 'text/plain; charset=utf-8' });
    expect(await response.text()).toBe(`${env.registry.log.verifierString}\n`);
  });

  it('tiles and entry bundles are immutable octet streams; one past the checkpoint is 404', async () => {
    const size = (await env.registry.latestCheckpoint())?.size ?? 0;
    expect(size).toBe(3); // the first key, an attestation and its bundle leaf
    for (const path of [formatTilePath(0, 0, size), formatEntryBundlePath(0, size)]) {
      const response = await env.app.request(`/v1/log/${path}`);
      expect(response.status, path).toBe(200);
      expectHeaders(response, {
        'cache-control': IMMUTABLE,
        'content-type': 'application/octet-stream',
        vary: 'Accept-Encoding',
      });
    }
    for (const path of [formatTilePath(0, 0, size + 1), formatEntryBundlePath(0, size + 1)]) {
      await expectProblem(await env.app.request(`/v1/log/${path}`), 'NOT_FOUND');
    }
  });

  it('proofs are application/json echoing their parameters', async () => {
    const inclusion = await env.app.request('/v1/log/proof/inclusion?index=0&size=2');
    expectHeaders(inclusion, { 'content-type': 'application/json' });
    expect(Object.keys((await inclusion.json()) as object)).toEqual(['index', 'size', 'hashes']);
    const consistency = await env.app.request('/v1/log/proof/consistency?from=1&to=2');
    expectHeaders(consistency, { 'content-type': 'application/json' });
    expect(Object.keys((await consistency.json()) as object)).toEqual(['from', 'to', 'hashes']);
    await expectProblem(await env.app.request('/v1/log/proof/inclusion?index=-1&size=2'), 'BAD_REQUEST');
  });
});

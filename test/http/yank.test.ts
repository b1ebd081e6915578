// POST /v1/manifests/{ns}/{name}/{version}/yank: publisher only, status only, bytes stay fetchable, idempotent.

import { afterAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import {
  bodyBytes,
  cleanupTempDirs,
  createTestEnv,
  expectProblem,
  manifestBytes,
  postManifest,
  postYank,
  snapshotDb,
  type TestEnv,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

const PATH = '/v1/manifests/io.github.acme/widgets/1.0.0';

async function setup(): Promise<{ env: TestEnv; canonical: Uint8Array; digest: string }> {
  const env = await createTestEnv();
  const bytes = manifestBytes();
  expect((await postManifest(env.app, bytes, env.token)).status).toBe(201);
  expect((await postManifest(env.app, manifestBytes({ version: '0.9.0' }), env.token)).status).toBe(201);
  const result = runPipeline(bytes);
  return { env, canonical: result.canonicalBytes, digest: result.digest };
}

describe('yank', () => {
  it('401 without a token or with a bad one, 403 from another publisher; nothing changes', async () => {
    const { env } = await setup();
    const otherToken = await env.addPublisher('io.github.other');
    const before = snapshotDb(env.store);
    await expectProblem(await postYank(env.app, PATH, { reason: 'x' }), 'UNAUTHENTICATED');
    await expectProblem(await postYank(env.app, PATH, { reason: 'x' }, 'tsk_wrong'), 'UNAUTHENTICATED');
    await expectProblem(await postYank(env.app, PATH, { reason: 'x' }, otherToken), 'FORBIDDEN');
    // Even for a version that does not exist, a foreign namespace is 403 (no existence oracle).
    await expectProblem(
      await postYank(env.app, '/v1/manifests/io.github.acme/widgets/7.7.7', { reason: 'x' }, otherToken),
      'FORBIDDEN',
    );
    expect(snapshotDb(env.store)).toEqual(before);
    expect((await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!.status).toBe('active');
    await env.close();
  });

  it('400 for a body without a non-empty reason; 404 for an unknown version; nothing changes', async () => {
    const { env } = await setup();
    const before = snapshotDb(env.store);
    for (const body of [
      {},
      { reason: 1 },
      { reason: '' },
      { reason: '   ' },
      { reason: 'x'.repeat(1001) },
      [],
      'null',
    ]) {
      await expectProblem(await postYank(env.app, PATH, body, env.token), 'BAD_REQUEST');
    }
    await expectProblem(await postYank(env.app, PATH, '{"reason":"a","reason":"b"}', env.token), 'DUPLICATE_KEY');
    await expectProblem(
      await postYank(env.app, '/v1/manifests/io.github.acme/widgets/9.9.9', { reason: 'x' }, env.token),
      'NOT_FOUND',
    );
    await expectProblem(
      await postYank(env.app, '/v1/manifests/io.github.acme/nothing/1.0.0', { reason: 'x' }, env.token),
      'NOT_FOUND',
    );
    expect(snapshotDb(env.store)).toEqual(before);
    await env.close();
  });

  it('marks the version yanked with its reason and a log entry; the bytes stay fetchable by version and by digest', async () => {
    const { env, canonical, digest } = await setup();
    const before = snapshotDb(env.store);
    const response = await postYank(env.app, PATH, { reason: 'leaks a token in a description' }, env.token);
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      name: 'io.github.acme/widgets',
      version: '1.0.0',
      digest,
      status: 'yanked',
      yankReason: 'leaks a token in a description',
    });
    expect(typeof body['yankedAt']).toBe('string');
    expect(body['yankLogIndex']).toBe(before.counts['log_entries']);
    const after = snapshotDb(env.store);
    expect(after.counts['log_entries']).toBe(before.counts['log_entries']! + 1);
    expect(after.counts['blobs']).toBe(before.counts['blobs']);
    expect(after.counts['manifest_versions']).toBe(before.counts['manifest_versions']);
    const entry = (
      await env.store.readLogEntries(body['yankLogIndex'] as number, (body['yankLogIndex'] as number) + 1)
    )[0]!;
    expect(entry.kind).toBe('yank');
    expect(JSON.parse(entry.data.toString('utf8'))).toMatchObject({
      type: 'toolseal.yank/v1',
      subject: 'io.github.acme/widgets@1.0.0',
      digest,
      reason: 'leaks a token in a description',
    });

    for (const url of [PATH, `/v1/blobs/${digest}`]) {
      const fetched = await env.newApp({ cacheBytes: 0 }).request(url);
      expect(fetched.status).toBe(200);
      expect(Buffer.from(await bodyBytes(fetched)).equals(Buffer.from(canonical))).toBe(true);
      expect(fetched.headers.get('ETag')).toBe(`"${digest}"`);
    }
    // The attestation is unchanged and still served.
    const attestation = await bodyBytes(await env.app.request(`${PATH}/attestation`));
    expect(
      Buffer.from(attestation).equals((await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!.attestation),
    ).toBe(true);

    const versions = (await (await env.app.request('/v1/manifests/io.github.acme/widgets')).json()) as {
      versions: Record<string, unknown>[];
    };
    expect(versions.versions.find((v) => v['version'] === '1.0.0')).toMatchObject({
      status: 'yanked',
      yankReason: 'leaks a token in a description',
    });
    const audit = (await (await env.app.request(`/v1/attestations/${digest}`)).json()) as {
      bindings: Record<string, unknown>[];
    };
    expect(audit.bindings[0]).toMatchObject({ status: 'yanked', yankReason: 'leaks a token in a description' });
    const listing = (await (await env.app.request('/v1/manifests')).json()) as { items: Record<string, unknown>[] };
    expect(listing.items[0]).toMatchObject({
      name: 'io.github.acme/widgets',
      latestVersion: '0.9.0',
      status: 'active',
    });
    await env.close();
  });

  it('the listing shows the yanked status when every version is yanked', async () => {
    const { env } = await setup();
    await postYank(env.app, PATH, { reason: 'a' }, env.token);
    await postYank(env.app, '/v1/manifests/io.github.acme/widgets/0.9.0', { reason: 'b' }, env.token);
    const listing = (await (await env.app.request('/v1/manifests')).json()) as { items: Record<string, unknown>[] };
    expect(listing.items).toHaveLength(1);
    expect(listing.items[0]).toMatchObject({ latestVersion: '1.0.0', status: 'yanked' });
    await env.close();
  });

  it('yanking twice is idempotent: same record, first reason kept, no new log entry, and the answer says so', async () => {
    const { env } = await setup();
    const first = (await (await postYank(env.app, PATH, { reason: 'first' }, env.token)).json()) as Record<
      string,
      unknown
    >;
    const before = snapshotDb(env.store);
    const again = await postYank(env.app, PATH, { reason: 'second' }, env.token);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ ...first, alreadyYanked: true, requestedReason: 'second' });
    expect(snapshotDb(env.store)).toEqual(before);
    await env.close();
  });

  it('a yanked version cannot be republished with other bytes, and republishing its bytes is still idempotent', async () => {
    const { env } = await setup();
    await postYank(env.app, PATH, { reason: 'first' }, env.token);
    const before = snapshotDb(env.store);
    await expectProblem(
      await postManifest(env.app, manifestBytes({ description: 'fixed' }), env.token),
      'VERSION_EXISTS',
      '/version',
    );
    const same = await postManifest(env.app, manifestBytes(), env.token);
    expect(same.status).toBe(200);
    expect(((await same.json()) as { status: string }).status).toBe('yanked');
    expect(snapshotDb(env.store)).toEqual(before);
    await env.close();
  });
});

// Publishers: revoking one or rotating its token is refused at once (401) by a registry that is already running, on
// the event loop and through the writer thread alike, with a request authenticated just before; manifests stay served.

import { afterAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import {
  hashToken,
  listPublishers,
  revokePublisher,
  rotatePublisherToken,
  type PublisherRecord,
} from '../../src/registry/index.ts';
import { startPublishWriter } from '../../src/runtime/index.ts';
import { openStore } from '../../src/store/sqlite/index.ts';
import {
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

/** Revoke or rotate through a connection of its own, as `toolseal publisher …` does beside a running server. */
async function onOtherConnection<T>(
  env: TestEnv,
  work: (store: ReturnType<typeof openStore>) => Promise<T>,
): Promise<T> {
  const store = openStore({ dataDir: env.dataDir });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

async function expectRejection(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (rejection: unknown) => rejection,
  );
  expect(error).toBeInstanceOf(ToolsealError);
  expect((error as ToolsealError).code).toBe(code);
}

describe.each([
  ['on the event loop', () => createTestEnv({ onDisk: true })],
  ['through the writer thread', () => createTestEnv({ onDisk: true, committer: (where) => startPublishWriter(where) })],
])('publishers of a running registry (%s)', (_where, open) => {
  it('a revoked publisher is refused at once, also a request authenticated before; its manifests stay served', async () => {
    const env = await open();
    expect((await postManifest(env.app, manifestBytes(), env.token)).status).toBe(201);
    const authenticated: PublisherRecord = await env.registry.authenticate(env.token);
    const revoked = await onOtherConnection(env, (store) => revokePublisher(store, 'io.github.acme'));
    expect(revoked).toMatchObject({ namespace: 'io.github.acme', alreadyRevoked: false });
    const before = snapshotDb(env.store);

    const refused = await expectProblem(
      await postManifest(env.app, manifestBytes({ version: '2.0.0' }), env.token),
      'UNAUTHENTICATED',
    );
    expect(refused.detail).toMatch(/revoked/);
    await expectProblem(await postYank(env.app, PATH, { reason: 'x' }, env.token), 'UNAUTHENTICATED');
    // Authenticated just before the revocation: the commit (wherever it runs) checks again in its transaction.
    await expectRejection(env.registry.publish(manifestBytes({ version: '3.0.0' }), authenticated), 'UNAUTHENTICATED');
    await expectRejection(env.registry.yank(authenticated, 'io.github.acme/widgets', '1.0.0', 'x'), 'UNAUTHENTICATED');
    expect(snapshotDb(env.store)).toEqual(before);

    const served = await env.app.request(PATH);
    expect(served.status).toBe(200);
    expect((await env.app.request('/v1/manifests')).status).toBe(200);
    // Revoking again keeps the first time and says so; a revoked publisher gets no new token.
    expect(await onOtherConnection(env, (store) => revokePublisher(store, 'io.github.acme'))).toEqual({
      ...revoked,
      alreadyRevoked: true,
    });
    await expect(onOtherConnection(env, (store) => rotatePublisherToken(store, 'io.github.acme'))).rejects.toThrow(
      /is revoked/,
    );
    await env.closeAll();
  });

  it('a rotated-out token is refused at once, also for a request authenticated before; the new one works', async () => {
    const env = await open();
    const other = await env.addPublisher('io.github.other');
    const authenticated = await env.registry.authenticate(env.token);
    const { token } = await onOtherConnection(env, (store) => rotatePublisherToken(store, 'io.github.acme'));
    expect(token).toMatch(/^tsk_[A-Za-z0-9_-]{43}$/);
    expect(token).not.toBe(env.token);
    const before = snapshotDb(env.store);

    await expectProblem(await postManifest(env.app, manifestBytes(), env.token), 'UNAUTHENTICATED');
    await expectRejection(env.registry.publish(manifestBytes(), authenticated), 'UNAUTHENTICATED');
    expect(snapshotDb(env.store)).toEqual(before);

    expect((await postManifest(env.app, manifestBytes(), token)).status).toBe(201);
    expect((await postYank(env.app, PATH, { reason: 'superseded' }, token)).status).toBe(200);
    // The other publisher is untouched.
    expect((await postManifest(env.app, manifestBytes({ name: 'io.github.other/tools' }), other)).status).toBe(201);
    expect(await env.store.findPublisherByTokenHash(hashToken(env.token))).toBeUndefined();
    await env.closeAll();
  });
});

describe('listPublishers, revokePublisher, rotatePublisherToken', () => {
  it('list shows namespace, creation and revocation, never a token or its hash; unknown namespaces are NOT_FOUND', async () => {
    const env = await createTestEnv({ clock: () => new Date('2030-01-02T03:04:05.000Z') });
    await env.addPublisher('io.github.other');
    await revokePublisher(env.store, 'IO.GITHUB.OTHER', () => new Date('2030-02-03T04:05:06.000Z'));
    const listed = await listPublishers(env.store);
    expect(listed).toEqual([
      { namespace: 'io.github.acme', createdAt: '2030-01-02T03:04:05.000Z', revoked: false, revokedAt: null },
      {
        namespace: 'io.github.other',
        createdAt: '2030-01-02T03:04:05.000Z',
        revoked: true,
        revokedAt: '2030-02-03T04:05:06.000Z',
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain(env.publisher.tokenHash);
    await expect(revokePublisher(env.store, 'io.github.nobody')).rejects.toThrow(/no publisher owns/);
    await expect(rotatePublisherToken(env.store, 'io.github.nobody')).rejects.toThrow(/no publisher owns/);
    await env.close();
  });
});

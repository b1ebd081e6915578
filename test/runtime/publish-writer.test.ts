// The publish writer thread: the same answers, bytes, attestations and proofs as committing on the event loop,
// through its own connection to the same database.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashLeaf, verifyCheckpoint, verifyInclusionProof } from '../../src/log/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import {
  bodyBytes,
  cleanupTempDirs,
  createTestEnv,
  expectProblem,
  makeTempDir,
  manifestBytes,
  postManifest,
  sampleTool,
  snapshotDb,
} from '../helpers/registry-helpers.ts';
import { startPublishWriter } from '../../src/runtime/index.ts';

afterAll(async () => cleanupTempDirs());

const withWriter = () => createTestEnv({ onDisk: true, committer: (where) => startPublishWriter(where) });

interface PublishBody {
  digest: string;
  logIndex: number;
  inclusionProof: { index: number; size: number; hashes: string[]; checkpoint: string };
}

describe('startPublishWriter', () => {
  it('201, then 200 for the same bytes, 409 for other bytes with nothing stored; served bytes and proof check out', async () => {
    const env = await withWriter();
    const upload = manifestBytes({ version: '1.0.0' });
    const created = await postManifest(env.app, upload, env.token);
    expect(created.status).toBe(201);
    const body = (await created.json()) as PublishBody;
    expect(body.digest).toBe(runPipeline(upload).digest);

    // Read back on the main thread's connection: the writer's commit is visible, bytes and attestation as stored.
    const row = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
    expect(Buffer.isBuffer(row.attestation)).toBe(true);
    const fetched = await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0');
    expect(Buffer.from(await bodyBytes(fetched)).equals(Buffer.from(runPipeline(upload).canonicalBytes))).toBe(true);
    const attestation = await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0/attestation');
    expect(Buffer.from(await bodyBytes(attestation)).equals(row.attestation)).toBe(true);
    const verifier = (await (await env.app.request('/v1/log/key')).text()).trim();
    const checkpoint = verifyCheckpoint(body.inclusionProof.checkpoint, verifier);
    verifyInclusionProof(
      hashLeaf(row.attestation),
      body.logIndex,
      checkpoint.size,
      body.inclusionProof.hashes.map((hash) => new Uint8Array(Buffer.from(hash, 'base64'))),
      checkpoint.rootHash,
    );

    expect((await postManifest(env.app, upload, env.token)).status).toBe(200);
    const before = snapshotDb(env.store);
    await expectProblem(
      await postManifest(env.app, manifestBytes({ version: '1.0.0', tools: [sampleTool('other')] }), env.token),
      'VERSION_EXISTS',
      '/version',
    );
    expect(snapshotDb(env.store)).toEqual(before);
    await env.closeAll();
  });

  it('concurrent publishes of one version: exactly one 201; the others 200 (same bytes) or 409 (other bytes)', async () => {
    const env = await withWriter();
    const same = manifestBytes({ version: '3.0.0' });
    const other = manifestBytes({ version: '3.0.0', tools: [sampleTool('other')] });
    const uploads = Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? other : same));
    const statuses = (await Promise.all(uploads.map((bytes) => postManifest(env.app, bytes, env.token)))).map(
      (r) => r.status,
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    const winner = (await env.store.getVersion('io.github.acme/widgets', '3.0.0'))!;
    const winnerBytes = winner.digest === runPipeline(same).digest ? same : other;
    statuses.forEach((status, i) => {
      if (status !== 201) expect(status).toBe(uploads[i] === winnerBytes ? 200 : 409);
    });
    expect(await env.store.listVersions('io.github.acme/widgets')).toHaveLength(1);
    await env.closeAll();
  });

  it('many publishes at once share commits and checkpoints; each answer names its own stored row', async () => {
    const env = await withWriter();
    const checkpointsBefore = (await env.store.listCheckpoints()).length;
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => postManifest(env.app, manifestBytes({ version: `4.0.${i}` }), env.token)),
    );
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as (PublishBody & { version: string })[];
    expect(responses.map((r) => r.status)).toEqual(Array(40).fill(201));
    for (const [i, body] of bodies.entries()) {
      expect(body.version).toBe(`4.0.${i}`);
      expect((await env.store.getVersion('io.github.acme/widgets', `4.0.${i}`))!.logIndex).toBe(body.logIndex);
      expect(body.inclusionProof.size).toBeGreaterThan(body.logIndex);
    }
    expect((await env.store.listCheckpoints()).length - checkpointsBefore).toBeLessThan(40);
    await env.closeAll();
  });

  it('signs with a key rotated on another connection, and interleaves with yanks made on the main thread', async () => {
    const env = await withWriter();
    expect((await postManifest(env.app, manifestBytes({ version: '5.0.0' }), env.token)).status).toBe(201);
    const { active } = await env.registry.rotateSigningKey();
    expect((await postManifest(env.app, manifestBytes({ version: '5.1.0' }), env.token)).status).toBe(201);
    expect((await env.store.getVersion('io.github.acme/widgets', '5.1.0'))!.kid).toBe(active);
    await env.registry.yank(env.publisher, 'io.github.acme/widgets', '5.0.0', 'superseded');
    expect((await postManifest(env.app, manifestBytes({ version: '5.2.0' }), env.token)).status).toBe(201);
    expect((await env.store.getVersion('io.github.acme/widgets', '5.0.0'))!.status).toBe('yanked');
    expect((await env.store.latestCheckpoint())!.size).toBe(await env.store.getLogSize());
    await env.closeAll();
  });

  it('a writer that cannot open the database never starts: whenReady and every commit fail with INTERNAL', async () => {
    const notADirectory = join(makeTempDir(), 'file');
    writeFileSync(notADirectory, 'x');
    const writer = startPublishWriter({ dataDir: notADirectory, keysDir: makeTempDir(), origin: 'http://127.0.0.1:1' });
    await expect(writer.whenReady()).rejects.toMatchObject({
      code: 'INTERNAL',
      message: 'the publish writer thread could not start',
    });
    const output = runPipeline(manifestBytes());
    await expect(
      writer.commit(output, { id: 1, namespace: 'io.github.acme', tokenHash: '', createdAt: '' }),
    ).rejects.toMatchObject({ code: 'INTERNAL' });
    await writer.close();
  });

  it('refuses an in-memory database (another thread cannot share it)', async () => {
    expect(() =>
      startPublishWriter({ dataDir: ':memory:', keysDir: makeTempDir(), origin: 'http://127.0.0.1:1' }),
    ).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
  });
});

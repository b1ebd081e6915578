// Backpressure (issue 24 §3): beyond `maxPendingWrites` writes in flight, a write is answered 503 SERVER_BUSY with
// Retry-After at once, having read, checked and written nothing; the writes in flight still commit.

import { afterAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import type { PipelineRunner } from '../../src/registry/pipeline-runner.ts';
import { WriteAdmission } from '../../src/registry/write-admission.ts';
import {
  cleanupTempDirs,
  createTestEnv,
  expectProblem,
  manifestBytes,
  postManifest,
  postYank,
  snapshotDb,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

/** A pipeline that holds each run until released, so writes stay in flight as long as the test wants. */
function createHeldPipeline(): { pipeline: PipelineRunner; started: () => number; release: () => void } {
  let runs = 0;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    pipeline: {
      run: async (bytes, limits) => {
        runs++;
        await gate;
        return runPipeline(bytes, limits);
      },
      whenReady: async () => {},
      close: async () => {},
    },
    started: () => runs,
    release,
  };
}

describe('POST /v1/manifests under backpressure', () => {
  it('answers 503 SERVER_BUSY with Retry-After beyond the bound, writes nothing for it, and commits the ones in flight', async () => {
    const held = createHeldPipeline();
    const env = await createTestEnv({ onDisk: true, pipeline: held.pipeline, maxPendingWrites: 2 });
    const first = postManifest(env.app, manifestBytes({ version: '1.0.0' }), env.token);
    const second = postManifest(env.app, manifestBytes({ version: '1.0.1' }), env.token);
    await expect.poll(held.started).toBe(2);
    const before = snapshotDb(env.store);

    const refused = await postManifest(env.app, manifestBytes({ version: '1.0.2' }), env.token);
    await expectProblem(refused, 'SERVER_BUSY');
    expect(refused.headers.get('Retry-After')).toBe('1');
    expect(held.started()).toBe(2); // its pipeline never ran
    expect(snapshotDb(env.store)).toEqual(before);
    const yank = await postYank(env.app, '/v1/manifests/io.github.acme/widgets/1.0.0', { reason: 'busy' }, env.token);
    await expectProblem(yank, 'SERVER_BUSY');

    held.release();
    expect((await first).status).toBe(201);
    expect((await second).status).toBe(201);
    expect(await env.store.getVersion('io.github.acme/widgets', '1.0.2')).toBeUndefined();
    // Room again: the refused publish goes through as it was.
    expect((await postManifest(env.app, manifestBytes({ version: '1.0.2' }), env.token)).status).toBe(201);
    await env.closeAll();
  });
});

describe('WriteAdmission', () => {
  it('never calls refused work, counts what is in flight, and resolves whenIdle once all settled', async () => {
    const admission = new WriteAdmission(1);
    let finish!: () => void;
    const running = admission.admit(() => new Promise<string>((resolve) => (finish = () => resolve('done'))));
    expect(admission.pending).toBe(1);
    let called = false;
    await expect(
      admission.admit(async () => {
        called = true;
      }),
    ).rejects.toMatchObject({ code: 'SERVER_BUSY' });
    expect(called).toBe(false);
    const idle = admission.whenIdle();
    finish();
    expect(await running).toBe('done');
    await idle;
    expect(admission.pending).toBe(0);
    await expect(admission.admit(async () => 'again')).resolves.toBe('again');
    await expect(
      admission.admit(async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(admission.pending).toBe(0);
    expect(() => new WriteAdmission(0)).toThrow(/positive integer/);
  });
});

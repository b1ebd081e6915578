// The worker pool batches jobs and replies into one message per turn of each event loop, and a batch that cannot
// cross the thread boundary fails only its own jobs.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolsealError } from '../../src/core/errors.ts';
import { startWorkerPool, type WorkerPool } from '../../src/runtime/worker-thread.ts';
import type { BatchingJob, BatchingReply } from '../fixtures/batching-worker.ts';

describe('startWorkerPool / serveWorkerJobs batching', () => {
  let pool: WorkerPool<BatchingJob, BatchingReply>;
  beforeAll(async () => {
    pool = startWorkerPool<BatchingJob, BatchingReply>({
      moduleUrl: new URL('../fixtures/batching-worker.ts', import.meta.url),
      size: 1,
      role: 'batching test',
      maxHeapMb: 64,
      transferOf: (job) => (job.kind === 'echo' && job.bytes ? [job.bytes.buffer as ArrayBuffer] : []),
    });
    await pool.whenReady();
  });
  afterAll(() => pool.close());

  const counts = async (): Promise<{ received: number; posted: number }> => {
    const { received, posted } = await pool.run({ kind: 'counts' });
    return { received: received!, posted: posted! };
  };

  it('jobs submitted in one turn travel in one message; each synchronous job is answered at once', async () => {
    const before = await counts();
    const replies = await Promise.all(Array.from({ length: 20 }, (_, value) => pool.run({ kind: 'echo', value })));
    expect(replies.map((reply) => reply.value)).toEqual(Array.from({ length: 20 }, (_, value) => value));
    const after = await counts();
    // One message carried the 20 jobs (plus the one carrying `counts`); every synchronous job had its own reply.
    expect(after.received - before.received).toBe(2);
    expect(after.posted - before.posted).toBe(20 + 1);
  });

  it('replies settled in the same turn (a group commit) share one message', async () => {
    const before = await counts();
    const replies = await Promise.all(Array.from({ length: 15 }, (_, value) => pool.run({ kind: 'later', value })));
    expect(replies.map((reply) => reply.value)).toEqual(Array.from({ length: 15 }, (_, value) => value));
    const after = await counts();
    expect(after.posted - before.posted).toBe(1 + 1);
  });

  it('a buffer moved by two jobs of one batch is moved once, and both jobs see it', async () => {
    const shared = new Uint8Array(64);
    const replies = await Promise.all([
      pool.run({ kind: 'echo', value: 1, bytes: shared }),
      pool.run({ kind: 'echo', value: 2, bytes: shared.subarray(0, 8) }),
    ]);
    expect(replies.map((reply) => reply.byteLength)).toEqual([64, 8]);
    expect(shared.byteLength).toBe(0); // moved, not copied
  });

  it('a job that cannot be posted fails alone with INTERNAL; the rest of its batch runs, and the pool goes on', async () => {
    const outcomes = await Promise.allSettled([
      pool.run({ kind: 'echo', value: 1 }),
      pool.run({ kind: 'echo', value: (() => 2) as unknown as number }),
      pool.run({ kind: 'echo', value: 3 }),
    ]);
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: { value: 1 } });
    expect(outcomes[2]).toEqual({ status: 'fulfilled', value: { value: 3 } });
    expect(outcomes[1]!.status).toBe('rejected');
    expect(((outcomes[1] as PromiseRejectedResult).reason as ToolsealError).code).toBe('INTERNAL');
    await expect(pool.run({ kind: 'echo', value: 4 })).resolves.toEqual({ value: 4 });
  });

  it('a reply that cannot be posted fails that job only; the others of its batch are answered', async () => {
    const before = await counts();
    const outcomes = await Promise.allSettled([
      pool.run({ kind: 'later', value: 1 }),
      pool.run({ kind: 'later', value: 3, unclonable: true }),
      pool.run({ kind: 'later', value: 2 }),
    ]);
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: { value: 1 } });
    expect(outcomes[2]).toEqual({ status: 'fulfilled', value: { value: 2 } });
    expect(outcomes[1]!.status).toBe('rejected');
    expect(((outcomes[1] as PromiseRejectedResult).reason as ToolsealError).code).toBe('INTERNAL');
    // The batch of three could not go as one message, so each went alone (the failure as its error).
    expect((await counts()).posted - before.posted).toBe(1 + 3);
  });
});

// The publish pipeline on worker threads: runPipeline is pure and CPU-bound, so a server runs it beside its event
// loop (higher publish throughput, and a large manifest no longer stalls every other request).

import { availableParallelism } from 'node:os';
import { runPipeline, type PipelineLimits, type PipelineResult } from '../pipeline/index.ts';
import { startWorkerPool } from './worker-thread.ts';

/** What a publish needs from the pipeline (the normalised manifest object stays in the worker). */
export type PipelineOutput = Omit<PipelineResult, 'manifest'>;

/** Runs the pipeline somewhere: inline, or on a pool of worker threads. */
export interface PipelineRunner {
  run(bytes: Uint8Array, limits: Partial<PipelineLimits>): Promise<PipelineOutput>;
  /** Resolves once it can run jobs; rejects with INTERNAL if it cannot (a server checks this at start). */
  whenReady(): Promise<void>;
  close(): Promise<void>;
}

/** The pipeline on the calling thread (tests, CLI, single-core machines). */
export const inlinePipeline: PipelineRunner = {
  run: async (bytes, limits) => runPipeline(bytes, limits),
  whenReady: async () => {},
  close: async () => {},
};

/** A job for pipeline-pool-worker.ts. */
export interface PipelineInput {
  bytes: Uint8Array<ArrayBuffer>;
  limits: Partial<PipelineLimits>;
}

/** Worker threads for a server on this machine: every core but the one the event loop runs on, at most 4. */
export function defaultPipelineWorkers(): number {
  return Math.max(0, Math.min(4, availableParallelism() - 1));
}

export interface PipelinePoolOptions {
  /**
   * Heap limit of each worker in MiB (default 512). A job that needs more kills only its worker: that
   * publish fails with INTERNAL, and a fresh worker takes the slot.
   */
  maxHeapMb?: number;
}

/**
 * A fixed pool of `size` pipeline workers (see startWorkerPool: least-loaded dispatch, a dead worker is
 * replaced, one that cannot start breaks the pool). Refusals keep their code, message and pointer.
 */
export function startPipelinePool(size: number, options: PipelinePoolOptions = {}): PipelineRunner {
  const pool = startWorkerPool<PipelineInput, PipelineOutput>({
    moduleUrl: new URL('./pipeline-pool-worker.ts', import.meta.url),
    size,
    role: 'pipeline',
    maxHeapMb: options.maxHeapMb ?? 512,
    transferOf: (input) => [input.bytes.buffer],
  });
  return {
    // A copy of exactly these bytes, moved (not cloned) to the worker: the caller's buffer may be a view
    // into a larger pooled allocation, which structured cloning would copy whole.
    run: (bytes, limits) => pool.run({ bytes: new Uint8Array(bytes), limits }),
    whenReady: () => pool.whenReady(),
    close: () => pool.close(),
  };
}

// The publish pipeline on worker threads: runPipeline is pure and CPU-bound, so a server runs it beside its event
// loop (higher publish throughput, and a large manifest no longer stalls every other request).

import { availableParallelism } from 'node:os';
import type { PipelineLimits } from '../pipeline/index.ts';
import type { PipelineOutput, PipelineRunner } from '../registry/pipeline-runner.ts';
import { workerModuleUrl } from '../core/worker-source.ts';
import { startWorkerPool } from './worker-thread.ts';

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
    moduleUrl: workerModuleUrl('./pipeline-pool-worker', import.meta.url),
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

// The publish pipeline on worker threads: runPipeline is pure and CPU-bound, so a server runs it beside its event
// loop (higher publish throughput, and a large manifest no longer stalls every other request).

import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ToolsealError, type ErrorCode } from '../errors.ts';
import { runPipeline, type PipelineLimits, type PipelineResult } from '../pipeline/index.ts';

/** What a publish needs from the pipeline (the normalised manifest object stays in the worker). */
export type PipelineOutput = Omit<PipelineResult, 'manifest'>;

/** Runs the pipeline somewhere: inline, or on a pool of worker threads. */
export interface PipelineRunner {
  run(bytes: Uint8Array, limits: Partial<PipelineLimits>): Promise<PipelineOutput>;
  close(): Promise<void>;
}

/** The pipeline on the calling thread (tests, CLI, single-core machines). */
export const inlinePipeline: PipelineRunner = {
  run: async (bytes, limits) => runPipeline(bytes, limits),
  close: async () => {},
};

/** Messages between the pool and pipeline-pool-worker.ts. */
export interface PipelineJob {
  id: number;
  bytes: Uint8Array;
  limits: Partial<PipelineLimits>;
}

export type PipelineReply =
  | { id: number; output: PipelineOutput }
  | { id: number; refusal: { code: ErrorCode; message: string; pointer: string | undefined } }
  | { id: number; failure: string };

/** Worker threads for a server on this machine: every core but the one the event loop runs on, at most 4. */
export function defaultPipelineWorkers(): number {
  return Math.max(0, Math.min(4, availableParallelism() - 1));
}

interface PooledWorker {
  worker: Worker;
  inFlight: Map<number, { resolve: (output: PipelineOutput) => void; reject: (error: unknown) => void }>;
}

// The worker module is TypeScript, like the rest of the registry: the worker registers tsx's loader
// (Node 20 does not apply --import hooks to a worker's entry module), then imports it.
const TSX_API = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
const WORKER_BOOTSTRAP = `import(${JSON.stringify(TSX_API)})
  .then((tsx) => tsx.tsImport(${JSON.stringify(new URL('./pipeline-pool-worker.ts', import.meta.url).href)}, ${JSON.stringify(import.meta.url)}))
  .catch((error) => { process.nextTick(() => { throw error; }); });`;

/**
 * A fixed pool of `size` workers; each job goes to the worker with the fewest jobs in flight. A worker
 * that dies fails its jobs with INTERNAL and is replaced. Idle workers do not keep the process alive.
 */
export interface PipelinePoolOptions {
  /**
   * Heap limit of each worker in MiB (default 512). A job that needs more kills only its worker: that
   * publish fails with INTERNAL, and a fresh worker takes the slot.
   */
  maxHeapMb?: number;
}

export function startPipelinePool(size: number, options: PipelinePoolOptions = {}): PipelineRunner {
  if (!Number.isSafeInteger(size) || size < 1) throw new ToolsealError('BAD_REQUEST', 'a pipeline pool needs at least one worker');
  const maxHeapMb = options.maxHeapMb ?? 512;
  let nextId = 0;
  let closed = false;
  const workers: PooledWorker[] = [];

  const spawn = (slot: number): PooledWorker => {
    const worker = new Worker(WORKER_BOOTSTRAP, { eval: true, resourceLimits: { maxOldGenerationSizeMb: maxHeapMb } });
    const pooled: PooledWorker = { worker, inFlight: new Map() };
    worker.unref();
    worker.on('message', (reply: PipelineReply) => {
      const pending = pooled.inFlight.get(reply.id);
      if (!pending) return;
      pooled.inFlight.delete(reply.id);
      if (pooled.inFlight.size === 0) worker.unref();
      if ('output' in reply) pending.resolve(reply.output);
      else if ('refusal' in reply) pending.reject(new ToolsealError(reply.refusal.code, reply.refusal.message, { pointer: reply.refusal.pointer }));
      else pending.reject(new ToolsealError('INTERNAL', 'the pipeline failed unexpectedly', { cause: new Error(reply.failure) }));
    });
    const fail = (cause: unknown): void => {
      for (const pending of pooled.inFlight.values()) pending.reject(new ToolsealError('INTERNAL', 'a pipeline worker stopped', { cause }));
      pooled.inFlight.clear();
      if (!closed && workers[slot] === pooled) workers[slot] = spawn(slot);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`pipeline worker exited with code ${code}`)));
    return pooled;
  };
  for (let slot = 0; slot < size; slot++) workers.push(spawn(slot));

  return {
    run(bytes, limits) {
      if (closed) return Promise.reject(new ToolsealError('INTERNAL', 'the pipeline pool is closed'));
      let chosen = workers[0]!;
      for (const candidate of workers) if (candidate.inFlight.size < chosen.inFlight.size) chosen = candidate;
      const id = nextId++;
      // A copy of exactly these bytes, moved (not cloned) to the worker: the caller's buffer may be a
      // view into a larger pooled allocation, which structured cloning would copy whole.
      const copy = new Uint8Array(bytes);
      return new Promise<PipelineOutput>((resolve, reject) => {
        chosen.inFlight.set(id, { resolve, reject });
        if (chosen.inFlight.size === 1) chosen.worker.ref();
        chosen.worker.postMessage({ id, bytes: copy, limits } satisfies PipelineJob, [copy.buffer]);
      });
    },
    async close() {
      closed = true;
      await Promise.all(workers.map((pooled) => pooled.worker.terminate()));
    },
  };
}

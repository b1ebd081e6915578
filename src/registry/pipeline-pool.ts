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

/** Messages between the pool and pipeline-pool-worker.ts. */
export interface PipelineJob {
  id: number;
  bytes: Uint8Array<ArrayBuffer>;
  limits: Partial<PipelineLimits>;
}

export type PipelineReply =
  | { id: number; output: PipelineOutput }
  | { id: number; refusal: { code: ErrorCode; message: string; pointer: string | undefined } }
  | { id: number; failure: string };

/** Everything a worker posts: one `ready` once its module has loaded, then one reply per job. */
export type PipelineWorkerMessage = PipelineReply | { ready: true };

/** Worker threads for a server on this machine: every core but the one the event loop runs on, at most 4. */
export function defaultPipelineWorkers(): number {
  return Math.max(0, Math.min(4, availableParallelism() - 1));
}

interface PooledWorker {
  worker: Worker;
  /**
   * It has loaded its module (said so once). Jobs wait in `unsent` until then, so no job can kill a worker
   * that is not ready, and a worker that dies before that failed to start: it is not replaced.
   */
  ready: boolean;
  unsent: PipelineJob[];
  inFlight: Map<number, { resolve: (output: PipelineOutput) => void; reject: (error: unknown) => void }>;
}

// The worker module is TypeScript, like the rest of the registry: the worker registers tsx's loader
// (Node 20 does not apply --import hooks to a worker's entry module), then imports it.
// Built on first use, so the inline pipeline never needs tsx resolved.
function buildWorkerBootstrap(): string {
  const tsxApi = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
  const workerModule = new URL('./pipeline-pool-worker.ts', import.meta.url).href;
  return `import(${JSON.stringify(tsxApi)})
  .then((tsx) => tsx.tsImport(${JSON.stringify(workerModule)}, ${JSON.stringify(import.meta.url)}))
  .catch((error) => { process.nextTick(() => { throw error; }); });`;
}

export interface PipelinePoolOptions {
  /**
   * Heap limit of each worker in MiB (default 512). A job that needs more kills only its worker: that
   * publish fails with INTERNAL, and a fresh worker takes the slot.
   */
  maxHeapMb?: number;
}

/**
 * A fixed pool of `size` workers; each job goes to the worker with the fewest jobs in flight. A worker
 * that dies fails its jobs with INTERNAL and is replaced, unless it died before it was ready: then the
 * pool is broken (every job fails with INTERNAL, naming the cause) rather than respawning in a loop.
 * Idle workers do not keep the process alive.
 */
export function startPipelinePool(size: number, options: PipelinePoolOptions = {}): PipelineRunner {
  if (!Number.isSafeInteger(size) || size < 1) throw new ToolsealError('BAD_REQUEST', 'a pipeline pool needs at least one worker');
  const maxHeapMb = options.maxHeapMb ?? 512;
  const bootstrap = buildWorkerBootstrap();
  let nextId = 0;
  let closed = false;
  let startupFailure: unknown;
  const workers: PooledWorker[] = [];
  const startupError = (): ToolsealError => new ToolsealError('INTERNAL', 'the pipeline workers could not start', { cause: startupFailure });
  let settleReadiness: () => void = () => {};
  const readiness = new Promise<void>((resolve, reject) => {
    settleReadiness = () => (startupFailure === undefined ? resolve() : reject(startupError()));
  });
  readiness.catch(() => {}); // also reported by every run() and by whenReady()

  const spawn = (slot: number): PooledWorker => {
    const worker = new Worker(bootstrap, { eval: true, resourceLimits: { maxOldGenerationSizeMb: maxHeapMb } });
    const pooled: PooledWorker = { worker, inFlight: new Map(), ready: false, unsent: [] };
    worker.unref();
    worker.on('message', (reply: PipelineWorkerMessage) => {
      if ('ready' in reply) {
        pooled.ready = true;
        if (workers.every((candidate) => candidate.ready)) settleReadiness();
        for (const job of pooled.unsent.splice(0)) worker.postMessage(job, [job.bytes.buffer]);
        return;
      }
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
      pooled.unsent.length = 0;
      if (closed || workers[slot] !== pooled) return;
      if (pooled.ready) workers[slot] = spawn(slot);
      else {
        startupFailure ??= cause;
        settleReadiness();
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`pipeline worker exited with code ${code}`)));
    return pooled;
  };
  for (let slot = 0; slot < size; slot++) workers.push(spawn(slot));

  return {
    run(bytes, limits) {
      if (closed) return Promise.reject(new ToolsealError('INTERNAL', 'the pipeline pool is closed'));
      if (startupFailure !== undefined) return Promise.reject(startupError());
      let chosen = workers[0]!;
      for (const candidate of workers) if (candidate.inFlight.size < chosen.inFlight.size) chosen = candidate;
      const id = nextId++;
      // A copy of exactly these bytes, moved (not cloned) to the worker: the caller's buffer may be a
      // view into a larger pooled allocation, which structured cloning would copy whole.
      const copy = new Uint8Array(bytes);
      return new Promise<PipelineOutput>((resolve, reject) => {
        chosen.inFlight.set(id, { resolve, reject });
        if (chosen.inFlight.size === 1) chosen.worker.ref();
        const job: PipelineJob = { id, bytes: copy, limits };
        if (chosen.ready) chosen.worker.postMessage(job, [copy.buffer]);
        else chosen.unsent.push(job);
      });
    },
    whenReady: () => readiness,
    async close() {
      closed = true;
      await Promise.all(workers.map((pooled) => pooled.worker.terminate()));
    },
  };
}

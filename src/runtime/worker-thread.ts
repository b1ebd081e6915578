// Shared plumbing for the registry's worker threads (the pipeline pool, the publish writer): a TypeScript module
// loaded in a worker, a fixed pool of such workers with a ready handshake, jobs and replies batched into one message
// per turn of each event loop, and errors carried across the thread boundary with their code, message and pointer.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, Worker } from 'node:worker_threads';
import { isToolsealError, ToolsealError, type ErrorCode } from '../core/errors.ts';

/** An error as posted between threads: a refusal keeps its code and pointer; anything else is a failure. */
export type PostedError =
  | { refusal: { code: ErrorCode; message: string; pointer: string | undefined } }
  | { failure: string };

/**
 * Messages between a pool and its workers. Jobs and replies travel in batches (arrays): every message costs a
 * wake-up, a callback into JavaScript and a microtask checkpoint on the receiving thread, so a pool posts the
 * jobs of one turn of its event loop together, and a worker its replies of one turn.
 */
export interface WorkerJob<Input> {
  id: number;
  input: Input;
}
export type WorkerReply<Output> = { id: number } & ({ output: Output } | PostedError);
/** Everything a worker posts: one `ready` once its module has loaded (and set itself up), then batches of replies. */
export type WorkerMessage<Output> = WorkerReply<Output>[] | { ready: true };

/** `[bytes.buffer]` when the view spans its whole buffer, so moving it moves nothing else; otherwise `[]` (copied). */
export function transferableBuffers(bytes: Uint8Array): ArrayBuffer[] {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
    ? [bytes.buffer]
    : [];
}

export function toPostedError(error: unknown): PostedError {
  if (isToolsealError(error)) return { refusal: { code: error.code, message: error.message, pointer: error.pointer } };
  return { failure: error instanceof Error ? error.message : String(error) };
}

/** The error a caller sees: the refusal as it was, or INTERNAL saying `what` failed, with the failure as its cause. */
export function fromPostedError(posted: PostedError, what: string): ToolsealError {
  if ('refusal' in posted)
    return new ToolsealError(posted.refusal.code, posted.refusal.message, { pointer: posted.refusal.pointer });
  return new ToolsealError('INTERNAL', what, { cause: new Error(posted.failure) });
}

/**
 * Source for `new Worker(source, { eval: true })` that imports the TypeScript module at `moduleUrl`: it registers
 * tsx's loader first (Node 20 does not apply --import hooks to a worker's entry module). A failed import is
 * rethrown in the worker, so the parent sees an `error` event before any `ready` message.
 */
function buildTsWorkerSource(moduleUrl: URL): string {
  const tsxApi = pathToFileURL(
    join(dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs'),
  ).href;
  return `import(${JSON.stringify(tsxApi)})
  .then((tsx) => tsx.tsImport(${JSON.stringify(moduleUrl.href)}, ${JSON.stringify(import.meta.url)}))
  .catch((error) => { process.nextTick(() => { throw error; }); });`;
}

export interface WorkerPoolOptions<Input> {
  /** The worker module (TypeScript); it calls serveWorkerJobs. */
  moduleUrl: URL;
  size: number;
  /** What the workers do, for error messages: "pipeline", "publish writer". */
  role: string;
  /** Heap limit of each worker in MiB: a job that needs more kills only its worker. */
  maxHeapMb: number;
  workerData?: unknown;
  /** Buffers of `input` to move to the worker instead of copying. */
  transferOf?: (input: Input) => ArrayBuffer[];
}

export interface WorkerPool<Input, Output> {
  run(input: Input): Promise<Output>;
  /** Resolves once every worker is ready; rejects with INTERNAL if one could not start. */
  whenReady(): Promise<void>;
  /** Stops the workers; jobs still in flight fail with INTERNAL. */
  close(): Promise<void>;
}

interface PooledWorker<Input, Output> {
  worker: Worker;
  /**
   * It has said it is ready. Jobs wait in `outbox` until then, so no job can kill a worker that is not ready,
   * and a worker that dies before that failed to start: it is not replaced.
   */
  ready: boolean;
  /** Jobs not posted yet: they leave together at the end of this turn of the event loop (or once ready). */
  outbox: WorkerJob<Input>[];
  inFlight: Map<number, { resolve: (output: Output) => void; reject: (error: unknown) => void }>;
}

/**
 * A fixed pool of workers; each job goes to the worker with the fewest jobs in flight. A worker that dies fails
 * its jobs with INTERNAL and is replaced, unless it died before it was ready: then the pool is broken (every job
 * fails with INTERNAL, naming the cause) rather than respawning in a loop. Idle workers do not keep the process alive.
 */
export function startWorkerPool<Input, Output>(options: WorkerPoolOptions<Input>): WorkerPool<Input, Output> {
  const { role } = options;
  if (!Number.isSafeInteger(options.size) || options.size < 1)
    throw new ToolsealError('BAD_REQUEST', `a ${role} pool needs at least one worker`);
  // Built here, not at import, so nothing running inline ever needs tsx resolved.
  const source = buildTsWorkerSource(options.moduleUrl);
  let nextId = 0;
  let closed = false;
  let startupFailure: unknown;
  const workers: PooledWorker<Input, Output>[] = [];
  const starting = options.size === 1 ? `the ${role} thread` : `the ${role} workers`;
  const startupError = (): ToolsealError =>
    new ToolsealError('INTERNAL', `${starting} could not start`, { cause: startupFailure });
  let settleReadiness: () => void = () => {};
  const readiness = new Promise<void>((resolve, reject) => {
    settleReadiness = () => (startupFailure === undefined ? resolve() : reject(startupError()));
  });
  readiness.catch(() => {}); // also reported by every run() and by whenReady()

  const settle = (pooled: PooledWorker<Input, Output>, reply: WorkerReply<Output>): void => {
    const pending = pooled.inFlight.get(reply.id);
    if (!pending) return;
    pooled.inFlight.delete(reply.id);
    if (pooled.inFlight.size === 0) pooled.worker.unref();
    if ('output' in reply) pending.resolve(reply.output);
    else pending.reject(fromPostedError(reply, `the ${role} failed unexpectedly`));
  };
  const transferOfJobs = (jobs: WorkerJob<Input>[]): ArrayBuffer[] | undefined =>
    // A buffer shared by two jobs is moved once (structured cloning keeps both views of it).
    options.transferOf ? [...new Set(jobs.flatMap((job) => options.transferOf!(job.input)))] : undefined;
  /** Post a ready worker's outbox as one message. A job that cannot be posted (not cloneable) fails alone. */
  const postOutbox = (pooled: PooledWorker<Input, Output>): void => {
    if (!pooled.ready || pooled.outbox.length === 0) return;
    const jobs = pooled.outbox;
    pooled.outbox = [];
    try {
      pooled.worker.postMessage(jobs, transferOfJobs(jobs));
    } catch {
      for (const job of jobs) {
        try {
          pooled.worker.postMessage([job], transferOfJobs([job]));
        } catch (cause) {
          settle(pooled, { id: job.id, ...toPostedError(cause) });
        }
      }
    }
  };
  let flushScheduled = false;
  const flushOutboxes = (): void => {
    flushScheduled = false;
    for (const pooled of workers) postOutbox(pooled);
  };

  const spawn = (slot: number): PooledWorker<Input, Output> => {
    const worker = new Worker(source, {
      eval: true,
      workerData: options.workerData,
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb },
    });
    const pooled: PooledWorker<Input, Output> = { worker, inFlight: new Map(), ready: false, outbox: [] };
    worker.unref();
    worker.on('message', (message: WorkerMessage<Output>) => {
      if (Array.isArray(message)) {
        for (const reply of message) settle(pooled, reply);
        return;
      }
      pooled.ready = true;
      if (workers.every((candidate) => candidate.ready)) settleReadiness();
      postOutbox(pooled);
    });
    const fail = (cause: unknown): void => {
      for (const pending of pooled.inFlight.values())
        pending.reject(new ToolsealError('INTERNAL', `a ${role} worker stopped`, { cause }));
      pooled.inFlight.clear();
      pooled.outbox = [];
      if (closed || workers[slot] !== pooled) return;
      if (pooled.ready) workers[slot] = spawn(slot);
      else {
        startupFailure ??= cause;
        settleReadiness();
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`${role} worker exited with code ${code}`)));
    return pooled;
  };
  for (let slot = 0; slot < options.size; slot++) workers.push(spawn(slot));

  return {
    run(input) {
      if (closed) return Promise.reject(new ToolsealError('INTERNAL', `the ${role} pool is closed`));
      if (startupFailure !== undefined) return Promise.reject(startupError());
      let chosen = workers[0]!;
      for (const candidate of workers) if (candidate.inFlight.size < chosen.inFlight.size) chosen = candidate;
      const job: WorkerJob<Input> = { id: nextId++, input };
      return new Promise<Output>((resolve, reject) => {
        chosen.inFlight.set(job.id, { resolve, reject });
        if (chosen.inFlight.size === 1) chosen.worker.ref();
        chosen.outbox.push(job);
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flushOutboxes);
        }
      });
    },
    whenReady: () => readiness,
    async close() {
      closed = true;
      await Promise.all(workers.map((pooled) => pooled.worker.terminate()));
    },
  };
}

/**
 * The worker side: set up (`setUp` may throw or reject: the worker then fails to start), say ready, and answer
 * every job with `handle`'s output (moving the buffers `transferOf` names) or its error.
 */
export async function serveWorkerJobs<Input, Output>(
  setUp: () => unknown,
  handle: (input: Input) => Output | Promise<Output>,
  transferOf?: (output: Output) => ArrayBuffer[],
): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('this module runs only as a worker thread');
  await setUp();
  let outbox: WorkerReply<Output>[] = [];
  let transfer: ArrayBuffer[] = [];
  let flushQueued = false;
  const flush = (): void => {
    flushQueued = false;
    if (outbox.length === 0) return;
    const replies = outbox;
    const moved = transfer;
    outbox = [];
    transfer = [];
    try {
      port.postMessage(replies, [...new Set(moved)]);
    } catch {
      // One reply that cannot be posted (e.g. not cloneable) must not lose the others: post them one by one.
      for (const reply of replies) {
        try {
          port.postMessage([reply], 'output' in reply ? transferOf?.(reply.output) : undefined);
        } catch (error) {
          port.postMessage([{ id: reply.id, ...toPostedError(error) }]);
        }
      }
    }
  };
  /**
   * A synchronous job is answered at once: a batch of CPU-bound jobs answered only at its end would make the
   * threads take turns instead of overlapping. Replies settled by promises wait for a microtask, which runs after
   * the reactions already queued (every publish one group commit settles), so they share one message.
   */
  const reply = (message: WorkerReply<Output>, moved: ArrayBuffer[] | undefined, now: boolean): void => {
    outbox.push(message);
    if (moved) transfer.push(...moved);
    if (now) flush();
    else if (!flushQueued) {
      flushQueued = true;
      queueMicrotask(flush);
    }
  };
  port.on('message', (jobs: WorkerJob<Input>[]) => {
    for (const { id, input } of jobs) {
      let pending: Output | Promise<Output>;
      try {
        pending = handle(input);
      } catch (error) {
        reply({ id, ...toPostedError(error) }, undefined, true);
        continue;
      }
      if (!(pending instanceof Promise)) {
        reply({ id, output: pending }, transferOf?.(pending), true);
        continue;
      }
      pending.then(
        (output) => reply({ id, output }, transferOf?.(output), false),
        (error: unknown) => reply({ id, ...toPostedError(error) }, undefined, false),
      );
    }
  });
  port.postMessage({ ready: true } satisfies WorkerMessage<Output>);
}

// Shared plumbing for the registry's worker threads (the pipeline pool, the publish writer): a module loaded in a
// worker (JavaScript from dist/ as it is, TypeScript from src/ through tsx), a fixed pool of such workers with a ready
// handshake, jobs and replies batched into one message per turn of each event loop, and errors carried across the
// thread boundary with their code, message and pointer.

import { parentPort, Worker } from 'node:worker_threads';
import { isToolsealError, ToolsealError, type ErrorCode } from '../core/errors.ts';
import { buildWorkerSource } from '../core/worker-source.ts';

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

export interface WorkerPoolOptions<Input> {
  /** The worker module (see workerModuleUrl); it calls serveWorkerJobs. */
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
  if (!Number.isSafeInteger(options.size) || options.size < 1) {
    throw new ToolsealError('BAD_REQUEST', `a ${options.role} pool needs at least one worker`);
  }
  const pool = new FixedWorkerPool<Input, Output>(options);
  return { run: (input) => pool.run(input), whenReady: () => pool.readiness, close: () => pool.close() };
}

class FixedWorkerPool<Input, Output> {
  readonly readiness: Promise<void>;
  private readonly source: string;
  private readonly workers: PooledWorker<Input, Output>[] = [];
  private readonly starting: string;
  private nextId = 0;
  private closed = false;
  private startupFailure: unknown;
  private flushScheduled = false;
  private settleReadiness: () => void = () => {};

  constructor(private readonly options: WorkerPoolOptions<Input>) {
    // Built here, not at import, so nothing running inline ever needs tsx resolved.
    this.source = buildWorkerSource(options.moduleUrl);
    this.starting = options.size === 1 ? `the ${options.role} thread` : `the ${options.role} workers`;
    this.readiness = new Promise<void>((resolve, reject) => {
      this.settleReadiness = () => (this.startupFailure === undefined ? resolve() : reject(this.startupError()));
    });
    this.readiness.catch(() => {}); // also reported by every run() and by whenReady()
    for (let slot = 0; slot < options.size; slot++) this.workers.push(this.spawn(slot));
  }

  run(input: Input): Promise<Output> {
    if (this.closed) return Promise.reject(new ToolsealError('INTERNAL', `the ${this.options.role} pool is closed`));
    if (this.startupFailure !== undefined) return Promise.reject(this.startupError());
    let chosen = this.workers[0]!;
    for (const candidate of this.workers) if (candidate.inFlight.size < chosen.inFlight.size) chosen = candidate;
    const job: WorkerJob<Input> = { id: this.nextId++, input };
    return new Promise<Output>((resolve, reject) => {
      chosen.inFlight.set(job.id, { resolve, reject });
      if (chosen.inFlight.size === 1) chosen.worker.ref();
      chosen.outbox.push(job);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flushOutboxes());
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((pooled) => pooled.worker.terminate()));
  }

  private startupError(): ToolsealError {
    return new ToolsealError('INTERNAL', `${this.starting} could not start`, { cause: this.startupFailure });
  }

  private settle(pooled: PooledWorker<Input, Output>, reply: WorkerReply<Output>): void {
    const pending = pooled.inFlight.get(reply.id);
    if (!pending) return;
    pooled.inFlight.delete(reply.id);
    if (pooled.inFlight.size === 0) pooled.worker.unref();
    if ('output' in reply) pending.resolve(reply.output);
    else pending.reject(fromPostedError(reply, `the ${this.options.role} failed unexpectedly`));
  }

  private transferOfJobs(jobs: WorkerJob<Input>[]): ArrayBuffer[] | undefined {
    const { transferOf } = this.options;
    // A buffer shared by two jobs is moved once (structured cloning keeps both views of it).
    return transferOf ? [...new Set(jobs.flatMap((job) => transferOf(job.input)))] : undefined;
  }

  /** Post a ready worker's outbox as one message. A job that cannot be posted (not cloneable) fails alone. */
  private postOutbox(pooled: PooledWorker<Input, Output>): void {
    if (!pooled.ready || pooled.outbox.length === 0) return;
    const jobs = pooled.outbox;
    pooled.outbox = [];
    try {
      pooled.worker.postMessage(jobs, this.transferOfJobs(jobs));
    } catch {
      for (const job of jobs) {
        try {
          pooled.worker.postMessage([job], this.transferOfJobs([job]));
        } catch (cause) {
          this.settle(pooled, { id: job.id, ...toPostedError(cause) });
        }
      }
    }
  }

  private flushOutboxes(): void {
    this.flushScheduled = false;
    for (const pooled of this.workers) this.postOutbox(pooled);
  }

  private spawn(slot: number): PooledWorker<Input, Output> {
    const { options } = this;
    const worker = new Worker(this.source, {
      eval: true,
      workerData: options.workerData,
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb },
    });
    const pooled: PooledWorker<Input, Output> = { worker, inFlight: new Map(), ready: false, outbox: [] };
    worker.unref();
    worker.on('message', (message: WorkerMessage<Output>) => {
      if (Array.isArray(message)) {
        for (const reply of message) this.settle(pooled, reply);
        return;
      }
      pooled.ready = true;
      if (this.workers.every((candidate) => candidate.ready)) this.settleReadiness();
      this.postOutbox(pooled);
    });
    worker.on('error', (cause) => this.fail(pooled, slot, cause));
    worker.on('exit', (code) => this.fail(pooled, slot, new Error(`${options.role} worker exited with code ${code}`)));
    return pooled;
  }

  private fail(pooled: PooledWorker<Input, Output>, slot: number, cause: unknown): void {
    for (const pending of pooled.inFlight.values()) {
      pending.reject(new ToolsealError('INTERNAL', `a ${this.options.role} worker stopped`, { cause }));
    }
    pooled.inFlight.clear();
    pooled.outbox = [];
    if (this.closed || this.workers[slot] !== pooled) return;
    if (pooled.ready) this.workers[slot] = this.spawn(slot);
    else {
      this.startupFailure ??= cause;
      this.settleReadiness();
    }
  }
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

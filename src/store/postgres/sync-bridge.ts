// A synchronous connection to PostgreSQL (issue 16 §1): the driver runs on a worker thread (connection-worker.ts) and
// the calling thread blocks per call with Atomics.wait on a shared signal, then takes the answer with
// receiveMessageOnPort (the technique synckit uses). Each call is one round trip, during which the event loop waits.

import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { ToolsealError } from '../../core/errors.ts';
import { buildWorkerSource, workerModuleUrl } from '../../core/worker-source.ts';
import type {
  ConnectionReply,
  ConnectionRequest,
  ConnectionTarget,
  ConnectionWorkerData,
  PostedDatabaseError,
} from './connection-protocol.ts';

export type Row = Record<string, unknown>;

/** A database error from the connection thread: `code` is the SQLSTATE (or a Node code such as ECONNREFUSED). */
export class DatabaseError extends Error {
  override readonly name = 'DatabaseError';
  readonly code: string | undefined;
  readonly constraint: string | undefined;

  constructor(posted: PostedDatabaseError) {
    super(posted.message);
    this.code = posted.code;
    this.constraint = posted.constraint;
  }
}

export interface SyncConnectionOptions {
  target: ConnectionTarget;
  migrationsFolder: string;
  /** How long one call may block before the connection is given up (STORAGE_UNAVAILABLE). */
  callTimeoutMs: number;
  /** How long opening (connect, or PGlite's start, and migrations) may take. */
  openTimeoutMs: number;
}

export class SyncConnection {
  private readonly signal = new Int32Array(new SharedArrayBuffer(4));
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private nextId = 0;
  private broken: ToolsealError | undefined;
  private closed = false;

  /** Start the connection thread and open the connection (migrations applied); throws what opening threw. */
  constructor(private readonly options: SyncConnectionOptions) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const data: ConnectionWorkerData = { signal: this.signal, port: port2 };
    this.worker = new Worker(buildWorkerSource(workerModuleUrl('./connection-worker', import.meta.url)), {
      eval: true,
      workerData: data,
      transferList: [port2],
    });
    this.worker.unref();
    this.worker.on('error', () => {}); // seen by the caller as a call that never answers
    try {
      this.call(
        { op: 'open', target: options.target, migrationsFolder: options.migrationsFolder },
        options.openTimeoutMs,
      );
    } catch (error) {
      this.shutDown();
      throw error;
    }
  }

  query(sql: string, params: readonly unknown[] = []): Row[] {
    return this.call({ op: 'query', sql, params: [...params] }, this.options.callTimeoutMs);
  }

  exec(sql: string): void {
    this.call({ op: 'exec', sql }, this.options.callTimeoutMs);
  }

  close(): void {
    if (this.closed) return;
    try {
      if (this.broken === undefined) this.call({ op: 'close' }, this.options.callTimeoutMs);
    } catch {
      // closing anyway
    } finally {
      this.shutDown();
    }
  }

  private shutDown(): void {
    this.closed = true;
    this.port.close();
    void this.worker.terminate();
  }

  /** Post one request and block until its reply (or the timeout: then the connection is broken for good). */
  private call(request: DistributiveOmit<ConnectionRequest, 'id'>, timeoutMs: number): Row[] {
    if (this.broken) throw this.broken;
    if (this.closed) throw new ToolsealError('STORAGE_UNAVAILABLE', 'the database connection is closed');
    const id = this.nextId++;
    Atomics.store(this.signal, 0, 0);
    this.port.postMessage({ ...request, id } as ConnectionRequest);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const received = receiveMessageOnPort(this.port) as { message: ConnectionReply } | undefined;
      if (received !== undefined && received.message.id === id) return rowsOf(received.message);
      if (received !== undefined) continue; // a late reply to a call that timed out: never, since that breaks
      const left = deadline - Date.now();
      if (left <= 0) {
        this.broken = new ToolsealError('STORAGE_UNAVAILABLE', `the database did not answer within ${timeoutMs} ms`);
        this.shutDown();
        throw this.broken;
      }
      Atomics.wait(this.signal, 0, 0, left);
      Atomics.store(this.signal, 0, 0);
    }
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function rowsOf(reply: ConnectionReply): Row[] {
  if ('error' in reply) throw new DatabaseError(reply.error);
  for (const row of reply.rows) {
    for (const [key, value] of Object.entries(row)) {
      // Structured cloning turns a Buffer into a plain Uint8Array: give the store Buffers, as better-sqlite3 does.
      if (value instanceof Uint8Array && !Buffer.isBuffer(value))
        row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  }
  return reply.rows;
}

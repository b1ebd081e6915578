// Backpressure for writes (issue 24 §3): each process bounds the writes it has in flight; one beyond the bound is
// refused at once with SERVER_BUSY (503 with Retry-After, RFC 9110 §10.2.3), before it has read, checked or written
// anything, instead of queueing until every request times out.

import { ToolsealError } from '../core/errors.ts';

/** The bound when none is configured: enough for a burst of many batches, far below what exhausts memory. */
export const DEFAULT_MAX_PENDING_WRITES = 1024;

export class WriteAdmission {
  private inFlight = 0;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(private readonly maxPending: number = DEFAULT_MAX_PENDING_WRITES) {
    if (!Number.isSafeInteger(maxPending) || maxPending < 1)
      throw new ToolsealError('BAD_REQUEST', 'the bound on pending writes must be a positive integer');
  }

  /** How many writes are in flight now. */
  get pending(): number {
    return this.inFlight;
  }

  /** Run `work` as one write in flight; SERVER_BUSY (and `work` never called) when the bound is reached. */
  async admit<T>(work: () => Promise<T>): Promise<T> {
    if (this.inFlight >= this.maxPending) {
      throw new ToolsealError(
        'SERVER_BUSY',
        `this registry process has ${this.inFlight} writes in flight (its bound): nothing was written; retry after a moment`,
      );
    }
    this.inFlight++;
    try {
      return await work();
    } finally {
      if (--this.inFlight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** Resolve once no write is in flight (for shutdown: the store must stay open until they have committed). */
  whenIdle(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

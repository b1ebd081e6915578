// Several registry processes on one database, one log (issue 16 §2): a lease row in the database names the one process
// that sequences the log and signs checkpoints; the others queue their log-writing work in the database and wait for
// its outcome. The lease has a TTL on the database's clock and an epoch (a fencing token) every sequencing transaction
// checks, so a process that lost the lease cannot sequence after its successor has started; the database itself also
// refuses a second leaf at an index and a second checkpoint of a size (the primary keys, and triggers).

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ToolsealError } from '../core/errors.ts';
import type { LogJobRecord, SequencingStore, Store } from '../store/index.ts';
import { decodeLogJobResult, encodeLogJob, type LogJob, type LogJobResult } from './log-jobs.ts';

export type SequencerRole = 'sequencer' | 'follower';

export interface SequencerOptions {
  store: Store & SequencingStore;
  /** This process's name in the lease (default: host, pid and a random suffix). */
  holder?: string;
  /** How long a lease lasts unless renewed (default 3000 ms); it is renewed every third of it. */
  leaseMs?: number;
  /**
   * How often the sequencer looks for queued work, and a follower for its outcomes, besides the database's notices
   * (which wake them at once; this catches a lost notice). Default 25 ms.
   */
  pollMs?: number;
  /** How long a follower waits for the sequencer before it withdraws its work (default 30 s). */
  jobTimeoutMs?: number;
  /** Runs claimed jobs inside the sequencer's transaction, writing each one's outcome (the registry's). */
  execute?: (jobs: LogJobRecord[]) => Promise<void>;
  /** After a transaction that ran jobs has committed (the registry records its checkpoint then, never inside it). */
  afterCommit?: () => Promise<void>;
  /** After becoming sequencer (and each renewal): signs a checkpoint over leaves no checkpoint covers yet. */
  onSequencing?: () => Promise<void>;
  /**
   * Once per takeover (each epoch at which this process takes the lease, the first at start included), started after
   * onSequencing and not awaited by the renewal: work a process that followed until now owes the log (the registry
   * backfills Sigstore bundles). A failure is reported as a `takeover` error and never costs the lease; close() waits
   * for it.
   */
  onTakeover?: () => Promise<void>;
  /** Role changes and failures of the loop, for the server's log. */
  onEvent?: (event: SequencerEvent) => void;
}

export type SequencerEvent =
  | { type: 'role'; role: SequencerRole; epoch: number; holder: string }
  | { type: 'error'; where: 'lease' | 'takeover' | 'jobs' | 'outcomes'; error: unknown };

/** Queued work answered in one batch. */
const CLAIM_LIMIT = 256;
/** Finished jobs are deleted by the sequencer this long after they finished (their submitters have read them). */
const PURGE_AFTER_MS = 60_000;
/** How often the sequencer purges. */
const PURGE_EVERY_MS = 10_000;

interface Waiter {
  resolve: (result: LogJobResult) => void;
  reject: (error: unknown) => void;
  deadline: number;
}

export class Sequencer {
  readonly holder: string;
  private readonly store: Store & SequencingStore;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly jobTimeoutMs: number;
  private epoch = 0;
  /** Until when (this process's monotonic clock) it may act as sequencer: the lease's end, less a margin. */
  private heldUntil = 0;
  private leaseTimer: NodeJS.Timeout | undefined;
  private jobTimer: NodeJS.Timeout | undefined;
  private outcomeTimer: NodeJS.Timeout | undefined;
  private readonly waiters = new Map<number, Waiter>();
  private closed = false;
  private jobsRunning = false;
  private jobsWoken = false;
  private lastPurge = 0;
  private stopWatching: (() => void) | undefined;
  /** The epoch of the last takeover whose onTakeover ran (or runs), so it runs once per takeover, and that run. */
  private takenOverAt: number | undefined;
  private takeover: Promise<void> | undefined;
  /** The role (and epoch) last reported through onEvent, so each change is reported once. */
  private announced: { role: SequencerRole; epoch: number } | undefined;

  constructor(private readonly options: SequencerOptions) {
    this.store = options.store;
    this.holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.leaseMs = options.leaseMs ?? 3000;
    this.pollMs = options.pollMs ?? 25;
    this.jobTimeoutMs = options.jobTimeoutMs ?? 30_000;
  }

  /** Try for the lease once now, then keep renewing (or trying) on a timer. */
  async start(): Promise<void> {
    this.stopWatching = this.store.watchLogJobs((notice) => {
      if (notice.type === 'queued') {
        if (this.isSequencer()) this.wakeJobs();
      } else if (notice.submittedBy === this.holder && this.waiters.size > 0) {
        clearTimeout(this.outcomeTimer);
        this.outcomeTimer = undefined;
        void this.collectOutcomes().then(() => this.scheduleOutcomes());
      }
    });
    await this.renewLease();
    this.leaseTimer = setInterval(() => void this.renewLease(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.leaseTimer.unref();
  }

  get role(): SequencerRole {
    return this.isSequencer() ? 'sequencer' : 'follower';
  }

  /** True while this process holds an unexpired lease (by its own clock, with a margin before the database's end). */
  isSequencer(): boolean {
    return !this.closed && performance.now() < this.heldUntil;
  }

  /** Inside a sequencing transaction: SEQUENCER_UNAVAILABLE unless the database still names this process, at its epoch. */
  async fence(): Promise<void> {
    if (!this.isSequencer()) throw new ToolsealError('SEQUENCER_UNAVAILABLE', 'this process is not the sequencer');
    await this.store.assertSequencerLease(this.holder, this.epoch);
  }

  /**
   * Queue `job` for the sequencer and resolve with its outcome. After `jobTimeoutMs` the job is withdrawn if it is still
   * queued (SEQUENCER_UNAVAILABLE: nothing was written); if the sequencer finished it meanwhile, that outcome stands.
   */
  async submit(job: LogJob): Promise<LogJobResult> {
    if (this.closed) return Promise.reject(new ToolsealError('SEQUENCER_UNAVAILABLE', 'the registry is closing'));
    const { kind, payload } = encodeLogJob(job);
    const id = await this.store.enqueueLogJob(kind, payload, this.holder);
    return new Promise((resolve, reject) => {
      this.waiters.set(id, { resolve, reject, deadline: performance.now() + this.jobTimeoutMs });
      this.scheduleOutcomes();
    });
  }

  /** Stop the timers and give the lease up (the next process takes it at once). Waiting submitters are refused. */
  async close(): Promise<void> {
    if (this.closed) return;
    const wasSequencer = this.isSequencer();
    this.closed = true;
    clearInterval(this.leaseTimer);
    this.stopWatching?.();
    clearTimeout(this.jobTimer);
    clearTimeout(this.outcomeTimer);
    for (const [id, waiter] of this.waiters) await this.settleAbandoned(id, waiter);
    this.waiters.clear();
    await this.takeover; // nothing of a takeover outlives the close (it reports its own failures)
    if (wasSequencer) {
      try {
        await this.store.releaseSequencerLease(this.holder);
      } catch {
        // the lease expires by itself
      }
    }
  }

  private async renewLease(): Promise<void> {
    if (this.closed) return;
    const asked = performance.now();
    try {
      const lease = await this.store.claimSequencerLease(this.holder, this.leaseMs);
      if (lease.holder === this.holder) {
        // A margin of a third of the lease: this process stops before the database would let another start.
        this.heldUntil = asked + (this.leaseMs * 2) / 3;
        this.epoch = lease.epoch;
        this.announce('sequencer', lease.epoch, this.holder);
        await this.options.onSequencing?.();
        this.scheduleJobs(0);
        if (this.takenOverAt !== lease.epoch) {
          // Not awaited: renewals go on meanwhile (the first one's timer is set once start() has it), whatever the
          // work takes; a renewal at the same epoch does not run it again.
          this.takenOverAt = lease.epoch;
          this.takeover = this.runTakeover();
        }
      } else {
        this.heldUntil = 0;
        this.announce('follower', lease.epoch, lease.holder);
      }
    } catch (error) {
      this.heldUntil = 0;
      this.options.onEvent?.({ type: 'error', where: 'lease', error });
    }
  }

  /** onTakeover, its failure reported (never thrown: this process keeps the lease it holds). */
  private async runTakeover(): Promise<void> {
    try {
      await this.options.onTakeover?.();
    } catch (error) {
      this.options.onEvent?.({ type: 'error', where: 'takeover', error });
    }
  }

  /** Report a role change once (a follower's first report only when it had been the sequencer). */
  private announce(role: SequencerRole, epoch: number, holder: string): void {
    const last = this.announced;
    if (last?.role === role && (role === 'follower' || last.epoch === epoch)) return;
    this.announced = { role, epoch };
    if (role === 'follower' && last === undefined) return;
    this.options.onEvent?.({ type: 'role', role, epoch, holder });
  }

  /** Run the queue now rather than at the next poll. */
  private wakeJobs(): void {
    clearTimeout(this.jobTimer);
    this.jobTimer = undefined;
    this.scheduleJobs(0);
  }

  private scheduleJobs(delay: number): void {
    if (this.closed || this.jobTimer !== undefined) return;
    this.jobTimer = setTimeout(() => {
      this.jobTimer = undefined;
      // One batch at a time: a wake-up during a batch runs the queue again right after it.
      if (this.jobsRunning) {
        this.jobsWoken = true;
        return;
      }
      this.jobsRunning = true;
      void this.runQueuedJobs().then((worked) => {
        this.jobsRunning = false;
        const again = worked || this.jobsWoken;
        this.jobsWoken = false;
        if (this.isSequencer()) this.scheduleJobs(again ? 0 : this.pollMs);
      });
    }, delay);
  }

  /** One batch of queued work in one fenced transaction; true when there was some. */
  private async runQueuedJobs(): Promise<boolean> {
    if (!this.isSequencer()) return false;
    try {
      await this.purgeOld();
      if (!(await this.store.hasQueuedLogJobs())) return false;
      const worked = await this.store.transaction(async () => {
        await this.fence();
        const jobs = await this.store.claimQueuedLogJobs(CLAIM_LIMIT);
        if (jobs.length > 0) await this.options.execute?.(jobs);
        return jobs.length > 0;
      });
      if (worked) await this.options.afterCommit?.();
      return worked;
    } catch (error) {
      this.options.onEvent?.({ type: 'error', where: 'jobs', error });
      return false;
    }
  }

  private async purgeOld(): Promise<void> {
    const now = performance.now();
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    await this.store.purgeLogJobs(PURGE_AFTER_MS);
  }

  private scheduleOutcomes(): void {
    if (this.closed || this.outcomeTimer !== undefined || this.waiters.size === 0) return;
    this.outcomeTimer = setTimeout(() => {
      void this.collectOutcomes().then(() => {
        this.outcomeTimer = undefined;
        this.scheduleOutcomes();
      });
    }, this.pollMs);
  }

  /** Settle every waiter whose job is finished, and withdraw those past their deadline. */
  private async collectOutcomes(): Promise<void> {
    let finished: Awaited<ReturnType<SequencingStore['readFinishedLogJobs']>>;
    try {
      finished = await this.store.readFinishedLogJobs([...this.waiters.keys()]);
    } catch (error) {
      this.options.onEvent?.({ type: 'error', where: 'outcomes', error });
      return;
    }
    for (const job of finished) {
      const waiter = this.waiters.get(job.id);
      if (!waiter) continue;
      this.waiters.delete(job.id);
      if (job.outcome === null) waiter.reject(unavailable());
      else waiter.resolve(decodeLogJobResult(job.outcome));
    }
    const now = performance.now();
    for (const [id, waiter] of this.waiters) {
      if (now < waiter.deadline) continue;
      this.waiters.delete(id);
      await this.settleAbandoned(id, waiter);
    }
    // Read rows are left for the sequencer's purge (one DELETE for many, instead of one commit per job here).
  }

  /** Withdraw a job nobody will wait for: refused when still queued, else its outcome stands (as the sequencer wrote it). */
  private async settleAbandoned(id: number, waiter: Waiter): Promise<void> {
    try {
      const job = (await this.store.cancelLogJob(id)) ? undefined : (await this.store.readFinishedLogJobs([id]))[0];
      if (job?.outcome) waiter.resolve(decodeLogJobResult(job.outcome));
      else waiter.reject(unavailable());
    } catch (error) {
      waiter.reject(error);
    }
  }
}

/** The store as one several processes share (INTERNAL for a store that cannot be shared, e.g. SQLite). */
export function asSequencingStore(store: Store): Store & SequencingStore {
  if (!('claimSequencerLease' in store)) {
    throw new ToolsealError('INTERNAL', 'several registry processes need a store they share (PostgreSQL)');
  }
  return store as Store & SequencingStore;
}

function unavailable(): ToolsealError {
  return new ToolsealError(
    'SEQUENCER_UNAVAILABLE',
    'no registry process sequenced this write in time; nothing was written, retry',
  );
}

/** True for a failure that says this process cannot sequence now (the work may be handed to the sequencer instead). */
export function isSequencerLoss(error: unknown): boolean {
  return error instanceof ToolsealError && error.code === 'SEQUENCER_UNAVAILABLE';
}

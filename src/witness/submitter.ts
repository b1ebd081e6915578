// The log side of C2SP tlog-witness "add-checkpoint": submits each new checkpoint to every witness of a tlog-policy
// (old size, consistency proof, blank line, checkpoint), learns a witness's size from a 409 (text/x.tlog.size),
// verifies the cosignatures it gets (tlog-cosignature, Ed25519 v1) and hands on only the verified ones.

// One request in flight per witness; at most one request start per `minIntervalMs`; failures back off exponentially;
// only the newest checkpoint is ever sent (an older one still queued is skipped). submit() returns at once: a slow or
// dead witness never holds up the caller. A witness that answers garbage, a cosignature that does not verify (another
// checkpoint, another key) or a 409 naming a size larger than the log is reported in status(), never handed on.

import { describeError } from '../core/errors.ts';
import { parseCheckpoint } from '../log/checkpoint.ts';
import { appendSignatureLines, checkCosignatures } from '../log/cosignature.ts';
import { parseNote } from '../log/note.ts';
import type { PolicyWitness, WitnessPolicy } from '../log/policy.ts';
import {
  ADD_CHECKPOINT_PATH,
  formatAddCheckpointRequest,
  parseCosignatureLines,
  parseTlogSize,
} from '../log/witness-protocol.ts';

/** Where the log remembers, durably, the last size each witness cosigned (keyed by the policy's witness name). */
export interface WitnessSizeStore {
  load(witness: string): Promise<number | undefined>;
  save(witness: string, size: number): Promise<void>;
}

/** A verified cosignature, ready to merge into the checkpoint it signs. */
export interface CosignedEvent {
  witness: string;
  size: number;
  /** The signed checkpoint as submitted (the log's own signature lines only). */
  checkpoint: string;
  /** The cosignature line, "— name base64\n". */
  line: string;
  timestamp: number;
}

export interface WitnessStatus {
  witness: string;
  url: string | undefined;
  /**
   * The last size this witness cosigned with a cosignature that verified (here, or as kept in the size store), if any;
   * never a size it only claimed in a 409 (a witness whose cosignatures never verify stays behind).
   */
  cosignedSize: number | undefined;
  /** Latest submitted size minus cosignedSize; undefined when the witness's size is unknown. */
  behindBy: number | undefined;
  inFlight: boolean;
  consecutiveFailures: number;
  lastError: string | undefined;
  lastErrorAt: string | undefined;
}

export interface WitnessSubmitterOptions {
  policy: WitnessPolicy;
  /** RFC 6962 consistency proof between two sizes of this log (from > 0, from < to). */
  proveConsistency: (from: number, to: number) => Promise<readonly Uint8Array[]>;
  sizes: WitnessSizeStore;
  onCosigned?: (event: CosignedEvent) => void;
  /** Each failure, for the server's log (the same text status() keeps). */
  onError?: (witness: string, message: string) => void;
  fetch?: typeof fetch;
  /** Least time between two request starts to one witness. Default 100 ms. */
  minIntervalMs?: number;
  /** Per-request timeout. Default 10 s. */
  timeoutMs?: number;
  /** First retry delay after a failure, doubled each time up to maxBackoffMs. Defaults 500 ms and 60 s. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Cosignatures stamped up to this many seconds ahead of our clock are accepted (witness clock skew). Default 60. */
  clockSkewSeconds?: number;
  now?: () => number;
}

export interface WitnessSubmitter {
  /** Hand the newest signed checkpoint over; returns at once. */
  submit(signedCheckpoint: string): void;
  status(): WitnessStatus[];
  /** `signedCheckpoint` with every verified cosignature received for it appended. */
  withCosignatures(signedCheckpoint: string): string;
  close(): void;
}

interface Target {
  note: string;
  body: string;
  size: number;
}

interface WitnessWorker {
  witness: PolicyWitness;
  /** The witness's size as far as we know (its 409s included): the `old` of the next request. */
  known: number | undefined;
  /** The last size whose cosignature by this witness verified (or the durable size store's). */
  cosigned: number | undefined;
  loaded: boolean;
  inFlight: boolean;
  timer: NodeJS.Timeout | undefined;
  lastStart: number;
  backoffUntil: number;
  failures: number;
  lastError: string | undefined;
  lastErrorAt: string | undefined;
  /** Note body of the checkpoint this witness last cosigned for us. */
  cosignedBody: string | undefined;
  abort: AbortController | undefined;
}

/** How many recent checkpoints keep their received cosignatures for withCosignatures(). */
const KEPT_CHECKPOINTS = 64;

export function createWitnessSubmitter(options: WitnessSubmitterOptions): WitnessSubmitter {
  return new Submitter(options);
}

class Submitter implements WitnessSubmitter {
  private readonly doFetch: typeof fetch;
  private readonly now: () => number;
  private readonly minInterval: number;
  private readonly timeoutMs: number;
  private readonly initialBackoff: number;
  private readonly maxBackoff: number;
  private readonly skew: number;
  /** Note body → verified cosignature lines received for it. */
  private readonly received = new Map<string, string[]>();
  private readonly workers: WitnessWorker[];
  private target: Target | undefined;
  private closed = false;

  constructor(private readonly options: WitnessSubmitterOptions) {
    this.doFetch = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
    this.minInterval = options.minIntervalMs ?? 100;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.initialBackoff = options.initialBackoffMs ?? 500;
    this.maxBackoff = options.maxBackoffMs ?? 60_000;
    this.skew = options.clockSkewSeconds ?? 60;
    this.workers = [...options.policy.witnesses.values()].map((witness) => ({
      witness,
      known: undefined,
      cosigned: undefined,
      loaded: false,
      inFlight: false,
      timer: undefined,
      lastStart: Number.NEGATIVE_INFINITY,
      backoffUntil: 0,
      failures: 0,
      lastError: undefined,
      lastErrorAt: undefined,
      cosignedBody: undefined,
      abort: undefined,
    }));
  }

  submit(signedCheckpoint: string): void {
    if (this.closed) return;
    const { body } = parseNote(signedCheckpoint);
    const { size } = parseCheckpoint(body);
    if (this.target !== undefined && size < this.target.size) return; // never go back
    this.target = { note: signedCheckpoint, body, size };
    if (!this.received.has(body)) {
      this.received.set(body, []);
      if (this.received.size > KEPT_CHECKPOINTS) this.received.delete(this.received.keys().next().value as string);
    }
    for (const worker of this.workers) this.schedule(worker);
  }

  status(): WitnessStatus[] {
    const target = this.target;
    return this.workers.map((w) => ({
      witness: w.witness.name,
      url: w.witness.url,
      cosignedSize: w.cosigned,
      behindBy: w.cosigned === undefined || target === undefined ? undefined : target.size - w.cosigned,
      inFlight: w.inFlight,
      consecutiveFailures: w.failures,
      lastError: w.lastError,
      lastErrorAt: w.lastErrorAt,
    }));
  }

  withCosignatures(signedCheckpoint: string): string {
    const lines = this.received.get(parseNote(signedCheckpoint).body);
    return lines === undefined || lines.length === 0 ? signedCheckpoint : appendSignatureLines(signedCheckpoint, lines);
  }

  close(): void {
    this.closed = true;
    for (const worker of this.workers) {
      if (worker.timer !== undefined) clearTimeout(worker.timer);
      worker.timer = undefined;
      worker.abort?.abort();
    }
  }

  private fail(worker: WitnessWorker, message: string): void {
    worker.failures++;
    worker.lastError = message;
    worker.lastErrorAt = new Date(this.now()).toISOString();
    const delay = Math.min(this.maxBackoff, this.initialBackoff * 2 ** Math.min(worker.failures - 1, 30));
    worker.backoffUntil = this.now() + delay;
    this.options.onError?.(worker.witness.name, message);
  }

  private schedule(worker: WitnessWorker): void {
    const target = this.target;
    if (this.closed || worker.inFlight || worker.timer !== undefined || target === undefined) return;
    if (worker.cosignedBody === target.body) return;
    if (worker.witness.url === undefined) {
      if (worker.lastError === undefined) this.fail(worker, 'the policy gives this witness no URL');
      return;
    }
    const now = this.now();
    const delay = Math.max(0, worker.lastStart + this.minInterval - now, worker.backoffUntil - now);
    worker.timer = setTimeout(() => {
      worker.timer = undefined;
      void this.run(worker);
    }, delay);
    worker.timer.unref?.();
  }

  private async run(worker: WitnessWorker): Promise<void> {
    const sent = this.target;
    if (this.closed || sent === undefined || worker.cosignedBody === sent.body) return;
    worker.inFlight = true;
    worker.lastStart = this.now();
    try {
      if (!worker.loaded) {
        worker.known = await this.options.sizes.load(worker.witness.name);
        worker.cosigned = worker.known;
        worker.loaded = true;
      }
      const old = worker.known ?? 0;
      if (old > sent.size) {
        this.fail(worker, `its size ${old} is larger than the log's ${sent.size}`);
        worker.known = undefined; // ask again from 0: its 409 tells its size
        return;
      }
      const { status, text } = await this.post(worker, sent, old);
      if (status === 200) await this.accept(worker, sent, text);
      else if (status === 409) this.learnSize(worker, sent, text);
      else this.fail(worker, `answered HTTP ${status}`);
    } catch (error) {
      this.fail(worker, this.closed ? 'closed' : `request failed: ${describeError(error)}`);
    } finally {
      worker.inFlight = false;
      this.schedule(worker);
    }
  }

  private async post(worker: WitnessWorker, sent: Target, old: number): Promise<{ status: number; text: string }> {
    const proof = old === 0 || old === sent.size ? [] : await this.options.proveConsistency(old, sent.size);
    const body = formatAddCheckpointRequest({ oldSize: old, proof: [...proof], checkpoint: sent.note });
    const abort = new AbortController();
    worker.abort = abort;
    const timeout = setTimeout(() => abort.abort(), this.timeoutMs);
    try {
      const url = `${(worker.witness.url as string).replace(/\/+$/, '')}${ADD_CHECKPOINT_PATH}`;
      const response = await this.doFetch(url, { method: 'POST', body, signal: abort.signal, redirect: 'error' });
      return { status: response.status, text: await response.text() };
    } finally {
      clearTimeout(timeout);
      worker.abort = undefined;
    }
  }

  private async accept(worker: WitnessWorker, sent: Target, text: string): Promise<void> {
    const lines = parseCosignatureLines(text);
    if (lines === undefined) {
      this.fail(worker, 'answered 200 with a body that is not cosignature lines');
      return;
    }
    const verified: { line: string; timestamp: number }[] = [];
    const until = this.now() / 1000 + this.skew;
    for (const line of lines) {
      const [checked] = checkCosignatures(`${sent.body}\n${line}`, [worker.witness.key], until);
      if (checked?.status === 'verified') verified.push({ line, timestamp: checked.timestamp as number });
    }
    if (verified.length === 0) {
      this.fail(worker, 'no cosignature in its answer verifies for this checkpoint and its key');
      return;
    }
    worker.known = sent.size;
    worker.cosigned = sent.size;
    worker.cosignedBody = sent.body;
    worker.failures = 0;
    await this.options.sizes.save(worker.witness.name, sent.size);
    const kept = this.received.get(sent.body);
    for (const { line, timestamp } of verified) {
      if (kept && !kept.includes(line)) kept.push(line);
      const event = { witness: worker.witness.name, size: sent.size, checkpoint: sent.note, line, timestamp };
      this.options.onCosigned?.(event);
    }
  }

  private learnSize(worker: WitnessWorker, sent: Target, text: string): void {
    const size = parseTlogSize(text);
    if (size === undefined) this.fail(worker, 'answered 409 without a tree size');
    else if (size > sent.size)
      this.fail(worker, `claims size ${size}, larger than the log's ${sent.size} (another log under our origin?)`);
    else if (size === worker.known)
      this.fail(worker, `refuses size ${sent.size} from its size ${size} (it holds another root at that size?)`);
    else worker.known = size; // retry from there, rate-bounded but without backoff
  }
}

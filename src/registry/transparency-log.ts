// The registry's append-only log: leaves appended inside publish transactions, batched signed checkpoints, proofs.
//
// Leaf data (what is hashed with RFC 6962's 0x00 prefix), by kind:
//   attestation — the exact attestation bytes, as stored and served (a JCS flattened JWS);
//   yank        — JCS of {"type":"toolseal.yank/v1","subject":"<name>@<version>","digest":"sha256:…","reason":…,"yankedAt":…};
//   key         — JCS of {"type":"toolseal.key/v1","kid":…,"publicJwk":{…},"notBefore":…,"retires":{"kid":…,"notAfter":…}|null};
//   approval-decision, approval-consumption — JCS of the approval leaves (log/entries.ts, docs/approvals.md).
// Checkpoints are batched: every append schedules one signed checkpoint for the next turn of the event
// loop; a publish answers once the checkpoint that includes its leaf exists, with an inclusion proof to it.

import { ToolsealError } from '../core/errors.ts';
import {
  computeNodesForAppend,
  computeRootHash,
  formatVerifierString,
  generateConsistencyProof,
  generateInclusionProof,
  hashLeaf,
  parseCheckpoint,
  signCheckpoint,
  verifyCheckpoint,
  type NodeReader,
} from '../log/index.ts';
import type { SigningKey } from '../attest/index.ts';
import type { CheckpointRecord, LogEntryKind, Store } from '../store/index.ts';

export interface InclusionProof {
  index: number;
  size: number;
  /** Base64 sibling hashes, leaf to root (RFC 9162 §2.1.3.1). */
  hashes: string[];
  /** The signed checkpoint (C2SP signed note) whose root the proof leads to. */
  checkpoint: string;
}

/**
 * Who may sign checkpoints when several processes share the log (issue 16 §2, sequencer.ts); without one, this process
 * always may. `fence` runs inside the signing transaction and throws SEQUENCER_UNAVAILABLE when this process may not.
 */
export interface CheckpointSigner {
  canSign(): boolean;
  fence(): void;
}

/** Where the latest signed checkpoint is kept outside the database (rollback-guard.ts). */
export interface CheckpointRecorder {
  record(checkpoint: CheckpointRecord): void;
}

/** How long a process that does not sign waits for the sequencer's checkpoint over a leaf. */
const CHECKPOINT_WAIT_MS = 30_000;
const CHECKPOINT_POLL_MS = 5;

export class TransparencyLog {
  readonly origin: string;
  readonly verifierString: string;
  private readonly reader: NodeReader;
  private pendingCheckpoint: Promise<CheckpointRecord> | undefined;
  private signer: CheckpointSigner | undefined;
  private recorder: CheckpointRecorder | undefined;
  private recordScheduled = false;

  constructor(
    private readonly store: Store,
    private readonly logKey: SigningKey,
    origin: string | undefined,
    private readonly clock: () => Date,
  ) {
    // A stable origin per log key unless one is configured (C2SP tlog-checkpoint: the origin names the log).
    this.origin = origin ?? `toolseal.local/log/${logKey.kid.slice(0, 12)}`;
    this.verifierString = formatVerifierString(this.origin, logKey.publicKey);
    this.reader = {
      readNode: (level, index) => {
        const hash = store.readLogNode(level, index);
        if (!hash) throw new ToolsealError('INTEGRITY_ERROR', `log node ${level}/${index} is missing`);
        return hash;
      },
    };
  }

  /**
   * Refuse a log key (or origin) other than the one that signed this log's latest checkpoint: a process started with
   * another log's keys folder would otherwise sign this tree under another identity (with several processes on one
   * database, the next time it became sequencer).
   */
  assertSignedByThisKey(): void {
    const latest = this.store.latestCheckpoint();
    if (!latest) return;
    try {
      verifyCheckpoint(latest.note, this.verifierString, { origin: this.origin });
    } catch {
      throw new ToolsealError(
        'LOG_INCONSISTENT',
        `this log's latest checkpoint (size ${latest.size}) was not signed by the log key in the keys folder for origin ${this.origin}: point --keys at this log's keys (and keep its log origin)`,
      );
    }
  }

  /** From now on, sign checkpoints only when `signer` allows it (the sequencer's lease). */
  useSigner(signer: CheckpointSigner): void {
    this.signer = signer;
  }

  /** From now on, keep every checkpoint this process signs in `recorder` too (before a write is answered). */
  recordCheckpointsIn(recorder: CheckpointRecorder): void {
    this.recorder = recorder;
  }

  get checkpointRecorder(): CheckpointRecorder | undefined {
    return this.recorder;
  }

  /** Write the latest committed checkpoint to the recorder now (after a commit, before answering). */
  recordLatestCheckpoint(): void {
    const latest = this.store.latestCheckpoint();
    if (latest) this.recorder?.record(latest);
  }

  /** Append one leaf. Must run inside the caller's store transaction; returns the leaf index. */
  appendLeaf(kind: LogEntryKind, data: Uint8Array): number {
    const index = this.store.getLogSize();
    const leafHash = hashLeaf(data);
    for (const node of computeNodesForAppend(this.reader, index, leafHash)) {
      this.store.insertLogNode(node.level, node.index, node.hash);
    }
    // Views, not copies: SQLite copies bound bytes when the statement runs.
    const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.store.insertLogEntry({ index, kind, data: asBuffer(data), leafHash: asBuffer(leafHash) });
    return index;
  }

  /** Resolve with a signed checkpoint whose tree includes leaf `index`, signing one if needed (batched). */
  async awaitCheckpointIncluding(index: number): Promise<CheckpointRecord> {
    const latest = this.store.latestCheckpoint();
    if (latest && latest.size > index) return latest;
    if (this.signer && !this.signer.canSign()) return this.awaitSequencerCheckpoint(index);
    this.pendingCheckpoint ??= new Promise<CheckpointRecord>((resolve, reject) => {
      setImmediate(() => {
        this.pendingCheckpoint = undefined;
        try {
          const signed = this.signLatestCheckpoint();
          this.recordLatestCheckpoint();
          resolve(signed);
        } catch (error) {
          reject(error);
        }
      });
    });
    const checkpoint = await this.pendingCheckpoint;
    return checkpoint.size > index ? checkpoint : this.awaitCheckpointIncluding(index);
  }

  /** Another process signs: wait until its latest checkpoint covers leaf `index` (SEQUENCER_UNAVAILABLE after a while). */
  private async awaitSequencerCheckpoint(index: number): Promise<CheckpointRecord> {
    const deadline = performance.now() + CHECKPOINT_WAIT_MS;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_POLL_MS));
      const latest = this.store.latestCheckpoint();
      if (latest && latest.size > index) return latest;
      if (this.signer?.canSign()) return this.awaitCheckpointIncluding(index);
      if (performance.now() > deadline) {
        throw new ToolsealError(
          'SEQUENCER_UNAVAILABLE',
          'no registry process signed a checkpoint over this leaf in time',
        );
      }
    }
  }

  /**
   * Sign a checkpoint for the current tree, after proving it consistent with the previous checkpoint
   * (signCheckpoint refuses otherwise). Returns the previous one when nothing was appended since.
   */
  signLatestCheckpoint(): CheckpointRecord {
    const signed = this.signInTransaction();
    this.scheduleRecord();
    return signed;
  }

  /**
   * A checkpoint may be signed inside a caller's (synchronous) transaction: the file is written once that work is
   * done, from what the store then holds (so a rolled-back checkpoint is never recorded), before any answer goes out.
   */
  private scheduleRecord(): void {
    if (!this.recorder || this.recordScheduled) return;
    this.recordScheduled = true;
    queueMicrotask(() => {
      this.recordScheduled = false;
      let latest: CheckpointRecord | undefined;
      try {
        latest = this.store.latestCheckpoint();
      } catch {
        return; // the store was closed meanwhile: whoever closed it answers nothing more
      }
      try {
        if (latest) this.recorder?.record(latest);
      } catch (error) {
        process.emitWarning(
          `toolseal: ${error instanceof Error ? error.message : 'the log checkpoint file was not written'}`,
        );
      }
    });
  }

  private signInTransaction(): CheckpointRecord {
    return this.store.transaction(() => {
      const size = this.store.getLogSize();
      const previous = this.store.latestCheckpoint();
      if (previous && previous.size === size) return previous;
      this.signer?.fence();
      // A tree smaller than one already signed is a rollback: refuse it as such (generateConsistencyProof
      // would otherwise throw BAD_REQUEST, which a publish would answer as the client's fault).
      if (previous && size < previous.size) {
        throw new ToolsealError(
          'LOG_INCONSISTENT',
          `refusing to sign checkpoint: tree size would go back from ${previous.size} to ${size}`,
        );
      }
      const rootHash = computeRootHash(this.reader, size);
      const proof = previous ? generateConsistencyProof(this.reader, previous.size, size) : [];
      const previousHead = previous
        ? { size: previous.size, rootHash: parseCheckpoint(bodyOf(previous.note)).rootHash }
        : undefined;
      const note = signCheckpoint(
        { origin: this.origin, size, rootHash },
        { name: this.origin, privateKey: this.logKey.privateKey },
        previousHead,
        proof,
      );
      const record: CheckpointRecord = {
        size,
        rootHash: Buffer.from(rootHash),
        note,
        createdAt: this.clock().toISOString(),
      };
      this.store.insertCheckpoint(record);
      return record;
    });
  }

  latestCheckpoint(): CheckpointRecord | undefined {
    return this.store.latestCheckpoint();
  }

  /** Inclusion proof of leaf `index` in the tree of `checkpoint` (or the latest checkpoint). */
  proveInclusion(
    index: number,
    checkpoint: CheckpointRecord | undefined = this.store.latestCheckpoint(),
  ): InclusionProof {
    if (!checkpoint || index < 0 || index >= checkpoint.size) {
      throw new ToolsealError('NOT_FOUND', `leaf ${index} is not in the latest checkpoint yet`);
    }
    return this.proveInclusions([index], checkpoint)[0]!;
  }

  /**
   * Inclusion proofs of several leaves in the tree of one checkpoint (a group commit's publishes), reading each
   * node they share once. Meant for inside a transaction, where nothing can change the nodes between reads.
   */
  proveInclusions(indexes: readonly number[], checkpoint: CheckpointRecord): InclusionProof[] {
    const memo = new Map<number, Uint8Array>();
    // Levels stay below 64, so index·64 + level is a distinct safe integer for any log under 2^47 leaves.
    const reader: NodeReader = {
      readNode: (level, index) => {
        const key = index * 64 + level;
        let hash = memo.get(key);
        if (!hash) {
          hash = this.reader.readNode(level, index);
          memo.set(key, hash);
        }
        return hash;
      },
    };
    return indexes.map((index) => {
      if (index < 0 || index >= checkpoint.size)
        throw new ToolsealError('INTERNAL', `leaf ${index} is not in checkpoint ${checkpoint.size}`);
      const hashes = generateInclusionProof(reader, index, checkpoint.size).map((hash) =>
        Buffer.from(hash).toString('base64'),
      );
      return { index, size: checkpoint.size, hashes, checkpoint: checkpoint.note };
    });
  }

  /** RFC 9162 §2.1.3.1 for a tree size no larger than the latest checkpoint. */
  proveInclusionAt(index: number, size: number): string[] {
    this.assertCheckpointedSize(size);
    if (!Number.isSafeInteger(index) || index < 0 || index >= size)
      throw new ToolsealError('BAD_REQUEST', 'index must be below size');
    return generateInclusionProof(this.reader, index, size).map((hash) => Buffer.from(hash).toString('base64'));
  }

  /** RFC 9162 §2.1.4.1 between two sizes no larger than the latest checkpoint. */
  proveConsistency(from: number, to: number): string[] {
    this.assertCheckpointedSize(to);
    if (!Number.isSafeInteger(from) || from < 1 || from > to)
      throw new ToolsealError('BAD_REQUEST', 'need 1 <= from <= to');
    return generateConsistencyProof(this.reader, from, to).map((hash) => Buffer.from(hash).toString('base64'));
  }

  get nodeReader(): NodeReader {
    return this.reader;
  }

  private assertCheckpointedSize(size: number): void {
    const latest = this.store.latestCheckpoint();
    if (!Number.isSafeInteger(size) || size < 1)
      throw new ToolsealError('BAD_REQUEST', 'size must be a positive integer');
    if (!latest || size > latest.size) {
      throw new ToolsealError('BAD_REQUEST', `size ${size} is beyond the latest checkpoint (${latest?.size ?? 0})`);
    }
  }
}

/** The body of a signed note: everything up to and including the blank line's preceding newline. */
export function bodyOf(note: string): string {
  const end = note.indexOf('\n\n');
  return end < 0 ? note : note.slice(0, end + 1);
}

// The registry's append-only log: leaves appended inside publish transactions, batched signed checkpoints, proofs.
//
// Leaf data (what is hashed with RFC 6962's 0x00 prefix), by kind:
//   attestation — the exact attestation bytes, as stored and served (a JCS flattened JWS);
//   yank        — JCS of {"type":"toolseal.yank/v1","subject":"<name>@<version>","digest":"sha256:…","reason":…,"yankedAt":…};
//   key         — JCS of {"type":"toolseal.key/v1","kid":…,"publicJwk":{…},"notBefore":…,"retires":{"kid":…,"notAfter":…}|null};
//   approval-decision, approval-consumption — JCS of the approval leaves (log/entries.ts, docs/approvals.md).
// Checkpoints are batched: every append schedules one signed checkpoint for the next turn of the event
// loop; a publish answers once the checkpoint that includes its leaf exists, with an inclusion proof to it.
// Node reads go through log-node-prefetch.ts: one query per root, proof or append (issue 24 §6).

import { ToolsealError } from '../core/errors.ts';
import {
  computeNodesForAppend,
  computeLogKeyId,
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
import type { KeyObject } from 'node:crypto';
import {
  buildInclusionPromiseSigningJob,
  deriveLogOrigin,
  runSigningJobOffThread,
  type SigningKey,
} from '../attest/index.ts';
import {
  type CheckpointRecord,
  type CosignatureRecord,
  type LogEntryKind,
  logNodeKey,
  type Store,
} from '../store/index.ts';
import { computeWithStoredNodes } from './log-node-prefetch.ts';

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
  fence(): Promise<void>;
}

/** Where the latest signed checkpoint is kept outside the database (rollback-guard.ts). */
export interface CheckpointRecorder {
  /** Durable once it resolves. */
  record(checkpoint: CheckpointRecord): Promise<void>;
}

/** How long a process that does not sign waits for the sequencer's checkpoint over a leaf. */
const CHECKPOINT_WAIT_MS = 30_000;
const CHECKPOINT_POLL_MS = 5;

export class TransparencyLog {
  readonly origin: string;
  readonly verifierString: string;
  private pendingCheckpoint: Promise<CheckpointRecord> | undefined;
  private signer: CheckpointSigner | undefined;
  private recorder: CheckpointRecorder | undefined;
  /** The log key's C2SP key id under this origin (computed once: the promise of every bundle names it). */
  private logId: Uint8Array | undefined;

  constructor(
    private readonly store: Store,
    private readonly logKey: SigningKey,
    origin: string | undefined,
    private readonly clock: () => Date,
  ) {
    // A stable origin per log key unless one is configured (C2SP tlog-checkpoint: the origin names the log).
    this.origin = origin ?? `toolseal.local/log/${logKey.kid.slice(0, 12)}`;
    this.verifierString = formatVerifierString(this.origin, logKey.publicKey);
  }

  /** The log key's public half (the trusted root names it). */
  get publicKey(): KeyObject {
    return this.logKey.publicKey;
  }

  /**
   * The log's inclusion promise (a Sigstore signed entry timestamp, docs/sigstore.md) for the leaf `leaf` appended at
   * `index`, integrated at `integratedTime` (seconds since the epoch): signed by the log key under this log's origin,
   * in libuv's thread pool (signing-job.ts), so a batch's promises do not hold the event loop.
   */
  signInclusionPromise(leaf: Uint8Array, integratedTime: number, index: number): Promise<Uint8Array> {
    this.logId ??= computeLogKeyId(this.origin, this.logKey.publicKey);
    return runSigningJobOffThread(
      buildInclusionPromiseSigningJob(leaf, integratedTime, index, {
        privateKey: this.logKey.privateKey,
        logId: this.logId,
      }),
    );
  }

  /** Run `compute` over the stored nodes it reads (fetched in one query). */
  async withStoredNodes<T>(compute: (reader: NodeReader) => T): Promise<T> {
    return await computeWithStoredNodes(this.store, compute);
  }

  /**
   * Refuse a log key (or origin) other than the one that signed this log's latest checkpoint: a process started with
   * another log's keys folder would otherwise sign this tree under another identity (with several processes on one
   * database, the next time it became sequencer).
   */
  async assertSignedByThisKey(): Promise<void> {
    const latest = await this.store.latestCheckpoint();
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

  /**
   * Write the latest committed checkpoint to the recorder: after every transaction that signed one has committed (never
   * inside it: a rolled-back checkpoint must not be recorded), before its writes are answered.
   */
  async recordLatestCheckpoint(): Promise<void> {
    // Inside an outer transaction (the sequencer's) nothing is committed yet: whoever commits it records.
    if (!this.recorder || this.store.isInTransaction()) return;
    const latest = await this.store.latestCheckpoint();
    if (latest) await this.recorder.record(latest);
  }

  /** Append one leaf. Must run inside the caller's store transaction; returns the leaf index. */
  async appendLeaf(kind: LogEntryKind, data: Uint8Array): Promise<number> {
    return (await this.appendLeaves(kind, [data]))[0]!;
  }

  /**
   * Append several leaves in order (a batch's): the nodes they create are computed from one read of the stored nodes
   * they need and written with the leaves in one statement. Must run inside the caller's store transaction; returns
   * the leaves' indexes.
   */
  async appendLeaves(kind: LogEntryKind, datas: readonly Uint8Array[]): Promise<number[]> {
    return (await this.appendLeafRuns([{ kind, datas }]))[0]!;
  }

  /**
   * Append runs of leaves of different kinds, one run after the other (a publish batch's attestations, then their
   * bundles), as appendLeaves does for one: one read of the log size, one of the stored nodes, one write. Returns
   * each run's indexes.
   */
  async appendLeafRuns(runs: readonly { kind: LogEntryKind; datas: readonly Uint8Array[] }[]): Promise<number[][]> {
    const leaves = runs.flatMap(({ kind, datas }) => datas.map((data) => ({ kind, data })));
    if (leaves.length === 0) return runs.map(() => []);
    const start = await this.store.getLogSize();
    const leafHashes = leaves.map(({ data }) => hashLeaf(data));
    const nodes = await this.withStoredNodes((stored) => {
      // Nodes created earlier in this batch are read from here, not from the store.
      const fresh = new Map<string, Uint8Array>();
      const reader: NodeReader = {
        readNode: (level, index) => fresh.get(logNodeKey(level, index)) ?? stored.readNode(level, index),
      };
      return leafHashes.flatMap((leafHash, offset) =>
        computeNodesForAppend(reader, start + offset, leafHash).map((node) => {
          fresh.set(logNodeKey(node.level, node.index), node.hash);
          return node;
        }),
      );
    });
    // Views, not copies: the stores copy bound bytes when the statement runs.
    const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const entries = leaves.map(({ kind, data }, offset) => ({
      index: start + offset,
      kind,
      data: asBuffer(data),
      leafHash: asBuffer(leafHashes[offset]!),
    }));
    await this.store.insertLogLeaves(entries, nodes);
    let next = start;
    return runs.map(({ datas }) => datas.map(() => next++));
  }

  /** Resolve with a signed checkpoint whose tree includes leaf `index`, signing one if needed (batched). */
  async awaitCheckpointIncluding(index: number): Promise<CheckpointRecord> {
    const latest = await this.store.latestCheckpoint();
    if (latest && latest.size > index) return latest;
    if (this.signer && !this.signer.canSign()) return this.awaitSequencerCheckpoint(index);
    this.pendingCheckpoint ??= new Promise<CheckpointRecord>((resolve, reject) => {
      setImmediate(async () => {
        this.pendingCheckpoint = undefined;
        await this.signLatestCheckpoint()
          .then(async (signed) => {
            await this.recordLatestCheckpoint();
            resolve(signed);
          })
          .catch(reject);
      });
    });
    const checkpoint = await this.pendingCheckpoint;
    return checkpoint.size > index ? checkpoint : await this.awaitCheckpointIncluding(index);
  }

  /** Another process signs: wait until its latest checkpoint covers leaf `index` (SEQUENCER_UNAVAILABLE after a while). */
  private async awaitSequencerCheckpoint(index: number): Promise<CheckpointRecord> {
    const deadline = performance.now() + CHECKPOINT_WAIT_MS;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_POLL_MS));
      const latest = await this.store.latestCheckpoint();
      if (latest && latest.size > index) return latest;
      if (this.signer?.canSign()) return await this.awaitCheckpointIncluding(index);
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
   * (signCheckpoint refuses otherwise). Returns the previous one when nothing was appended since. Inside a caller's
   * transaction it joins it: the caller records the checkpoint (recordLatestCheckpoint) once that has committed.
   */
  async signLatestCheckpoint(): Promise<CheckpointRecord> {
    // Inside a caller's transaction no savepoint of its own (two round trips on PostgreSQL): every caller lets a
    // failure here roll its whole transaction (or its own savepoint) back.
    if (this.store.isInTransaction()) return await this.signCheckpointInTransaction();
    return await this.store.transaction(() => this.signCheckpointInTransaction());
  }

  private async signCheckpointInTransaction(): Promise<CheckpointRecord> {
    const size = await this.store.getLogSize();
    const previous = await this.store.latestCheckpoint();
    if (previous && previous.size === size) return previous;
    await this.signer?.fence();
    // A tree smaller than one already signed is a rollback: refuse it as such (generateConsistencyProof
    // would otherwise throw BAD_REQUEST, which a publish would answer as the client's fault).
    if (previous && size < previous.size) {
      throw new ToolsealError(
        'LOG_INCONSISTENT',
        `refusing to sign checkpoint: tree size would go back from ${previous.size} to ${size}`,
      );
    }
    const [rootHash, proof] = await this.withStoredNodes(
      (reader) =>
        [computeRootHash(reader, size), previous ? generateConsistencyProof(reader, previous.size, size) : []] as const,
    );
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
    await this.store.insertCheckpoint(record);
    return record;
  }

  async latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    return await this.store.latestCheckpoint();
  }

  /** Keep a witness cosignature the caller verified, for every process serving this log (issue 25 §2). */
  async keepCosignature(row: CosignatureRecord): Promise<void> {
    await this.store.saveCosignature(row);
  }

  /** The kept witness cosignatures of the checkpoint of `size` (check them before serving: kept-cosignatures.ts). */
  async readCosignatures(size: number): Promise<CosignatureRecord[]> {
    return await this.store.listCosignatures(size);
  }

  /** Inclusion proof of leaf `index` in the tree of `checkpoint` (or the latest checkpoint). */
  async proveInclusion(index: number, given?: CheckpointRecord): Promise<InclusionProof> {
    const checkpoint = given ?? (await this.store.latestCheckpoint());
    if (!checkpoint || index < 0 || index >= checkpoint.size) {
      throw new ToolsealError('NOT_FOUND', `leaf ${index} is not in the latest checkpoint yet`);
    }
    return (await this.proveInclusions([index], checkpoint))[0]!;
  }

  /**
   * Inclusion proofs of several leaves in the tree of one checkpoint (a group commit's publishes), with every node
   * they need read in one query (stored nodes never change, so this holds inside or outside a transaction).
   */
  async proveInclusions(indexes: readonly number[], checkpoint: CheckpointRecord): Promise<InclusionProof[]> {
    for (const index of indexes) {
      if (index < 0 || index >= checkpoint.size)
        throw new ToolsealError('INTERNAL', `leaf ${index} is not in checkpoint ${checkpoint.size}`);
    }
    return await this.withStoredNodes((reader) =>
      indexes.map((index) => {
        const hashes = generateInclusionProof(reader, index, checkpoint.size).map((hash) =>
          Buffer.from(hash).toString('base64'),
        );
        return { index, size: checkpoint.size, hashes, checkpoint: checkpoint.note };
      }),
    );
  }

  /** RFC 9162 §2.1.3.1 for a tree size no larger than the latest checkpoint. */
  async proveInclusionAt(index: number, size: number): Promise<string[]> {
    await this.assertCheckpointedSize(size);
    if (!Number.isSafeInteger(index) || index < 0 || index >= size)
      throw new ToolsealError('BAD_REQUEST', 'index must be below size');
    const proof = await this.withStoredNodes((reader) => generateInclusionProof(reader, index, size));
    return proof.map((hash) => Buffer.from(hash).toString('base64'));
  }

  /** RFC 9162 §2.1.4.1 between two sizes no larger than the latest checkpoint. */
  async proveConsistency(from: number, to: number): Promise<string[]> {
    await this.assertCheckpointedSize(to);
    if (!Number.isSafeInteger(from) || from < 1 || from > to)
      throw new ToolsealError('BAD_REQUEST', 'need 1 <= from <= to');
    const proof = await this.withStoredNodes((reader) => generateConsistencyProof(reader, from, to));
    return proof.map((hash) => Buffer.from(hash).toString('base64'));
  }

  private async assertCheckpointedSize(size: number): Promise<void> {
    const latest = await this.store.latestCheckpoint();
    if (!Number.isSafeInteger(size) || size < 1)
      throw new ToolsealError('BAD_REQUEST', 'size must be a positive integer');
    if (!latest || size > latest.size) {
      throw new ToolsealError('BAD_REQUEST', `size ${size} is beyond the latest checkpoint (${latest?.size ?? 0})`);
    }
  }
}

/**
 * The origin of the log in `store` (issue 26 §2): the configured one; else the one its latest checkpoint was signed
 * under (a log never changes origin); else, for a new log, the host name of the registry's public URL (what Sigstore
 * verifiers require: docs/sigstore.md); undefined (the key-derived default) when that host cannot be an origin.
 */
export async function resolveLogOrigin(
  store: Store,
  configured: string | undefined,
  publicUrl: string | undefined,
): Promise<string | undefined> {
  if (configured !== undefined) return configured;
  const latest = await store.latestCheckpoint();
  if (latest) return parseCheckpoint(bodyOf(latest.note)).origin;
  if ((await store.getLogSize()) > 0 || publicUrl === undefined) return undefined;
  try {
    return deriveLogOrigin(publicUrl);
  } catch {
    return undefined;
  }
}

/** The body of a signed note: everything up to and including the blank line's preceding newline. */
export function bodyOf(note: string): string {
  const end = note.indexOf('\n\n');
  return end < 0 ? note : note.slice(0, end + 1);
}

// Group commit of publishes (issue 24 §2): sign each attestation, store bytes, version and log leaf, and sign the
// batch's checkpoint, for every publish queued while the previous batch committed (at most MAX_BATCH), in one
// transaction of the store (SQLite or PostgreSQL).

import { ToolsealError } from '../core/errors.ts';
import { PIPELINE_POLICY_VERSION, type Sha256Digest } from '../pipeline/index.ts';
import {
  type BundleSigningKey,
  buildBundleEntrySigningJob,
  buildPublishStatement,
  buildJcsStatementSigningJob,
  runSigningJobOffThread,
  serializeStatementJcs,
  type SigningKey,
} from '../attest/index.ts';
import type { CheckpointRecord, PublisherRecord, Store, VersionRecord } from '../store/index.ts';
import type { PipelineOutput } from './pipeline-runner.ts';
import { assertPublisherCurrent } from './publishers.ts';
import type { CheckpointRecorder, InclusionProof, TransparencyLog } from './transparency-log.ts';
import { CheckpointFileRecorder } from './rollback-guard.ts';
import { loadSigningKey } from '../keys/key-files.ts';
import { provenanceMemberOf } from './trust-rules.ts';
import { BundleKeySource, type PendingBundle, seconds, storeLoggedBundles } from './sigstore-bundles.ts';

export interface CommitOutcome {
  /** False when the same name@version with the same digest was already stored (idempotent). */
  created: boolean;
  record: VersionRecord;
  /** Its leaf's inclusion proof in the checkpoint the commit signed (or the latest one, when nothing was new). */
  inclusion: InclusionProof;
}

/** Where publishes are committed: on the calling thread (GroupCommitter) or on a writer thread (startPublishWriter). */
export interface PublishCommitter {
  /**
   * Resolves once the publish is durable and in a signed checkpoint; rejects with VERSION_EXISTS, UNAUTHENTICATED,
   * STORAGE_FULL or INTERNAL.
   * It may take `result.canonicalBytes` (moved to another thread): the caller must not use them afterwards.
   */
  commit(result: PipelineOutput, publisher: PublisherRecord): Promise<CommitOutcome>;
  /** Resolves once it can commit; rejects with INTERNAL if it cannot (a server checks this at start). */
  whenReady(): Promise<void>;
  close(): Promise<void>;
}

export interface GroupCommitterOptions {
  store: Store;
  log: TransparencyLog;
  /** Where the attestation keys' private files are (the active one is looked up per batch). */
  keysDir: string;
  /** Origin recorded in attestations. */
  origin: string;
  clock: () => Date;
}

/** A publish to commit, and how its caller is settled (once its commit is durable, or it is refused). */
export interface QueuedPublish {
  result: PipelineOutput;
  publisher: PublisherRecord;
  resolve: (outcome: CommitOutcome) => void;
  reject: (error: unknown) => void;
}

/**
 * Publishes queued while the previous batch committed (or in one turn of the event loop when none did) share one
 * transaction (one fsync under SQLite's synchronous=FULL or PostgreSQL's synchronous_commit), and the batch's
 * checkpoint is signed in it, with each publish's inclusion proof in it; callers are settled after the commit.
 *
 * A publish is refused (VERSION_EXISTS, or UNAUTHENTICATED when its publisher was revoked or its token rotated out
 * since it was authenticated) or found stored (idempotent) by reads alone, before it writes anything,
 * so a refusal needs no rollback. Anything that fails once a publish has started writing rolls the whole batch
 * back; each of its publishes is then committed alone, so only the one that fails fails. (No SAVEPOINT per
 * publish: SQLite journals every page a savepoint touches, which costs more than the rare retry.)
 */
/** The most publishes one transaction commits (the rest wait for the next one). */
export const MAX_BATCH = 256;
/** Callers answered per turn of the event loop once their batch committed (each answer builds and writes a body). */
const ANSWERS_PER_TURN = 4;

/**
 * Settle a committed batch's callers a few per turn of the event loop: settled at once, a batch of 60 builds and
 * writes 60 answers in one task, and every read that arrived meanwhile waits for all of them (issue 24 §4).
 */
async function settleInSlices(settlements: readonly (() => void)[]): Promise<void> {
  for (let start = 0; start < settlements.length; start += ANSWERS_PER_TURN) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const settle of settlements.slice(start, start + ANSWERS_PER_TURN)) settle();
  }
}

export class GroupCommitter implements PublishCommitter {
  private queued: QueuedPublish[] = [];
  /** True while a batch commits: what arrives meanwhile forms the next batch. */
  private committing = false;
  private scheduled = false;
  private signingKey: SigningKey | undefined;
  private readonly bundleKeys: BundleKeySource;

  /** The log's own recorder (on the registry's thread), or one of its own (on the writer thread). */
  private readonly recorder: CheckpointRecorder;

  constructor(private readonly options: GroupCommitterOptions) {
    this.recorder = options.log.checkpointRecorder ?? new CheckpointFileRecorder(options.keysDir);
    this.bundleKeys = new BundleKeySource(options.keysDir);
  }

  commit(result: PipelineOutput, publisher: PublisherRecord): Promise<CommitOutcome> {
    return new Promise((resolve, reject) => {
      this.queued.push({ result, publisher, resolve, reject });
      this.scheduleBatch();
    });
  }

  whenReady(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Commit `batch` now, on this thread, settling every publish in it before returning: in the caller's transaction when
   * there is one (the sequencer's, which also records each outcome: sequencer.ts), else in one of its own.
   */
  async commitNow(batch: QueuedPublish[]): Promise<void> {
    if (await this.tryCommit(batch)) return;
    for (const item of batch) await this.tryCommit([item]);
  }

  /** Commit what is queued at the next turn of the event loop, unless a batch is committing (it takes them after). */
  private scheduleBatch(): void {
    if (this.committing || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.commitQueued();
    });
  }

  private async commitQueued(): Promise<void> {
    if (this.committing) return;
    this.committing = true;
    try {
      while (this.queued.length > 0) await this.commitNow(this.queued.splice(0, MAX_BATCH));
    } finally {
      this.committing = false;
    }
  }

  /**
   * Commit `batch` in one transaction and settle every publish in it; false (nothing settled, nothing stored)
   * when a publish failed after it started writing and the batch has more than one publish.
   */
  private async tryCommit(batch: QueuedPublish[]): Promise<boolean> {
    const { store, log } = this.options;
    let settlements: (() => void)[];
    /** The checkpoint the batch's answers prove inclusion in (signed in the transaction, or the latest). */
    let answeredUnder: CheckpointRecord | undefined;
    try {
      settlements = await store.transaction(async () => {
        const key = await this.currentSigningKey();
        const settled: (() => void)[] = [];
        const committed: { item: QueuedPublish; stored: Omit<CommitOutcome, 'inclusion'> }[] = [];
        const fresh: QueuedPublish[] = [];
        // Reads for the whole batch first, one round trip each (issue 24 §2): each publisher once, every name@version.
        const publishers = new Map<string, Promise<unknown>>();
        const current = (publisher: PublisherRecord): Promise<unknown> => {
          const key = `${publisher.id} ${publisher.tokenHash}`;
          let checked = publishers.get(key);
          if (checked === undefined) {
            checked = assertPublisherCurrent(store, publisher).then(
              () => undefined,
              (refusal: unknown) => refusal,
            );
            publishers.set(key, checked);
          }
          return checked;
        };
        const stored = await store.getVersions(
          batch.map(({ result }) => ({ name: result.name, version: result.version })),
        );
        const storedByKey = new Map(stored.map((row) => [`${row.name}\n${row.version}`, row]));
        for (const item of batch) {
          let found: Omit<CommitOutcome, 'inclusion'> | undefined;
          try {
            // Authenticated before it was queued (maybe on another thread): refused if revoked or rotated since.
            const refusal = await current(item.publisher);
            if (refusal !== undefined) throw refusal;
            found = this.findStored(item.result, storedByKey.get(`${item.result.name}\n${item.result.version}`));
          } catch (refusal) {
            settled.push(() => item.reject(refusal));
            continue;
          }
          if (found) committed.push({ item, stored: found });
          else fresh.push(item);
        }
        committed.push(...(await this.storePublishes(fresh, key)));
        if (committed.length === 0) return settled;
        // Signed before the commit: an acknowledged publish is in a signed checkpoint, never only in the tree.
        // (Also when only an idempotent publish's leaf is beyond the latest checkpoint, which a crash can leave.)
        // A new leaf is never covered yet: only a batch of idempotent publishes reads the latest checkpoint first.
        const latest = fresh.length > 0 ? undefined : await store.latestCheckpoint();
        const uncovered =
          fresh.length > 0 || committed.some(({ stored }) => stored.record.logIndex >= (latest?.size ?? 0));
        const checkpoint = uncovered ? await log.signLatestCheckpoint() : latest!;
        answeredUnder = checkpoint;
        const proofs = await log.proveInclusions(
          committed.map(({ stored }) => stored.record.logIndex),
          checkpoint,
        );
        committed.forEach(({ item, stored }, i) => {
          settled.push(() => item.resolve({ ...stored, inclusion: proofs[i]! }));
        });
        return settled;
      });
    } catch (error) {
      if (batch.length > 1) return false;
      for (const item of batch) item.reject(error);
      return true;
    }
    try {
      // Durably outside the database before any publish of the batch is answered (rollback-guard.ts); inside the
      // sequencer's transaction, by the sequencer once that has committed.
      if (answeredUnder !== undefined && !store.isInTransaction()) await this.recorder.record(answeredUnder);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return true;
    }
    await settleInSlices(settlements);
    return true;
  }

  /** The stored record when name@version (`existing`) has this digest (idempotent), VERSION_EXISTS when it has another. */
  private findStored(
    result: PipelineOutput,
    existing: VersionRecord | undefined,
  ): Omit<CommitOutcome, 'inclusion'> | undefined {
    if (!existing) return undefined;
    if (existing.digest === result.digest) return { created: false, record: existing };
    throw new ToolsealError(
      'VERSION_EXISTS',
      `${result.name}@${result.version} already exists with digest ${existing.digest}; publish a new version`,
      {
        pointer: '/version',
      },
    );
  }

  /**
   * The batch's new versions, inside its transaction: sign each attestation (chained to the name's previous digest,
   * an earlier one of this batch included) and the same statement as a DSSE envelope by the bundle key, all in libuv's
   * thread pool while the bytes are stored; then append every attestation leaf at once, the version rows, and the
   * bundles' leaves and parts (sigstore-bundles.ts). The event loop serves reads while the batch signs (issue 24 §4).
   */
  private async storePublishes(
    fresh: readonly QueuedPublish[],
    key: SigningKey,
  ): Promise<{ item: QueuedPublish; stored: Omit<CommitOutcome, 'inclusion'> }[]> {
    const { store, log } = this.options;
    // The latest digest of each name: stored before the batch, then an earlier publish of the batch.
    const latest = await store.getLatestStoredDigests(fresh.map(({ result }) => result.name));
    // The bundle key of each second the batch spans, looked up once (it reads the key list file).
    const keyOfSecond = new Map<number, BundleSigningKey>();
    const statements = fresh.map(({ result, publisher }) => {
      const previousDigest = latest.get(result.name);
      latest.set(result.name, result.digest);
      const storedAt = this.options.clock().toISOString();
      const integratedTime = seconds(new Date(storedAt));
      let bundleKey = keyOfSecond.get(integratedTime);
      if (bundleKey === undefined) {
        bundleKey = this.bundleKeys.keyAt(integratedTime);
        keyOfSecond.set(integratedTime, bundleKey);
      }
      const statement = buildPublishStatement({
        name: result.name,
        version: result.version,
        digest: result.digest,
        predicate: {
          registry: this.options.origin,
          publisher: publisher.namespace,
          storedAt,
          policy: PIPELINE_POLICY_VERSION,
          size: result.size,
          previousDigest: (previousDigest as Sha256Digest | undefined) ?? null,
          ...provenanceMemberOf(publisher),
        },
      });
      return { jcs: serializeStatementJcs(statement), storedAt, integratedTime, bundleKey };
    });
    const attestationsSigned = Promise.all(
      statements.map(({ jcs }) => runSigningJobOffThread(buildJcsStatementSigningJob(jcs, key))),
    );
    const bundlesSigned = Promise.all(
      statements.map(({ jcs, bundleKey }) =>
        runSigningJobOffThread(buildBundleEntrySigningJob(Buffer.from(jcs, 'utf8'), bundleKey)),
      ),
    );
    // Awaited below; a failure of the store first must not leave them unhandled.
    attestationsSigned.catch(() => {});
    bundlesSigned.catch(() => {});
    await store.insertBlobsIfAbsent(
      fresh.map(({ result }) => ({ digest: result.digest, bytes: result.canonicalBytes })),
    );
    const [attestations, entries] = await Promise.all([attestationsSigned, bundlesSigned]);
    // Both runs of leaves in one append (the attestations, then their bundles: the log order of issue 26).
    const [logIndexes, bundleIndexes] = (await log.appendLeafRuns([
      { kind: 'attestation', datas: attestations },
      { kind: 'bundle', datas: entries.map(({ leaf }) => leaf) },
    ])) as [number[], number[]];
    const records = await store.insertVersions(
      fresh.map((item, offset) => ({
        name: item.result.name,
        version: item.result.version,
        digest: item.result.digest,
        publisherId: item.publisher.id,
        storedAt: statements[offset]!.storedAt,
        attestation: attestations[offset]!,
        kid: key.kid,
        logIndex: logIndexes[offset]!,
      })),
    );
    const bundles: PendingBundle[] = entries.map(({ envelope, leaf }, offset) => ({
      versionId: records[offset]!.id,
      kid: statements[offset]!.bundleKey.kid,
      envelope,
      leaf,
      integratedTime: statements[offset]!.integratedTime,
    }));
    await storeLoggedBundles(store, log, bundles, bundleIndexes);
    return fresh.map((item, offset) => ({ item, stored: { created: true, record: records[offset]! } }));
  }

  /** The active key, reloaded when another process or thread (e.g. `toolseal keys rotate`) rotated it. */
  private async currentSigningKey(): Promise<SigningKey> {
    const activeKid = await this.options.store.activeSigningKid();
    if (activeKid === undefined) throw new ToolsealError('INTERNAL', 'the registry has no active signing key');
    if (activeKid !== this.signingKey?.kid) this.signingKey = loadSigningKey(this.options.keysDir, activeKid);
    return this.signingKey;
  }
}

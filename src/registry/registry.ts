// Registry use cases — publish, fetch, yank, list, auditor queries, keys — tying pipeline, attest, log and store. No HTTP here.
// The facade every transport calls (over 450 lines: one short method per use case; the work lives in the modules it
// delegates to: signing-keys.ts, log-job-runner.ts, approvals.ts, yank.ts, group-commit.ts, official-servers.ts).

import { ToolsealError } from '../core/errors.ts';
import { computeSha256Hex, type PipelineLimits, type RenamedTool, type Sha256Digest } from '../pipeline/index.ts';
import type { KeyValidity } from '../attest/index.ts';
import { GroupCommitter, type PublishCommitter } from './group-commit.ts';
import { authenticatePublisher, createPublisher } from './publishers.ts';
import { inlinePipeline, type PipelineRunner } from './pipeline-runner.ts';
import type { CheckpointRecord, PublisherRecord, Store, VersionRecord, VersionStatus } from '../store/index.ts';
import { pickLatestVersion, compareVersions } from './semver.ts';
import { resolveLogOrigin, TransparencyLog, type InclusionProof } from './transparency-log.ts';
import { loadOrCreateLogKey } from '../keys/key-files.ts';
import type { ManifestListResponse } from '../protocol/wire.ts';
import {
  type ApprovalListResponse,
  type ApprovalResponse,
  type ApprovalStatus,
  type ApprovalTransitionResponse,
  DEFAULT_APPROVAL_TTL_SECONDS,
  type WhoamiResponse,
} from '../protocol/wire.ts';
import {
  type ApprovalDeps,
  type ApprovalRequestOutcome,
  consumeApproval,
  decideApproval,
  listApprovals,
  readApproval,
  requestApproval,
} from './approvals.ts';
import {
  authenticateAnyPrincipal,
  authenticatePrincipal,
  createPrincipal,
  identifyToken,
  type PrincipalKind,
  type PrincipalRecord,
} from './principals.ts';
import { type YankOutcome, yankVersion } from './yank.ts';
import {
  listServerVersionPage,
  listServerVersionsOf,
  readServerVersion,
  type ServerPageQuery,
  type ServerVersionEntry,
} from './official-servers.ts';
import { type LogJob, type YankJobValue, unwrapLogJobResult } from './log-jobs.ts';
import { executeLogJobs } from './log-job-runner.ts';
import { asSequencingStore, isSequencerLoss, Sequencer, type SequencerEvent, type SequencerRole } from './sequencer.ts';
import { SequencedCommitter } from './sequenced-committer.ts';
import { assertNoLogRollback, CheckpointFileRecorder } from './rollback-guard.ts';
import { WriteAdmission } from './write-admission.ts';
import {
  buildRegistryJwks,
  listKeyValidities,
  loadActiveSigningKey,
  registerFirstSigningKey,
  rotateSigningKey,
  type SigningKeyDeps,
} from './signing-keys.ts';
import type { PublishAuthoriser } from './trust-rules.ts';
import {
  backfillBundles,
  buildRegistryBundleJwks,
  readServedBundle,
  readTrustMaterial,
  rotateBundleKeyNow,
  type RegistryJwks,
  type ServedBundleDeps,
} from './sigstore-bundles.ts';
import { loadOrCreateBundleKeys } from '../keys/bundle-key-files.ts';
import type { PublicKeyJson, SigstoreBundleJson, TrustedRootJson } from '../attest/index.ts';

export interface RegistryOptions {
  store: Store;
  /** Folder of private keys (attestation keys by kid, and the log key). */
  keysDir: string;
  /** Origin recorded in attestations, e.g. `http://127.0.0.1:8787`. */
  origin: string;
  /** The log's origin line; defaults to one derived from the log key. */
  logOrigin?: string;
  clock?: () => Date;
  limits?: Partial<PipelineLimits>;
  /** Where the pipeline runs: inline (the default) or a worker pool (startPipelinePool); the caller closes it. */
  pipeline?: PipelineRunner;
  /**
   * Where publishes are signed and committed: on this thread over `store` (the default), or on a writer thread
   * (startPublishWriter over the same data folder and keys); the caller closes it.
   */
  committer?: PublishCommitter;
  /** How long an approval request stays open (default DEFAULT_APPROVAL_TTL_SECONDS). */
  approvalTtlSeconds?: number;
  /** Writes (publishes, yanks, approval requests and transitions) in flight at most; more are SERVER_BUSY (default 1024). */
  maxPendingWrites?: number;
  /**
   * Several processes on one database (issue 16 §2; the store must be one they share): how the sequencer lease is kept.
   * The log is then sequenced, and checkpoints signed, only by the process holding the lease; the others hand their
   * publishes, yanks and approval transitions to it through the database.
   */
  sequencing?: SequencingOptions;
}

export interface SequencingOptions {
  leaseMs?: number;
  pollMs?: number;
  jobTimeoutMs?: number;
  holder?: string;
  onEvent?: (event: SequencerEvent) => void;
}

export interface PublishOutcome {
  created: boolean;
  record: VersionRecord;
  size: number;
  renamedTools: RenamedTool[];
  inclusion: InclusionProof;
}

export interface StoredManifest {
  record: VersionRecord;
  bytes: Buffer;
  digest: Sha256Digest;
}

/** One manifest in a listing: what GET /v1/manifests answers per item, less the URL (HTTP adds it). */
export type ManifestListing = Omit<ManifestListResponse['items'][number], 'url'>;

export interface DigestBinding {
  name: string;
  version: string;
  publisher: string;
  storedAt: string;
  kid: string;
  status: VersionStatus;
  yankReason: string | null;
  logIndex: number;
  attestation: Buffer;
}

/**
 * Open a registry over a store: load (or on first start generate) the log key and the signing key, and refuse a log
 * signed by another key or rolled back behind the checkpoint this registry last signed (issue 25 §1).
 */
export async function openRegistry(options: RegistryOptions): Promise<Registry> {
  const store = options.store;
  const clock = options.clock ?? (() => new Date());
  const logIsEmpty = (await store.getLogSize()) === 0 && (await store.latestCheckpoint()) === undefined;
  const logOrigin = await resolveLogOrigin(store, options.logOrigin, options.origin);
  const log = new TransparencyLog(store, loadOrCreateLogKey(options.keysDir, logIsEmpty), logOrigin, clock);
  await log.assertSignedByThisKey();
  await assertNoLogRollback(store, options.keysDir, log.verifierString);
  log.recordCheckpointsIn(new CheckpointFileRecorder(options.keysDir));
  const registry = new Registry(options, log);
  await registry.start();
  return registry;
}

export class Registry {
  readonly store: Store;
  readonly log: TransparencyLog;
  readonly origin: string;
  private readonly keysDir: string;
  private readonly clock: () => Date;
  private readonly limits: Partial<PipelineLimits>;
  private readonly pipeline: PipelineRunner;
  private readonly committer: PublishCommitter;
  private readonly approvalDeps: ApprovalDeps;
  private readonly sequencer: Sequencer | undefined;
  private localCommitter: GroupCommitter | undefined;
  /** The writes in flight in this process, bounded (backpressure: SERVER_BUSY beyond it). */
  private readonly writes: WriteAdmission;

  /** Use openRegistry: it checks the log before the registry is built. */
  constructor(options: RegistryOptions, log: TransparencyLog) {
    this.store = options.store;
    this.keysDir = options.keysDir;
    this.origin = options.origin;
    this.clock = options.clock ?? (() => new Date());
    this.limits = options.limits ?? {};
    this.pipeline = options.pipeline ?? inlinePipeline;
    this.log = log;
    this.writes = new WriteAdmission(options.maxPendingWrites);
    this.approvalDeps = {
      store: this.store,
      log: this.log,
      clock: this.clock,
      origin: this.origin,
      ttlSeconds: options.approvalTtlSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS,
      readManifest: (name, version) => this.getManifest(name, version),
    };
    if (options.sequencing) {
      if (options.committer) throw new ToolsealError('INTERNAL', 'a sequenced registry commits on its own thread');
      const sequencing = options.sequencing;
      this.sequencer = new Sequencer({
        store: asSequencingStore(this.store),
        ...(sequencing.holder === undefined ? {} : { holder: sequencing.holder }),
        ...(sequencing.leaseMs === undefined ? {} : { leaseMs: sequencing.leaseMs }),
        ...(sequencing.pollMs === undefined ? {} : { pollMs: sequencing.pollMs }),
        ...(sequencing.jobTimeoutMs === undefined ? {} : { jobTimeoutMs: sequencing.jobTimeoutMs }),
        execute: (jobs) =>
          executeLogJobs(
            {
              store: asSequencingStore(this.store),
              committer: this.localCommitter!,
              yank: this.yankDeps,
              approvals: this.approvalDeps,
            },
            jobs,
          ),
        afterCommit: () => this.log.recordLatestCheckpoint(),
        onSequencing: () => this.signUncoveredLeaves(sequencing.onEvent),
        onTakeover: () => this.backfillBundlesOnTakeover(sequencing.onEvent),
        ...(sequencing.onEvent === undefined ? {} : { onEvent: sequencing.onEvent }),
      });
      this.log.useSigner({ canSign: () => this.sequencer!.isSequencer(), fence: () => this.sequencer!.fence() });
    }
    const local = new GroupCommitter({
      store: this.store,
      log: this.log,
      keysDir: this.keysDir,
      origin: this.origin,
      clock: this.clock,
    });
    if (this.sequencer) {
      this.localCommitter = local;
      this.committer = new SequencedCommitter(local, this.sequencer, this.store);
    } else {
      this.committer = options.committer ?? local;
    }
  }

  /**
   * Start sequencing (with several processes), load the active signing key, generating the first one, and the bundle
   * keys (the first one created beside it); then give every version without a Sigstore bundle one (issue 26). With
   * several processes, the sequencer's takeover (at start, or later by a follower) also does (backfillBundlesOnTakeover,
   * alongside: the writer lock orders the two, and the later one finds nothing left), and a failure here fails the start.
   */
  async start(): Promise<void> {
    await this.sequencer?.start();
    try {
      // The active key must load (a missing private file is an error here, not at the first publish).
      if (!(await loadActiveSigningKey(this.keyDeps))) await this.generateFirstSigningKey();
      // Only the process that signs (the one, or the sequencer) creates the first bundle key: processes starting
      // together on one keys folder would otherwise each write a key list of their own. Followers never sign bundles.
      if (this.sequencer === undefined || this.sequencer.isSequencer()) {
        loadOrCreateBundleKeys(this.keysDir, Math.floor(this.clock().getTime() / 1000));
        if (await backfillBundles(this.bundleDeps, this.clock)) await this.log.recordLatestCheckpoint();
      }
    } catch (error) {
      await this.sequencer?.close(); // a registry that failed to open leaves nothing running
      throw error;
    }
  }

  /** With several processes on one database: whether this one sequences the log now; otherwise undefined. */
  get sequencingRole(): SequencerRole | undefined {
    return this.sequencer?.role;
  }

  /** Stop sequencing (give the lease up) and refuse new sequenced work; call after `drain`, before closing the store. */
  async stopSequencing(): Promise<void> {
    await this.sequencer?.close();
  }

  async activeKid(): Promise<string> {
    const kid = await this.store.activeSigningKid();
    if (kid === undefined) throw new ToolsealError('INTERNAL', 'the registry has no active signing key');
    return kid;
  }

  // ── publishers ──────────────────────────────────────────────────────────

  /** Create a publisher owning `namespace`; returns the bearer token, which is never stored (only its hash). */
  async createPublisher(namespace: string): Promise<{ publisher: PublisherRecord; token: string }> {
    return await createPublisher(this.store, namespace, this.clock);
  }

  /** How many publishers exist (a fresh registry has none). */
  async countPublishers(): Promise<number> {
    return await this.store.countPublishers();
  }

  /**
   * The publisher a bearer token belongs to (the transport has taken it out of its header), looked up per request:
   * a revoked publisher or a rotated-out token is refused at once.
   */
  async authenticate(token: string | undefined): Promise<PublisherRecord> {
    return await authenticatePublisher(this.store, token);
  }

  // ── operators, hosts and approvals (approvals.ts) ───────────────────────

  /** Create an operator or a host; returns its bearer token, which is never stored (only its hash). */
  async createPrincipal(kind: PrincipalKind, name: string): Promise<{ principal: PrincipalRecord; token: string }> {
    return await createPrincipal(this.store, kind, name, this.clock);
  }

  /** The operator or host a token belongs to (FORBIDDEN for a valid token of another kind), per request. */
  authenticatePrincipal(token: string | undefined, kind: PrincipalKind | 'any'): Promise<PrincipalRecord> {
    return kind === 'any'
      ? authenticateAnyPrincipal(this.store, token)
      : authenticatePrincipal(this.store, token, kind);
  }

  /** Who a publisher's, operator's or host's token belongs to. */
  async whoami(token: string | undefined): Promise<WhoamiResponse> {
    return await identifyToken(this.store, token);
  }

  async requestApproval(host: PrincipalRecord, envelopeBytes: Uint8Array): Promise<ApprovalRequestOutcome> {
    return this.writes.admit(() => requestApproval(this.approvalDeps, host, envelopeBytes));
  }

  getApproval(principal: PrincipalRecord, id: string): Promise<ApprovalResponse> {
    return readApproval(this.approvalDeps, principal, id);
  }

  async listApprovals(status: ApprovalStatus | undefined, limit: number): Promise<ApprovalListResponse> {
    return await listApprovals(this.approvalDeps, status, limit);
  }

  /** Decide an approval (its leaf and checkpoint in one transaction; by the sequencer when several processes share a log). */
  async decideApproval(
    operator: PrincipalRecord,
    id: string,
    bodyBytes: Uint8Array,
  ): Promise<ApprovalTransitionResponse> {
    return this.runWrite(
      { kind: 'approval-decision', principal: operator, id, body: bodyBytes },
      async () => await decideApproval(this.approvalDeps, operator, id, bodyBytes),
      (value: ApprovalTransitionResponse) => value,
    );
  }

  /** Consume an approval (as decideApproval: its leaf and checkpoint in one transaction, by the sequencer). */
  async consumeApproval(
    host: PrincipalRecord,
    id: string,
    envelopeBytes: Uint8Array,
  ): Promise<ApprovalTransitionResponse> {
    return this.runWrite(
      { kind: 'approval-consumption', principal: host, id, body: envelopeBytes },
      async () => await consumeApproval(this.approvalDeps, host, id, envelopeBytes),
      (value: ApprovalTransitionResponse) => value,
    );
  }

  // ── publish ─────────────────────────────────────────────────────────────

  /**
   * Run the pipeline over the uploaded bytes, then store the publish atomically: sign, store bytes and
   * attestation, append the attestation to the log. Same name@version with the same digest is idempotent;
   * with other bytes it is VERSION_EXISTS and nothing changes. Answers only after the commit (and the
   * signed checkpoint that includes the new leaf) are durable.
   *
   * The pipeline runs where `options.pipeline` says (inline, or a worker thread of a pool); the commit where
   * `options.committer` says (group commit on this thread, or on a writer thread: see group-commit.ts).
   */
  async publish(bytes: Uint8Array, publisher: PublisherRecord | PublishAuthoriser): Promise<PublishOutcome> {
    return this.writes.admit(() => this.runPublish(bytes, publisher));
  }

  /**
   * Resolve once no write is in flight (for shutdown: a publish whose client has gone away still runs to
   * its commit, and the store must stay open until it has).
   */
  drain(): Promise<void> {
    return this.writes.whenIdle();
  }

  private async runPublish(
    bytes: Uint8Array,
    authoriser: PublisherRecord | PublishAuthoriser,
  ): Promise<PublishOutcome> {
    const result = await this.pipeline.run(bytes, this.limits);
    const namespace = result.name.slice(0, result.name.indexOf('/'));
    // Issue 28: an OIDC publish is authorised only once the namespace is known (trust-rules.ts).
    const publisher = typeof authoriser === 'function' ? await authoriser(namespace) : authoriser;
    if (namespace.toLowerCase() !== publisher.namespace.toLowerCase()) {
      throw new ToolsealError('FORBIDDEN', `namespace ${namespace} does not belong to this publisher`, {
        pointer: '/name',
      });
    }
    const { created, record, inclusion } = await this.committer.commit(result, publisher);
    return { created, record, size: result.size, renamedTools: result.renamedTools, inclusion };
  }

  // ── reads ───────────────────────────────────────────────────────────────

  /** The stored bytes of name@version, re-checked against their digest (INTEGRITY_ERROR otherwise). */
  async getManifest(name: string, version: string): Promise<StoredManifest> {
    const record = await this.store.getVersion(name, version);
    if (!record) throw new ToolsealError('NOT_FOUND', `${name}@${version} is not in this registry`);
    return { record, ...(await this.readVerifiedBlob(record.digest)) };
  }

  /** Bytes by digest, re-checked. The digest is only ever a lookup key: it is recomputed before sending. */
  async getBlob(digest: string): Promise<{ bytes: Buffer; digest: Sha256Digest }> {
    return await this.readVerifiedBlob(digest);
  }

  private async readVerifiedBlob(digest: string): Promise<{ bytes: Buffer; digest: Sha256Digest }> {
    const blob = await this.store.getBlob(digest);
    if (!blob) throw new ToolsealError('NOT_FOUND', `no manifest bytes with digest ${digest}`);
    const actual = `sha256:${computeSha256Hex(blob.bytes)}` as Sha256Digest;
    if (actual !== digest || blob.digest !== digest || blob.size !== blob.bytes.byteLength) {
      throw new ToolsealError(
        'INTEGRITY_ERROR',
        `stored bytes for ${digest} fail their digest; refusing to serve them`,
      );
    }
    return { bytes: blob.bytes, digest: actual };
  }

  async getVersionRecord(name: string, version: string): Promise<VersionRecord> {
    const record = await this.store.getVersion(name, version);
    if (!record) throw new ToolsealError('NOT_FOUND', `${name}@${version} is not in this registry`);
    return record;
  }

  /** The version `latest` resolves to: the highest non-yanked release (semver precedence). */
  async resolveLatest(name: string): Promise<string> {
    const versions = await this.store.listVersions(name);
    if (versions.length === 0) throw new ToolsealError('NOT_FOUND', `${name} is not in this registry`);
    const latest = pickLatestVersion(versions.filter((v) => v.status === 'active').map((v) => v.version));
    if (latest === undefined) throw new ToolsealError('NOT_FOUND', `every version of ${name} is yanked`);
    return latest;
  }

  async listVersions(name: string): Promise<VersionRecord[]> {
    const versions = await this.store.listVersions(name);
    if (versions.length === 0) throw new ToolsealError('NOT_FOUND', `${name} is not in this registry`);
    return versions.sort((a, b) => compareVersions(a.version, b.version));
  }

  /** Manifests in name order, each with its latest non-yanked version (or latest at all when all are yanked). */
  async listManifests(
    query: string | undefined,
    afterName: string | undefined,
    limit: number,
  ): Promise<{ items: ManifestListing[]; nextAfter: string | undefined }> {
    const names = await this.store.listManifestNames(query, afterName, limit + 1);
    const page = names.slice(0, limit);
    const items = await mapInOrder(page, async (name) => {
      const versions = await this.store.listVersions(name);
      const active = versions.filter((v) => v.status === 'active');
      const pool = active.length > 0 ? active : versions;
      const latest = pickLatestVersion(pool.map((v) => v.version));
      const record = pool.find((v) => v.version === latest)!;
      const publisher = await this.store.findPublisherById(record.publisherId);
      return {
        name,
        latestVersion: record.version,
        digest: record.digest,
        status: record.status,
        storedAt: record.storedAt,
        publisher: publisher?.namespace ?? '',
      };
    });
    return { items, nextAfter: names.length > limit ? page[page.length - 1] : undefined };
  }

  /** A page of versions with a signed server (the official read API, official-servers.ts). */
  listServerVersionPage(query: ServerPageQuery): ReturnType<typeof listServerVersionPage> {
    return listServerVersionPage(this, query);
  }

  /** Every version of `name` with a signed server, newest first; NOT_FOUND when there is none. */
  listServerVersionsOf(name: string): Promise<ServerVersionEntry[]> {
    return listServerVersionsOf(this, name);
  }

  /** One version (or `latest`) of `name` with a signed server, or which of the two is missing. */
  readServerVersion(name: string, version: string): ReturnType<typeof readServerVersion> {
    return readServerVersion(this, name, version);
  }

  /** The auditor query: every name@version bound to `digest`. */
  async listBindings(digest: string): Promise<DigestBinding[]> {
    return (await this.store.listVersionsByDigest(digest)).map((v) => ({
      name: v.name,
      version: v.version,
      publisher: v.publisher,
      storedAt: v.storedAt,
      kid: v.kid,
      status: v.status,
      yankReason: v.yankReason,
      logIndex: v.logIndex,
      attestation: v.attestation,
    }));
  }

  // ── yank ────────────────────────────────────────────────────────────────

  /**
   * Mark name@version yanked (bytes stay fetchable), logging the event in a signed checkpoint, in one transaction.
   * Yanking again changes nothing and says so (`alreadyYanked`).
   */
  async yank(publisher: PublisherRecord, name: string, version: string, reason: string): Promise<YankOutcome> {
    return this.runWrite(
      { kind: 'yank', publisher, name, version, reason },
      async () => await yankVersion(this.yankDeps, publisher, name, version, reason),
      async (value: YankJobValue) => ({
        alreadyYanked: value.alreadyYanked,
        record: await this.getVersionRecord(name, version),
      }),
    );
  }

  private get yankDeps() {
    return { store: this.store, log: this.log, clock: this.clock };
  }

  // ── several processes, one log (sequencer.ts) ───────────────────────────

  /**
   * Run log-writing work here (one process, or this one holds the lease), else hand it to the sequencer and map the
   * value it answers. A lease lost in the middle rolled the local attempt back, so it is handed over then too.
   */
  private runWrite<T, V>(job: LogJob, local: () => Promise<T>, fromValue: (value: V) => T | Promise<T>): Promise<T> {
    return this.writes.admit(() => this.runSequenced(job, local, fromValue));
  }

  private async runSequenced<T, V>(
    job: LogJob,
    local: () => Promise<T>,
    fromValue: (value: V) => T | Promise<T>,
  ): Promise<T> {
    const sequencer = this.sequencer;
    if (sequencer === undefined) return local();
    if (sequencer.isSequencer()) {
      try {
        return await local();
      } catch (error) {
        if (!isSequencerLoss(error)) throw error;
      }
    }
    return fromValue(unwrapLogJobResult<V>(await sequencer.submit(job)));
  }

  /** The new sequencer signs over leaves no checkpoint covers (e.g. appended by an admin command). */
  private async signUncoveredLeaves(onEvent: ((event: SequencerEvent) => void) | undefined): Promise<void> {
    try {
      if ((await this.store.getLogSize()) > ((await this.store.latestCheckpoint())?.size ?? 0)) {
        await this.log.signLatestCheckpoint();
        await this.log.recordLatestCheckpoint();
      }
    } catch (error) {
      if (!isSequencerLoss(error)) onEvent?.({ type: 'error', where: 'lease', error });
    }
  }

  /**
   * A process that takes the lease gives every version without a Sigstore bundle one (issue 26), as start() does for
   * the process that sequences at start: a follower that takes over later would otherwise leave them until its next
   * start. Once per takeover; a failure is reported (`takeover`), and the next takeover or start tries again.
   */
  private async backfillBundlesOnTakeover(onEvent: ((event: SequencerEvent) => void) | undefined): Promise<void> {
    try {
      if (await backfillBundles(this.bundleDeps, this.clock)) await this.log.recordLatestCheckpoint();
    } catch (error) {
      if (!isSequencerLoss(error)) onEvent?.({ type: 'error', where: 'takeover', error });
    }
  }

  // ── keys ────────────────────────────────────────────────────────────────

  /** The attestation keys and, after them, the P-256 bundle keys (with nbf/exp), as one JWK Set. */
  async jwks(): Promise<RegistryJwks> {
    return buildRegistryBundleJwks(await buildRegistryJwks(this.store), this.keysDir);
  }

  /**
   * The Sigstore bundle of name@version (issue 26): assembled from what its publish stored, the latest checkpoint
   * (`decorate` adds witness cosignatures) and a proof computed here. NOT_FOUND for an unknown version.
   */
  async getBundle(name: string, version: string, decorate?: (note: string) => string): Promise<SigstoreBundleJson> {
    return readServedBundle(this.bundleDeps, await this.getVersionRecord(name, version), decorate);
  }

  /**
   * The Sigstore bundle of the version whose bytes have `digest` (GET /v1/blobs/{digest}/bundle): the bytes declare
   * their own name and version, so at most one version has them. NOT_FOUND when none does.
   */
  async getBundleByDigest(digest: string, decorate?: (note: string) => string): Promise<SigstoreBundleJson> {
    const [record, ...others] = await this.store.listVersionsByDigest(digest);
    if (!record) throw new ToolsealError('NOT_FOUND', `no version has the digest ${digest}`);
    if (others.length > 0 || record.digest !== digest) {
      throw new ToolsealError('INTEGRITY_ERROR', `the versions stored for ${digest} are not one version of it`);
    }
    return readServedBundle(this.bundleDeps, record, decorate);
  }

  /** The Sigstore trusted root of this registry's log and its bundle keys by hint. */
  trustMaterial(): Promise<{ trustedRoot: TrustedRootJson; keyring: Record<string, PublicKeyJson> }> {
    return readTrustMaterial(this.bundleDeps, this.origin);
  }

  private get bundleDeps(): ServedBundleDeps {
    return { store: this.store, log: this.log, keysDir: this.keysDir };
  }

  async keyValidities(): Promise<KeyValidity[]> {
    return listKeyValidities(this.store);
  }

  /**
   * Make a new key active and retire the current one (kept in the JWKS with its `exp`); logged. The bundle key is
   * rotated with it, first (it refuses a second rotation within one second); publishes pick both up at their next batch.
   */
  async rotateSigningKey(): Promise<{ retired: string; active: string; bundle: { retired: string; active: string } }> {
    const bundle = rotateBundleKeyNow(this.keysDir, this.clock);
    return { ...(await rotateSigningKey(this.keyDeps)), bundle };
  }

  /** The leaf data of log entries [start, end), for entry bundles (C2SP tlog-tiles). */
  async readLogEntryData(start: number, end: number): Promise<Buffer[]> {
    return (await this.store.readLogEntries(start, end)).map((entry) => entry.data);
  }

  async latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    return await this.log.latestCheckpoint();
  }

  private get keyDeps(): SigningKeyDeps {
    return { store: this.store, log: this.log, keysDir: this.keysDir, clock: this.clock };
  }

  /**
   * First start: a signing key is generated, registered and logged, and a checkpoint signed over it. A follower leaves
   * the checkpoint to the sequencer (which signs over uncovered leaves when it takes the lease).
   */
  private async generateFirstSigningKey(): Promise<void> {
    await registerFirstSigningKey(this.keyDeps);
    if (this.sequencer === undefined || this.sequencer.isSequencer()) {
      await this.log.signLatestCheckpoint();
      await this.log.recordLatestCheckpoint();
    }
  }
}

/** `work` over each item, one after another (a store call each: in order, never a burst on a connection pool). */
async function mapInOrder<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (const item of items) results.push(await work(item));
  return results;
}

// The store port (issue 24 §1, §6): what the registry, the log and fsck need from storage, by role, and nothing about
// how it is kept. Two implementations (src/store/sqlite/, src/store/postgres/); every method returns a Promise,
// `transaction` runs its work atomically (all of it or none), one writer at a time, and `read` gives one consistent
// snapshot for many reads. Store calls made inside `work` (in its async context) belong to it.

import type { LogEntryKind } from '../log/entries.ts';
import type { VersionStatus } from '../protocol/wire.ts';

export type { LogEntryKind } from '../log/entries.ts';
export type { VersionStatus } from '../protocol/wire.ts';

export interface PublisherRecord {
  id: number;
  namespace: string;
  tokenHash: string;
  createdAt: string;
  /** When the publisher was revoked (its token refused from then on); null or absent while it is active. */
  revokedAt?: string | null;
}

export interface VersionRecord {
  id: number;
  name: string;
  version: string;
  digest: string;
  publisherId: number;
  storedAt: string;
  attestation: Buffer;
  kid: string;
  logIndex: number;
  status: VersionStatus;
  yankReason: string | null;
  yankedAt: string | null;
  yankLogIndex: number | null;
}

export interface VersionWithPublisher extends VersionRecord {
  publisher: string;
}

export interface BlobRecord {
  digest: string;
  bytes: Buffer;
  size: number;
}

export interface SigningKeyRecord {
  kid: string;
  publicJwk: string;
  notBefore: number;
  notAfter: number | null;
  logIndex: number | null;
}

export interface LogEntryRecord {
  index: number;
  kind: LogEntryKind;
  data: Buffer;
  leafHash: Buffer;
}

/** A perfect-subtree node of the log (RFC 9162 §2.1.1): its level, its index at that level, its hash. */
export interface LogNodeRecord {
  level: number;
  index: number;
  hash: Uint8Array;
}

export interface CheckpointRecord {
  size: number;
  rootHash: Buffer;
  note: string;
  createdAt: string;
}

/** A witness's verified cosignature line of the checkpoint of `size` (C2SP tlog-cosignature; issue 25 §2). */
export interface CosignatureRecord {
  size: number;
  /** The witness's name in the registry's witness policy. */
  witness: string;
  /** "— name base64\n", as the witness sent it. */
  line: string;
}

/** An operator decides approvals; a host's guard asks for and consumes them (issue 13 §3). */
export type PrincipalKind = 'operator' | 'host';

export interface PrincipalRecord {
  id: number;
  kind: PrincipalKind;
  /** Unique per kind (`^[a-z0-9][a-z0-9._-]{0,63}$`); a host's name is the audience of its approvals. */
  name: string;
  tokenHash: string;
  createdAt: string;
  /** When the principal was revoked (its token refused from then on); null while it is active. */
  revokedAt: string | null;
}

/** The states an approval is stored in (`expired` is computed at read time, never stored). */
export type StoredApprovalStatus = 'pending' | 'approved' | 'denied' | 'consumed';

export interface ApprovalRecord {
  /** `apr_` + 22 base64url characters. */
  id: string;
  /** The host principal that asked. */
  hostId: number;
  /** The host's name, as the envelope's `audience`. */
  audience: string;
  manifestName: string;
  manifestVersion: string;
  tool: string;
  /** The action digest the registry recomputed. */
  digest: string;
  /** The request bytes exactly as the host sent them. */
  envelope: Buffer;
  /** The commitment salt (32 secret bytes). */
  salt: Buffer;
  status: StoredApprovalStatus;
  createdAt: string;
  expiresAt: string;
  /** The deciding operator's id and name, once decided. */
  decidedById: number | null;
  decidedBy: string | null;
  decidedAt: string | null;
  reason: string | null;
  decisionLogIndex: number | null;
  consumedAt: string | null;
  consumptionLogIndex: number | null;
}

/** A new request: what it asks for (the transition fields start empty, the status pending). */
export type NewApprovalRecord = Pick<
  ApprovalRecord,
  | 'id'
  | 'hostId'
  | 'audience'
  | 'manifestName'
  | 'manifestVersion'
  | 'tool'
  | 'digest'
  | 'envelope'
  | 'salt'
  | 'createdAt'
  | 'expiresAt'
>;

/** pending → approved | denied: who decided, when, why, and the decision's log leaf. */
export interface ApprovalDecision {
  status: 'approved' | 'denied';
  decidedById: number;
  decidedAt: string;
  reason: string | null;
  logIndex: number;
}

/** Which approvals a listing wants; `expired` means pending or approved with `expiresAt` not after `now`. */
export interface ApprovalFilter {
  status?: StoredApprovalStatus | 'expired';
  /** RFC 3339 UTC with milliseconds (Date.toISOString), compared as text. */
  now: string;
  limit: number;
}

/**
 * What a version's Sigstore bundle is assembled from (issue 26, docs/sigstore.md), less what changes with the log (the
 * inclusion proof and checkpoint are computed per answer). Written once, in the transaction that logs its leaf.
 */
export interface BundleRecord {
  versionId: number;
  /** The P-256 bundle key that signed (the DSSE keyid and the bundle's key hint). */
  kid: string;
  /** The DSSE envelope as JSON text, exactly as signed. */
  envelope: string;
  /** The index of its hashedrekord leaf (a `bundle` log entry). */
  logIndex: number;
  /** When the log integrated that leaf (seconds since the epoch). */
  integratedTime: number;
  /** The log key's inclusion promise (signed entry timestamp) for that leaf, index and time. */
  promise: Buffer;
}

/** Atomic work, snapshots and the storage itself. */
export interface StoreTransactions {
  /**
   * Run `work` atomically (one writer at a time; store calls awaited inside it are part of it). A throw rolls all of it back. A store out of room
   * throws STORAGE_FULL, a damaged one INTEGRITY_ERROR (after the rollback).
   */
  transaction<T>(work: () => Promise<T>): Promise<T>;
  /** Run the reads in `work` on one consistent snapshot (other writers go on); errors as in `transaction`. */
  read<T>(work: () => Promise<T>): Promise<T>;
  /** True when the caller runs inside one of this store's transactions (its async context): not yet committed. */
  isInTransaction(): boolean;
  /** Check the storage's own structure (pages, indexes); one line per problem found, none when intact (for fsck). */
  checkStructure(): Promise<string[]>;
  close(): Promise<void>;
}

/** Publishers (namespace owners) and their tokens' hashes. */
export interface PublisherStore {
  insertPublisher(namespace: string, tokenHash: string, createdAt: string): Promise<PublisherRecord>;
  findPublisherByTokenHash(tokenHash: string): Promise<PublisherRecord | undefined>;
  findPublisherById(id: number): Promise<PublisherRecord | undefined>;
  findPublisherByNamespace(namespace: string): Promise<PublisherRecord | undefined>;
  countPublishers(): Promise<number>;
  /** Every publisher, oldest first. */
  listPublishers(): Promise<PublisherRecord[]>;
  /** Set `revokedAt` once (a revoked publisher stays revoked). */
  revokePublisher(id: number, revokedAt: string): Promise<void>;
  /** Replace the token hash (the old token is refused from then on); never for a revoked publisher. */
  replacePublisherTokenHash(id: number, tokenHash: string): Promise<void>;
}

/** Operators and hosts (issue 13 §3). */
export interface PrincipalStore {
  /** NAMESPACE_TAKEN when `kind` already has a principal called `name`. */
  insertPrincipal(kind: PrincipalKind, name: string, tokenHash: string, createdAt: string): Promise<PrincipalRecord>;
  /** The operator or host a token hash belongs to (token hashes are unique across kinds). */
  findPrincipalByTokenHash(tokenHash: string): Promise<PrincipalRecord | undefined>;
  findPrincipalById(id: number): Promise<PrincipalRecord | undefined>;
  findPrincipal(kind: PrincipalKind, name: string): Promise<PrincipalRecord | undefined>;
  /** Every principal of `kind`, oldest first. */
  listPrincipals(kind: PrincipalKind): Promise<PrincipalRecord[]>;
  /** Set `revokedAt` once (a revoked principal stays revoked). */
  revokePrincipal(id: number, revokedAt: string): Promise<void>;
}

/** Approval requests and their transitions (issue 13). */
export interface ApprovalStore {
  insertApproval(row: NewApprovalRecord): Promise<void>;
  getApproval(id: string): Promise<ApprovalRecord | undefined>;
  /**
   * The newest request of `hostId` for `digest` still standing at `now` (pending, approved or denied, not expired), if
   * any: an identical request gets it back, so a denial stays a denial until it expires (issue 23 §4).
   */
  findStandingApproval(hostId: number, digest: string, now: string): Promise<ApprovalRecord | undefined>;
  /** Approvals matching `filter`, newest first. */
  listApprovals(filter: ApprovalFilter): Promise<ApprovalRecord[]>;
  /** Every approval, oldest first (for fsck). */
  listAllApprovals(): Promise<ApprovalRecord[]>;
  /** pending → approved | denied; false (nothing written) when it is no longer pending. */
  decideApproval(id: string, decision: ApprovalDecision): Promise<boolean>;
  /** approved → consumed; false (nothing written) when it is not approved. */
  consumeApproval(id: string, consumedAt: string, logIndex: number): Promise<boolean>;
}

/** A version row as a publish inserts it (the database numbers it; it starts active). */
export type NewVersionRecord = Omit<VersionRecord, 'id' | 'status' | 'yankReason' | 'yankedAt' | 'yankLogIndex'>;

/** Manifest versions and the exact bytes they name. */
export interface VersionStore {
  insertBlobIfAbsent(digest: string, bytes: Uint8Array): Promise<void>;
  getBlob(digest: string): Promise<BlobRecord | undefined>;
  getVersion(name: string, version: string): Promise<VersionRecord | undefined>;
  /** The digest of the most recently stored version of `name` (any status), for the attestation's previousDigest. */
  getLatestStoredDigest(name: string): Promise<string | undefined>;
  insertVersion(row: NewVersionRecord): Promise<VersionRecord>;
  markYanked(id: number, reason: string, yankedAt: string, yankLogIndex: number): Promise<void>;
  listVersions(name: string): Promise<VersionRecord[]>;
  /** Versions bound to a digest, with their publisher's namespace (the auditor query). */
  listVersionsByDigest(digest: string): Promise<VersionWithPublisher[]>;
  /**
   * Distinct manifest names in name order after `afterName`; with `query`, only those whose name, or any version's
   * description or tool name, title or description, contains it (case-insensitively for ASCII; `%` and `_` literal).
   */
  listManifestNames(query: string | undefined, afterName: string | undefined, limit: number): Promise<string[]>;
  /** Every version, oldest first (for fsck). */
  listAllVersions(): Promise<VersionRecord[]>;
  /** Every blob, in digest order (for fsck). */
  listAllBlobs(): Promise<BlobRecord[]>;
}

/** A publish batch's reads and writes: one round trip each however many publishes it holds (issue 24 §2). */
export interface VersionBatchStore {
  /** The stored rows of these name@version pairs (absent ones are left out; any order). */
  getVersions(keys: readonly { name: string; version: string }[]): Promise<VersionRecord[]>;
  /** getLatestStoredDigest of each name, for the names that have a stored version. */
  getLatestStoredDigests(names: readonly string[]): Promise<Map<string, string>>;
  /** insertBlobIfAbsent of each blob. */
  insertBlobsIfAbsent(blobs: readonly { digest: string; bytes: Uint8Array }[]): Promise<void>;
  /** insertVersion of each row, in order; VERSION_EXISTS (none inserted, in a transaction) when any exists. */
  insertVersions(rows: readonly NewVersionRecord[]): Promise<VersionRecord[]>;
}

/** Sigstore bundles of versions (issue 26). */
export interface BundleStore {
  /** Store versions' bundle parts, in one round trip (once: a second one for the same version is refused). */
  insertBundles(rows: readonly BundleRecord[]): Promise<void>;
  getBundle(versionId: number): Promise<BundleRecord | undefined>;
  /** Every version that has no bundle yet, oldest first (the backfill at start). */
  listVersionsWithoutBundle(): Promise<VersionRecord[]>;
  /** Every bundle, by version id (for fsck). */
  listAllBundles(): Promise<BundleRecord[]>;
}

/** The attestation signing keys. */
export interface KeyStore {
  /** The kid of the key without `notAfter` (the active one), if any. */
  activeSigningKid(): Promise<string | undefined>;
  listSigningKeys(): Promise<SigningKeyRecord[]>;
  insertSigningKey(row: SigningKeyRecord): Promise<void>;
  retireSigningKey(kid: string, notAfter: number): Promise<void>;
}

/** The transparency log: leaves, perfect-subtree nodes and signed checkpoints (RFC 6962 §2.1). */
export interface LogStore {
  getLogSize(): Promise<number>;
  readLogNode(level: number, index: number): Promise<Buffer | undefined>;
  /** Several nodes in one round trip, keyed `level/index`; absent ones are left out. */
  readLogNodes(nodes: readonly { level: number; index: number }[]): Promise<Map<string, Buffer>>;
  insertLogEntry(entry: LogEntryRecord): Promise<void>;
  insertLogNode(level: number, index: number, hash: Uint8Array): Promise<void>;
  /** Several leaves and the nodes their appends create, in one round trip (a batch's appends: issue 24 §2). */
  insertLogLeaves(entries: readonly LogEntryRecord[], nodes: readonly LogNodeRecord[]): Promise<void>;
  readLogEntries(start: number, end: number): Promise<LogEntryRecord[]>;
  /** Every stored perfect-subtree node (for fsck). */
  listAllLogNodes(): Promise<{ level: number; index: number; hash: Buffer }[]>;
  listCheckpoints(): Promise<CheckpointRecord[]>;
  latestCheckpoint(): Promise<CheckpointRecord | undefined>;
  insertCheckpoint(row: CheckpointRecord): Promise<void>;
  /**
   * Keep a cosignature the sequencer verified, so every process serving this log merges it (replaces that witness's
   * line for that size: a witness may cosign a size again, with a later timestamp).
   */
  saveCosignature(row: CosignatureRecord): Promise<void>;
  /** The kept cosignatures of the checkpoint of `size`, by witness name. */
  listCosignatures(size: number): Promise<CosignatureRecord[]>;
}

/** Every role: what a store implementation provides (a use case should ask for the roles it needs). */
export interface Store
  extends StoreTransactions,
    PublisherStore,
    PrincipalStore,
    ApprovalStore,
    VersionStore,
    VersionBatchStore,
    BundleStore,
    KeyStore,
    LogStore {}

/** The key of a log node in `readLogNodes`' answer. */
export function logNodeKey(level: number, index: number): string {
  return `${level}/${index}`;
}

/** Log-writing work one registry process hands to the sequencer (issue 16 §2). */
export type LogJobKind = 'publish' | 'yank' | 'approval-decision' | 'approval-consumption';

/** queued → done | failed (by the sequencer, with the work) or → cancelled (by the submitter that gave up on it). */
export type LogJobState = 'queued' | 'done' | 'failed' | 'cancelled';

export interface LogJobRecord {
  id: number;
  kind: LogJobKind;
  payload: Buffer;
  /** The submitting process (its sequencer-lease holder name). */
  submittedBy: string;
}

export interface LogJobOutcome {
  id: number;
  state: LogJobState;
  /** What the sequencer wrote with `done` or `failed` (log-jobs.ts encodes it); null while queued or cancelled. */
  outcome: Buffer | null;
}

export interface SequencerLeaseRecord {
  holder: string;
  /** Grows by one at every change of holder: a fencing token. */
  epoch: number;
  /** RFC 3339, the database's clock. */
  expiresAt: string;
}

/**
 * What several registry processes on one database need (issue 16 §2); only a store shared between processes has it
 * (the PostgreSQL store). Lease times are the database's clock, so the processes' clocks do not matter.
 */
export interface SequencingStore {
  /**
   * Take the lease for `holder` when it is free or expired, or renew it when `holder` has it, for `ttlMs`; returns the
   * lease as it now is (another holder's when it is taken). One statement, outside any transaction.
   */
  claimSequencerLease(holder: string, ttlMs: number): Promise<SequencerLeaseRecord>;
  /**
   * Call `onNotice` soon after work is queued, or finished for a submitter, by any process (a hint: callers poll too);
   * returns the function that stops listening.
   */
  watchLogJobs(onNotice: (notice: { type: 'queued' } | { type: 'finished'; submittedBy: string }) => void): () => void;
  /** Give the lease up at once (on shutdown), if `holder` has it. */
  releaseSequencerLease(holder: string): Promise<void>;
  /**
   * Inside a write transaction: SEQUENCER_UNAVAILABLE unless `holder` holds the lease at `epoch` and it has not
   * expired, so a process that lost its lease (paused, cut off) cannot sequence after its successor started.
   */
  assertSequencerLease(holder: string, epoch: number): Promise<void>;
  /** Queue work for the sequencer (committed at once, outside any transaction); returns its id. */
  enqueueLogJob(kind: LogJobKind, payload: Uint8Array, submittedBy: string): Promise<number>;
  /** Whether any job is queued (one cheap statement, outside any transaction: the sequencer's idle poll). */
  hasQueuedLogJobs(): Promise<boolean>;
  /** Inside a write transaction: up to `limit` queued jobs, oldest first, locked until the transaction ends. */
  claimQueuedLogJobs(limit: number): Promise<LogJobRecord[]>;
  /** Inside the transaction that did the work: queued → done | failed, with the outcome. */
  finishLogJob(id: number, state: 'done' | 'failed', outcome: Uint8Array): Promise<void>;
  /** The state of each job of `ids` that is no longer queued. */
  readFinishedLogJobs(ids: readonly number[]): Promise<LogJobOutcome[]>;
  /** queued → cancelled; false when the sequencer already finished it (read its outcome then). */
  cancelLogJob(id: number): Promise<boolean>;
  /** Delete finished or cancelled jobs older than `olderThanMs` (their submitters are gone); returns how many. */
  purgeLogJobs(olderThanMs: number): Promise<number>;
}

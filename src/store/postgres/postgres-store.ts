// The PostgreSQL store (issue 16 §1): the same synchronous port as the SQLite store, over one connection on a worker
// thread (sync-bridge.ts). With the rest of src/store/postgres/, a place that speaks SQL; the only one for PostgreSQL.
//
// Writers: `transaction` is BEGIN (READ COMMITTED) + pg_advisory_xact_lock(WRITER_LOCK) … COMMIT, so one writer at a
// time holds, across connections and processes, as BEGIN IMMEDIATE does in SQLite; every statement after the lock
// sees everything committed before it (a REPEATABLE READ snapshot would be taken before the wait). No serialization
// failures to retry, and the log is sequenced under this one lock (the place a multi-process sequencer lease goes).
// Readers: `read` is REPEATABLE READ READ ONLY (one snapshot; never blocks the writer). Nested transactions are
// savepoints. A write method called outside a transaction runs in one of its own (so it takes the lock too).
//
// Trade-off: each call blocks the event loop for one round trip (~0.1–0.5 ms on a local server); the read path is
// mostly served from the immutable body cache. An async port is the follow-up. A publish writer thread is SQLite-only.

import { fileURLToPath } from 'node:url';
import { ToolsealError } from '../../core/errors.ts';
import type {
  ApprovalFilter,
  ApprovalRecord,
  BlobRecord,
  CheckpointRecord,
  LogEntryRecord,
  LogJobKind,
  LogJobOutcome,
  LogJobRecord,
  NewApprovalRecord,
  PrincipalKind,
  PrincipalRecord,
  PublisherRecord,
  SequencerLeaseRecord,
  SequencingStore,
  SigningKeyRecord,
  Store,
  VersionRecord,
  VersionWithPublisher,
} from '../port.ts';
import type { ConnectionTarget } from './connection-protocol.ts';
import { checkPostgresStructure } from './structure-check.ts';
import { FINISHED_CHANNEL, type LogJobNotice, listenForLogJobNotices, QUEUED_CHANNEL } from './log-job-notices.ts';
import { translatePostgresError } from './storage-errors.ts';
import { type Row, SyncConnection } from './sync-bridge.ts';

export interface OpenPostgresStoreOptions {
  /** `postgres://…` / `postgresql://…` (a server), or `pglite:` (in memory) / `pglite:DIR` (PGlite in this process). */
  url: string;
  /** How long one call may wait for the database (default 30 s), and opening it (default 120 s). */
  callTimeoutMs?: number;
  openTimeoutMs?: number;
}

const migrationsFolder = fileURLToPath(new URL('../../../drizzle-pg', import.meta.url));

/** The one writer lock (transaction-scoped advisory lock; advisory locks are per database). */
const WRITER_LOCK = "hashtext('toolseal.writer')";
const BEGIN_WRITE = `BEGIN ISOLATION LEVEL READ COMMITTED; SELECT pg_advisory_xact_lock(${WRITER_LOCK})`;
const BEGIN_READ = 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';

/** True for a URL the PostgreSQL store opens (anything else is a SQLite data folder). */
export function isDatabaseUrl(value: string): boolean {
  return /^(postgres|postgresql):\/\//i.test(value) || value.startsWith('pglite:');
}

/** The URL without its password, for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}

function targetOf(url: string): ConnectionTarget {
  if (url.startsWith('pglite:')) {
    const dir = url.slice('pglite:'.length);
    return { kind: 'pglite', dataDir: dir === '' || dir === 'memory' ? undefined : dir };
  }
  if (!isDatabaseUrl(url)) throw new ToolsealError('BAD_REQUEST', 'a database URL starts with postgres:// or pglite:');
  return { kind: 'postgres', url };
}

/** Open the store: connect (or start PGlite) on its own thread and apply the committed migrations (drizzle-pg/). */
export function openPostgresStore(options: OpenPostgresStoreOptions): PostgresStore {
  const target = targetOf(options.url);
  try {
    const connection = new SyncConnection({
      target,
      migrationsFolder,
      callTimeoutMs: options.callTimeoutMs ?? 30_000,
      openTimeoutMs: options.openTimeoutMs ?? 120_000,
    });
    return new PostgresStore(connection, target);
  } catch (error) {
    const translated = translatePostgresError(error);
    if (translated instanceof ToolsealError) throw translated;
    // Not the URL: it may carry a password.
    throw new ToolsealError('INTERNAL', 'could not open the PostgreSQL database or apply its migrations', {
      cause: error,
    });
  }
}

const PUBLISHER =
  'id, namespace, token_hash AS "tokenHash", created_at AS "createdAt", revoked_at AS "revokedAt" FROM publishers';
const VERSION =
  'id, name, version, digest, publisher_id AS "publisherId", stored_at AS "storedAt", attestation, kid, ' +
  'log_index AS "logIndex", status, yank_reason AS "yankReason", yanked_at AS "yankedAt", ' +
  'yank_log_index AS "yankLogIndex" FROM manifest_versions';
const SIGNING_KEY =
  'kid, public_jwk AS "publicJwk", not_before AS "notBefore", not_after AS "notAfter", log_index AS "logIndex" FROM signing_keys';
const CHECKPOINT = 'size, root_hash AS "rootHash", note, created_at AS "createdAt" FROM log_checkpoints';
const ENTRY = 'idx AS index, kind, data, leaf_hash AS "leafHash" FROM log_entries';
/** Byte order, as SQLite compares text (the database's collation may not be). */
const C = 'COLLATE "C"';
const PRINCIPAL =
  'id, kind, name, token_hash AS "tokenHash", created_at AS "createdAt", revoked_at AS "revokedAt" FROM principals';
const APPROVAL =
  'a.id, a.host_id AS "hostId", a.audience, a.manifest_name AS "manifestName", a.manifest_version AS "manifestVersion", ' +
  'a.tool, a.digest, a.envelope, a.salt, a.status, a.created_at AS "createdAt", a.expires_at AS "expiresAt", ' +
  'a.decided_by AS "decidedById", o.name AS "decidedBy", a.decided_at AS "decidedAt", a.reason, ' +
  'a.decision_log_index AS "decisionLogIndex", a.consumed_at AS "consumedAt", ' +
  'a.consumption_log_index AS "consumptionLogIndex" FROM approvals a LEFT JOIN principals o ON o.id = a.decided_by';
const NEWEST_FIRST = `ORDER BY a.created_at ${C} DESC, a.seq DESC`;

export class PostgresStore implements Store, SequencingStore {
  /** Open transactions and savepoints (0: none); `reading` when the outermost one is a read. */
  private depth = 0;
  private reading = false;

  constructor(
    private readonly connection: SyncConnection,
    private readonly target?: ConnectionTarget,
  ) {}

  /** Raw SQL for maintenance and tests (see postgresQueryOf); errors are the database's own. */
  runSql(sql: string, params: readonly unknown[] = []): Row[] {
    return this.connection.query(sql, params);
  }

  transaction<T>(work: () => T): T {
    if (this.depth > 0) return this.inSavepoint(work);
    return this.inTransaction(BEGIN_WRITE, false, work);
  }

  read<T>(work: () => T): T {
    if (this.depth > 0) return work();
    return this.inTransaction(BEGIN_READ, true, work);
  }

  checkStructure(): string[] {
    return checkPostgresStructure((sql, params) => this.q(sql, params));
  }

  close(): void {
    this.connection.close();
  }

  private inTransaction<T>(begin: string, reading: boolean, work: () => T): T {
    this.run(() => this.connection.exec(begin));
    this.depth = 1;
    this.reading = reading;
    try {
      const result = work();
      this.connection.exec('COMMIT');
      return result;
    } catch (error) {
      this.rollBack('ROLLBACK');
      throw translatePostgresError(error);
    } finally {
      this.depth = 0;
      this.reading = false;
    }
  }

  private inSavepoint<T>(work: () => T): T {
    const name = `toolseal_${this.depth}`;
    this.run(() => this.connection.exec(`SAVEPOINT ${name}`));
    this.depth++;
    try {
      const result = work();
      this.connection.exec(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (error) {
      this.rollBack(`ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
      throw translatePostgresError(error);
    } finally {
      this.depth--;
    }
  }

  /** Undo after a failure; a connection that is gone has undone it already (the server rolls back). */
  private rollBack(sql: string): void {
    try {
      this.connection.exec(sql);
    } catch {
      // the original error is what the caller needs
    }
  }

  /** Run one call, translating what the database threw. */
  private run<T>(call: () => T): T {
    try {
      return call();
    } catch (error) {
      throw translatePostgresError(error);
    }
  }

  private q(sql: string, params: readonly unknown[] = []): Row[] {
    return this.run(() => this.connection.query(sql, params));
  }

  private one<T>(sql: string, params: readonly unknown[] = []): T | undefined {
    return this.q(sql, params)[0] as T | undefined;
  }

  /** A write: in the caller's transaction, or in one of its own (so it holds the writer lock). */
  private write<T>(work: () => T): T {
    if (this.reading) throw new ToolsealError('INTERNAL', 'a write inside a read-only snapshot');
    return this.depth > 0 ? work() : this.transaction(work);
  }

  // ── the sequencer lease and its job queue (issue 16 §2) ─────────────────

  claimSequencerLease(holder: string, ttlMs: number): SequencerLeaseRecord {
    // One statement: take a free or expired lease (a new epoch) or renew our own; anyone else's is left alone.
    // clock_timestamp(), not now(): the time of the statement, even inside a long transaction.
    this.q(
      `INSERT INTO sequencer_lease AS l (id, holder, epoch, expires_at)
       VALUES (1, $1, 1, clock_timestamp() + $2 * interval '1 millisecond')
       ON CONFLICT (id) DO UPDATE SET
         holder = EXCLUDED.holder,
         epoch = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at > clock_timestamp() THEN l.epoch ELSE l.epoch + 1 END,
         expires_at = EXCLUDED.expires_at
       WHERE l.holder = EXCLUDED.holder OR l.expires_at <= clock_timestamp()`,
      [holder, ttlMs],
    );
    const lease = this.one<SequencerLeaseRecord>(
      `SELECT holder, epoch, to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "expiresAt"
       FROM sequencer_lease WHERE id = 1`,
    );
    if (!lease) throw new ToolsealError('INTERNAL', 'the sequencer lease row is missing');
    return lease;
  }

  watchLogJobs(onNotice: (notice: LogJobNotice) => void): () => void {
    // PGlite runs in this process only: no other process queues work there, so there is nothing to listen for.
    if (this.target?.kind !== 'postgres') return () => {};
    return listenForLogJobNotices(this.target.url, onNotice);
  }

  releaseSequencerLease(holder: string): void {
    this.q(`UPDATE sequencer_lease SET expires_at = clock_timestamp() WHERE id = 1 AND holder = $1`, [holder]);
  }

  assertSequencerLease(holder: string, epoch: number): void {
    const held = this.one<{ ok: boolean }>(
      `SELECT true AS ok FROM sequencer_lease
       WHERE id = 1 AND holder = $1 AND epoch = $2 AND expires_at > clock_timestamp()`,
      [holder, epoch],
    );
    if (!held) {
      throw new ToolsealError('SEQUENCER_UNAVAILABLE', 'this process no longer holds the sequencer lease');
    }
  }

  enqueueLogJob(kind: LogJobKind, payload: Uint8Array, submittedBy: string): number {
    // The notice goes out when the INSERT commits (at once: it runs outside any transaction). That commit need not wait
    // for the disk (synchronous_commit off for this statement's transaction only): a queued job lost with the server
    // was never acknowledged, and its submitter loses its connection too. The sequencer's commit, which acknowledges
    // the work, stays synchronous.
    const row = this.one<{ id: number }>(
      `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
            queued AS (INSERT INTO log_jobs (kind, payload, submitted_by) VALUES ($1, $2, $3) RETURNING id)
       SELECT id, pg_notify('${QUEUED_CHANNEL}', '') FROM queued, relaxed`,
      [kind, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength), submittedBy],
    );
    return row!.id;
  }

  hasQueuedLogJobs(): boolean {
    return this.q(`SELECT 1 FROM log_jobs WHERE state = 'queued' LIMIT 1`).length > 0;
  }

  claimQueuedLogJobs(limit: number): LogJobRecord[] {
    return this.q(
      `SELECT id, kind, payload, submitted_by AS "submittedBy" FROM log_jobs
       WHERE state = 'queued' ORDER BY id LIMIT $1 FOR UPDATE`,
      [limit],
    ).map((row) => row as unknown as LogJobRecord);
  }

  finishLogJob(id: number, state: 'done' | 'failed', outcome: Uint8Array): void {
    // The notice (naming the submitter) goes out when the sequencer's transaction commits, never before.
    this.q(
      `WITH finished AS (UPDATE log_jobs SET state = $2, outcome = $3, finished_at = clock_timestamp()
         WHERE id = $1 AND state = 'queued' RETURNING submitted_by)
       SELECT pg_notify('${FINISHED_CHANNEL}', submitted_by) FROM finished`,
      [id, state, Buffer.from(outcome.buffer, outcome.byteOffset, outcome.byteLength)],
    );
  }

  readFinishedLogJobs(ids: readonly number[]): LogJobOutcome[] {
    if (ids.length === 0) return [];
    return this.q(
      `SELECT id, state, outcome FROM log_jobs WHERE id = ANY($1::bigint[]) AND state <> 'queued' ORDER BY id`,
      [ids],
    ) as unknown as LogJobOutcome[];
  }

  cancelLogJob(id: number): boolean {
    return (
      this.q(
        `UPDATE log_jobs SET state = 'cancelled', finished_at = clock_timestamp() WHERE id = $1 AND state = 'queued' RETURNING id`,
        [id],
      ).length === 1
    );
  }

  purgeLogJobs(olderThanMs: number): number {
    return this.q(
      `DELETE FROM log_jobs WHERE state <> 'queued' AND finished_at < clock_timestamp() - $1 * interval '1 millisecond' RETURNING id`,
      [olderThanMs],
    ).length;
  }

  // ── publishers ──────────────────────────────────────────────────────────

  insertPublisher(namespace: string, tokenHash: string, createdAt: string): PublisherRecord {
    // ON CONFLICT: a refusal that leaves the transaction usable (a failed statement would abort all of it).
    const row = this.write(() =>
      this.one<PublisherRecord>(
        `INSERT INTO publishers (namespace, token_hash, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING ${PUBLISHER.replace(' FROM publishers', '')}`,
        [namespace, tokenHash, createdAt],
      ),
    );
    if (row === undefined) throw new ToolsealError('NAMESPACE_TAKEN', `namespace ${namespace} already has a publisher`);
    return row;
  }

  findPublisherByTokenHash(tokenHash: string): PublisherRecord | undefined {
    return this.one(`SELECT ${PUBLISHER} WHERE token_hash = $1`, [tokenHash]);
  }

  findPublisherById(id: number): PublisherRecord | undefined {
    return this.one(`SELECT ${PUBLISHER} WHERE id = $1`, [id]);
  }

  findPublisherByNamespace(namespace: string): PublisherRecord | undefined {
    return this.one(`SELECT ${PUBLISHER} WHERE lower(namespace) = lower($1)`, [namespace]);
  }

  countPublishers(): number {
    return this.one<{ n: number }>('SELECT count(*) AS n FROM publishers')?.n ?? 0;
  }

  listPublishers(): PublisherRecord[] {
    return this.q(`SELECT ${PUBLISHER} ORDER BY id`) as unknown as PublisherRecord[];
  }

  revokePublisher(id: number, revokedAt: string): void {
    this.write(() => this.q('UPDATE publishers SET revoked_at = $1 WHERE id = $2', [revokedAt, id]));
  }

  replacePublisherTokenHash(id: number, tokenHash: string): void {
    this.write(() => this.q('UPDATE publishers SET token_hash = $1 WHERE id = $2', [tokenHash, id]));
  }

  // ── principals and approvals ────────────────────────────────────────────

  insertPrincipal(kind: PrincipalKind, name: string, tokenHash: string, createdAt: string): PrincipalRecord {
    const row = this.write(() =>
      this.one<PrincipalRecord>(
        `INSERT INTO principals (kind, name, token_hash, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING ${PRINCIPAL.replace(' FROM principals', '')}`,
        [kind, name, tokenHash, createdAt],
      ),
    );
    if (row === undefined)
      throw new ToolsealError('NAMESPACE_TAKEN', `there already is a${kind === 'operator' ? 'n' : ''} ${kind} ${name}`);
    return row;
  }

  findPrincipalByTokenHash(tokenHash: string): PrincipalRecord | undefined {
    return this.one(`SELECT ${PRINCIPAL} WHERE token_hash = $1`, [tokenHash]);
  }

  findPrincipalById(id: number): PrincipalRecord | undefined {
    return this.one(`SELECT ${PRINCIPAL} WHERE id = $1`, [id]);
  }

  findPrincipal(kind: PrincipalKind, name: string): PrincipalRecord | undefined {
    return this.one(`SELECT ${PRINCIPAL} WHERE kind = $1 AND name = $2`, [kind, name]);
  }

  listPrincipals(kind: PrincipalKind): PrincipalRecord[] {
    return this.q(`SELECT ${PRINCIPAL} WHERE kind = $1 ORDER BY id`, [kind]) as unknown as PrincipalRecord[];
  }

  revokePrincipal(id: number, revokedAt: string): void {
    this.write(() => this.q('UPDATE principals SET revoked_at = $1 WHERE id = $2', [revokedAt, id]));
  }

  insertApproval(row: NewApprovalRecord): void {
    this.write(() =>
      this.q(
        'INSERT INTO approvals (id, host_id, audience, manifest_name, manifest_version, tool, digest, envelope, salt, created_at, expires_at) ' +
          'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
        [
          row.id,
          row.hostId,
          row.audience,
          row.manifestName,
          row.manifestVersion,
          row.tool,
          row.digest,
          row.envelope,
          row.salt,
          row.createdAt,
          row.expiresAt,
        ],
      ),
    );
  }

  getApproval(id: string): ApprovalRecord | undefined {
    return this.one(`SELECT ${APPROVAL} WHERE a.id = $1`, [id]);
  }

  findStandingApproval(hostId: number, digest: string, now: string): ApprovalRecord | undefined {
    return this.one(
      `SELECT ${APPROVAL} WHERE a.host_id = $1 AND a.digest = $2 AND a.status IN ('pending', 'approved', 'denied') ` +
        `AND a.expires_at ${C} > $3::text ${NEWEST_FIRST} LIMIT 1`,
      [hostId, digest, now],
    );
  }

  listApprovals(filter: ApprovalFilter): ApprovalRecord[] {
    const { status, now, limit } = filter;
    const where =
      status === undefined
        ? ['TRUE', []]
        : status === 'expired'
          ? [`a.status IN ('pending', 'approved') AND a.expires_at ${C} <= $1::text`, [now]]
          : status === 'pending' || status === 'approved'
            ? [`a.status = $1 AND a.expires_at ${C} > $2::text`, [status, now]]
            : ['a.status = $1', [status]];
    const [condition, params] = where as [string, unknown[]];
    return this.q(`SELECT ${APPROVAL} WHERE ${condition} ${NEWEST_FIRST} LIMIT $${params.length + 1}`, [
      ...params,
      limit,
    ]) as unknown as ApprovalRecord[];
  }

  listAllApprovals(): ApprovalRecord[] {
    return this.q(`SELECT ${APPROVAL} ORDER BY a.seq`) as unknown as ApprovalRecord[];
  }

  decideApproval(
    id: string,
    decision: {
      status: 'approved' | 'denied';
      decidedById: number;
      decidedAt: string;
      reason: string | null;
      logIndex: number;
    },
  ): boolean {
    const changed = this.write(() =>
      this.q(
        'UPDATE approvals SET status = $1, decided_by = $2, decided_at = $3, reason = $4, decision_log_index = $5 ' +
          "WHERE id = $6 AND status = 'pending' RETURNING 1",
        [decision.status, decision.decidedById, decision.decidedAt, decision.reason, decision.logIndex, id],
      ),
    );
    return changed.length === 1;
  }

  consumeApproval(id: string, consumedAt: string, logIndex: number): boolean {
    const changed = this.write(() =>
      this.q(
        "UPDATE approvals SET status = 'consumed', consumed_at = $1, consumption_log_index = $2 " +
          "WHERE id = $3 AND status = 'approved' RETURNING 1",
        [consumedAt, logIndex, id],
      ),
    );
    return changed.length === 1;
  }

  // ── blobs and versions ──────────────────────────────────────────────────

  insertBlobIfAbsent(digest: string, bytes: Uint8Array): void {
    this.write(() =>
      this.q('INSERT INTO blobs (digest, bytes, size) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        digest,
        bytes,
        bytes.byteLength,
      ]),
    );
  }

  getBlob(digest: string): BlobRecord | undefined {
    return this.one('SELECT digest, bytes, size FROM blobs WHERE digest = $1', [digest]);
  }

  getVersion(name: string, version: string): VersionRecord | undefined {
    return this.one(`SELECT ${VERSION} WHERE name = $1 AND version = $2`, [name, version]);
  }

  getLatestStoredDigest(name: string): string | undefined {
    return this.one<{ digest: string }>(
      'SELECT digest FROM manifest_versions WHERE name = $1 ORDER BY id DESC LIMIT 1',
      [name],
    )?.digest;
  }

  insertVersion(row: Omit<VersionRecord, 'id' | 'status' | 'yankReason' | 'yankedAt' | 'yankLogIndex'>): VersionRecord {
    const inserted = this.write(() =>
      this.one<{ id: number }>(
        'INSERT INTO manifest_versions (name, version, digest, publisher_id, stored_at, attestation, kid, log_index) ' +
          'VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (name, version) DO NOTHING RETURNING id',
        [row.name, row.version, row.digest, row.publisherId, row.storedAt, row.attestation, row.kid, row.logIndex],
      ),
    );
    if (inserted === undefined) throw new ToolsealError('VERSION_EXISTS', `${row.name}@${row.version} already exists`);
    return { ...row, id: inserted.id, status: 'active', yankReason: null, yankedAt: null, yankLogIndex: null };
  }

  markYanked(id: number, reason: string, yankedAt: string, yankLogIndex: number): void {
    this.write(() =>
      this.q(
        "UPDATE manifest_versions SET status = 'yanked', yank_reason = $1, yanked_at = $2, yank_log_index = $3 WHERE id = $4",
        [reason, yankedAt, yankLogIndex, id],
      ),
    );
  }

  listVersions(name: string): VersionRecord[] {
    return this.q(`SELECT ${VERSION} WHERE name = $1 ORDER BY id`, [name]) as unknown as VersionRecord[];
  }

  listVersionsByDigest(digest: string): VersionWithPublisher[] {
    return this.q(
      `SELECT v.*, p.namespace AS publisher FROM (SELECT ${VERSION} WHERE digest = $1) v JOIN publishers p ON p.id = v."publisherId" ORDER BY v.id`,
      [digest],
    ) as unknown as VersionWithPublisher[];
  }

  listManifestNames(query: string | undefined, afterName: string | undefined, limit: number): string[] {
    const pattern =
      query === undefined || query === ''
        ? null
        : `%${query.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/[A-Z]/g, (c) => c.toLowerCase())}%`;
    return this.q(
      `SELECT DISTINCT v.name ${C} AS name FROM manifest_versions v
       WHERE ($1::text IS NULL OR ${searchCondition('$1')}) AND ($2::text IS NULL OR v.name ${C} > $2::text)
       ORDER BY 1 LIMIT $3`,
      [pattern, afterName ?? null, limit],
    ).map((row) => row['name'] as string);
  }

  listAllVersions(): VersionRecord[] {
    return this.q(`SELECT ${VERSION} ORDER BY id`) as unknown as VersionRecord[];
  }

  listAllBlobs(): BlobRecord[] {
    return this.q(`SELECT digest, bytes, size FROM blobs ORDER BY digest ${C}`) as unknown as BlobRecord[];
  }

  // ── signing keys ────────────────────────────────────────────────────────

  activeSigningKid(): string | undefined {
    return this.one<{ kid: string }>(
      'SELECT kid FROM signing_keys WHERE not_after IS NULL ORDER BY not_before DESC LIMIT 1',
    )?.kid;
  }

  listSigningKeys(): SigningKeyRecord[] {
    return this.q(`SELECT ${SIGNING_KEY} ORDER BY not_before`) as unknown as SigningKeyRecord[];
  }

  insertSigningKey(row: SigningKeyRecord): void {
    this.write(() =>
      this.q(
        'INSERT INTO signing_keys (kid, public_jwk, not_before, not_after, log_index) VALUES ($1, $2, $3, $4, $5)',
        [row.kid, row.publicJwk, row.notBefore, row.notAfter, row.logIndex],
      ),
    );
  }

  retireSigningKey(kid: string, notAfter: number): void {
    this.write(() => this.q('UPDATE signing_keys SET not_after = $1 WHERE kid = $2', [notAfter, kid]));
  }

  // ── transparency log ────────────────────────────────────────────────────

  getLogSize(): number {
    return this.one<{ n: number }>('SELECT coalesce(max(idx) + 1, 0) AS n FROM log_entries')?.n ?? 0;
  }

  readLogNode(level: number, index: number): Buffer | undefined {
    return this.one<{ hash: Buffer }>('SELECT hash FROM log_nodes WHERE level = $1 AND idx = $2', [level, index])?.hash;
  }

  insertLogEntry(entry: LogEntryRecord): void {
    this.write(() =>
      this.q('INSERT INTO log_entries (idx, kind, data, leaf_hash) VALUES ($1, $2, $3, $4)', [
        entry.index,
        entry.kind,
        entry.data,
        entry.leafHash,
      ]),
    );
  }

  insertLogNode(level: number, index: number, hash: Uint8Array): void {
    this.write(() => this.q('INSERT INTO log_nodes (level, idx, hash) VALUES ($1, $2, $3)', [level, index, hash]));
  }

  readLogEntries(start: number, end: number): LogEntryRecord[] {
    return this.q(`SELECT ${ENTRY} WHERE idx >= $1 AND idx < $2 ORDER BY idx`, [
      start,
      end,
    ]) as unknown as LogEntryRecord[];
  }

  listAllLogNodes(): { level: number; index: number; hash: Buffer }[] {
    return this.q('SELECT level, idx AS index, hash FROM log_nodes ORDER BY level, idx') as unknown as {
      level: number;
      index: number;
      hash: Buffer;
    }[];
  }

  listCheckpoints(): CheckpointRecord[] {
    return this.q(`SELECT ${CHECKPOINT} ORDER BY size`) as unknown as CheckpointRecord[];
  }

  latestCheckpoint(): CheckpointRecord | undefined {
    return this.one(`SELECT ${CHECKPOINT} ORDER BY size DESC LIMIT 1`);
  }

  insertCheckpoint(row: CheckpointRecord): void {
    this.write(() =>
      this.q('INSERT INTO log_checkpoints (size, root_hash, note, created_at) VALUES ($1, $2, $3, $4)', [
        row.size,
        row.rootHash,
        row.note,
        row.createdAt,
      ]),
    );
  }
}

/**
 * The search of listManifestNames, as the SQLite store's: the name, or any version's description or tool name, title
 * or description contains the pattern `param` (lowercased ASCII; LIKE with `\` escapes). ASCII-only case folding
 * (translate, not lower(), which folds beyond ASCII). JSON `\u0000` (which PostgreSQL's json functions refuse to
 * unescape) is read as U+FFFD, so one such manifest cannot break the search.
 */
function searchCondition(param: string): string {
  const fold = (value: string): string =>
    `translate(${value}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') LIKE ${param} ESCAPE '\\'`;
  return `(${fold('v.name')} OR EXISTS (
    SELECT 1 FROM blobs b, LATERAL (SELECT replace(convert_from(b.bytes, 'UTF8'), '\\u0000', '\\ufffd')::json AS doc) d
    WHERE b.digest = v.digest AND (${fold("d.doc->>'description'")} OR EXISTS (
      SELECT 1 FROM json_array_elements(CASE WHEN json_typeof(d.doc->'tools') = 'array' THEN d.doc->'tools' ELSE '[]'::json END) t
      WHERE ${fold("t->>'name'")} OR ${fold("t->>'title'")} OR ${fold("t->>'description'")}))))`;
}

/** Raw SQL on a PostgreSQL store, for maintenance and tests that inspect or damage rows on purpose. */
export function postgresQueryOf(store: Store): (sql: string, params?: readonly unknown[]) => Row[] {
  if (!(store instanceof PostgresStore)) throw new ToolsealError('BAD_REQUEST', 'not a PostgreSQL store');
  return (sql, params) => store.runSql(sql, params);
}

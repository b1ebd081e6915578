// The PostgreSQL store (issue 16 §1, issue 24 §1): the async port over a `pg` Pool (or PGlite in this process), on
// the event loop. With the rest of src/store/postgres/, a place that speaks SQL; the only one for PostgreSQL.
//
// Writers: `transaction` is BEGIN (READ COMMITTED) + pg_advisory_xact_lock(WRITER_LOCK) … COMMIT on one pooled
// session, so one writer at a time holds, across sessions and processes, as BEGIN IMMEDIATE does in SQLite; every
// statement after the lock sees everything committed before it (a REPEATABLE READ snapshot would be taken before the
// wait). No serialization failures to retry, and the log is sequenced under this one lock.
// Readers: `read` is REPEATABLE READ READ ONLY on a session of its own (one snapshot; never blocks the writer), and a
// single read outside any transaction takes any free session, so reads never wait for the writer.
// Store calls awaited inside `work` run on its session (AsyncLocalStorage carries it); nested transactions are
// savepoints. A write method called outside a transaction runs in one of its own (so it takes the lock too).

import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { ToolsealError } from '../../core/errors.ts';
import type {
  ApprovalDecision,
  ApprovalFilter,
  ApprovalRecord,
  BlobRecord,
  BundleRecord,
  CheckpointRecord,
  CosignatureRecord,
  NewVersionRecord,
  LogEntryRecord,
  LogNodeRecord,
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
import { logNodeKey } from '../port.ts';
import {
  type ConnectionTarget,
  type DatabaseHandle,
  openDatabase,
  type Row,
  type SqlRunner,
} from './database-handle.ts';
import { checkPostgresStructure } from './structure-check.ts';
import { FINISHED_CHANNEL, type LogJobNotice, listenForLogJobNotices, QUEUED_CHANNEL } from './log-job-notices.ts';
import { translatePostgresError } from './storage-errors.ts';
import { flattenRows, formatValuesList, MAX_PARAMETERS, splitRowsForStatements } from './multi-row.ts';

export interface OpenPostgresStoreOptions {
  /** `postgres://…` / `postgresql://…` (a server), or `pglite:` (in memory) / `pglite:DIR` (PGlite in this process). */
  url: string;
  /** How long one statement may run before the server cancels it (default 30 s). */
  callTimeoutMs?: number;
  /** Sessions in the pool (a server only; default 10). */
  poolSize?: number;
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

/** Open the store: connect (or start PGlite) and apply the committed migrations (drizzle-pg/). */
export async function openPostgresStore(options: OpenPostgresStoreOptions): Promise<PostgresStore> {
  const target = targetOf(options.url);
  try {
    const database = await openDatabase({
      target,
      migrationsFolder,
      statementTimeoutMs: options.callTimeoutMs ?? 30_000,
      ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
    });
    return new PostgresStore(database, target);
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
const BUNDLE =
  'version_id AS "versionId", kid, envelope, log_index AS "logIndex", integrated_time AS "integratedTime", promise FROM version_bundles';
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

/** The session a transaction runs on, and how deep in savepoints it is. */
interface OpenTransaction {
  session: SqlRunner;
  depth: number;
  reading: boolean;
  /** Set once it has ended: work scheduled from inside it (a timer, a callback) must not use its session. */
  ended: boolean;
}

export class PostgresStore implements Store, SequencingStore {
  private readonly context = new AsyncLocalStorage<OpenTransaction>();

  constructor(
    private readonly database: DatabaseHandle,
    private readonly target?: ConnectionTarget,
  ) {}

  /** Raw SQL for maintenance and tests (see postgresQueryOf); errors are the database's own. */
  runSql(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.runner().query(sql, params);
  }

  transaction<T>(work: () => Promise<T>): Promise<T> {
    const open = this.openTransaction();
    if (open !== undefined) return this.inSavepoint(open, work);
    return this.inTransaction(BEGIN_WRITE, false, work);
  }

  read<T>(work: () => Promise<T>): Promise<T> {
    if (this.openTransaction() !== undefined) return work();
    return this.inTransaction(BEGIN_READ, true, work);
  }

  isInTransaction(): boolean {
    return this.openTransaction() !== undefined;
  }

  checkStructure(): Promise<string[]> {
    return checkPostgresStructure((sql, params) => this.q(sql, params));
  }

  close(): Promise<void> {
    return this.database.close();
  }

  private async inTransaction<T>(begin: string, reading: boolean, work: () => Promise<T>): Promise<T> {
    try {
      return await this.database.withSession(async (session) => {
        await session.exec(begin);
        const open: OpenTransaction = { session, depth: 1, reading, ended: false };
        try {
          const result = await this.context.run(open, work);
          await session.exec('COMMIT');
          return result;
        } catch (error) {
          await rollBack(session, 'ROLLBACK');
          throw error;
        } finally {
          open.ended = true;
        }
      });
    } catch (error) {
      throw translatePostgresError(error);
    }
  }

  private async inSavepoint<T>(open: OpenTransaction, work: () => Promise<T>): Promise<T> {
    const name = `toolseal_${open.depth}`;
    await this.run(() => open.session.exec(`SAVEPOINT ${name}`));
    open.depth++;
    try {
      const result = await work();
      await open.session.exec(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (error) {
      await rollBack(open.session, `ROLLBACK TO SAVEPOINT ${name}; RELEASE SAVEPOINT ${name}`);
      throw translatePostgresError(error);
    } finally {
      open.depth--;
    }
  }

  /** The transaction the caller is inside, if it is still open. */
  private openTransaction(): OpenTransaction | undefined {
    const open = this.context.getStore();
    return open === undefined || open.ended ? undefined : open;
  }

  /** The open transaction's session, or the pool. */
  private runner(): SqlRunner {
    return this.openTransaction()?.session ?? this.database;
  }

  /** Run one call, translating what the database threw. */
  private async run<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw translatePostgresError(error);
    }
  }

  private q(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.run(() => this.runner().query(sql, params));
  }

  private async one<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.q(sql, params))[0] as T | undefined;
  }

  /** A write: in the caller's transaction, or in one of its own (so it holds the writer lock). */
  private write<T>(work: () => Promise<T>): Promise<T> {
    const open = this.openTransaction();
    if (open?.reading) return Promise.reject(new ToolsealError('INTERNAL', 'a write inside a read-only snapshot'));
    return open !== undefined ? work() : this.transaction(work);
  }

  // ── the sequencer lease and its job queue (issue 16 §2) ─────────────────

  async claimSequencerLease(holder: string, ttlMs: number): Promise<SequencerLeaseRecord> {
    // One statement: take a free or expired lease (a new epoch) or renew our own; anyone else's is left alone.
    // clock_timestamp(), not now(): the time of the statement, even inside a long transaction.
    await this.q(
      `INSERT INTO sequencer_lease AS l (id, holder, epoch, expires_at)
       VALUES (1, $1, 1, clock_timestamp() + $2 * interval '1 millisecond')
       ON CONFLICT (id) DO UPDATE SET
         holder = EXCLUDED.holder,
         epoch = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at > clock_timestamp() THEN l.epoch ELSE l.epoch + 1 END,
         expires_at = EXCLUDED.expires_at
       WHERE l.holder = EXCLUDED.holder OR l.expires_at <= clock_timestamp()`,
      [holder, ttlMs],
    );
    const lease = await this.one<SequencerLeaseRecord>(
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

  async releaseSequencerLease(holder: string): Promise<void> {
    await this.q(`UPDATE sequencer_lease SET expires_at = clock_timestamp() WHERE id = 1 AND holder = $1`, [holder]);
  }

  async assertSequencerLease(holder: string, epoch: number): Promise<void> {
    const held = await this.one<{ ok: boolean }>(
      `SELECT true AS ok FROM sequencer_lease
       WHERE id = 1 AND holder = $1 AND epoch = $2 AND expires_at > clock_timestamp()`,
      [holder, epoch],
    );
    if (!held) {
      throw new ToolsealError('SEQUENCER_UNAVAILABLE', 'this process no longer holds the sequencer lease');
    }
  }

  async enqueueLogJob(kind: LogJobKind, payload: Uint8Array, submittedBy: string): Promise<number> {
    // The notice goes out when the INSERT commits (at once: it runs outside any transaction). That commit need not wait
    // for the disk (synchronous_commit off for this statement's transaction only): a queued job lost with the server
    // was never acknowledged, and its submitter loses its connection too. The sequencer's commit, which acknowledges
    // the work, stays synchronous.
    const row = await this.one<{ id: number }>(
      `WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
            queued AS (INSERT INTO log_jobs (kind, payload, submitted_by) VALUES ($1, $2, $3) RETURNING id)
       SELECT id, pg_notify('${QUEUED_CHANNEL}', '') FROM queued, relaxed`,
      [kind, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength), submittedBy],
    );
    return row!.id;
  }

  async hasQueuedLogJobs(): Promise<boolean> {
    return (await this.q(`SELECT 1 FROM log_jobs WHERE state = 'queued' LIMIT 1`)).length > 0;
  }

  async claimQueuedLogJobs(limit: number): Promise<LogJobRecord[]> {
    return (
      await this.q(
        `SELECT id, kind, payload, submitted_by AS "submittedBy" FROM log_jobs
       WHERE state = 'queued' ORDER BY id LIMIT $1 FOR UPDATE`,
        [limit],
      )
    ).map((row) => row as unknown as LogJobRecord);
  }

  async finishLogJob(id: number, state: 'done' | 'failed', outcome: Uint8Array): Promise<void> {
    // The notice (naming the submitter) goes out when the sequencer's transaction commits, never before.
    await this.q(
      `WITH finished AS (UPDATE log_jobs SET state = $2, outcome = $3, finished_at = clock_timestamp()
         WHERE id = $1 AND state = 'queued' RETURNING submitted_by)
       SELECT pg_notify('${FINISHED_CHANNEL}', submitted_by) FROM finished`,
      [id, state, Buffer.from(outcome.buffer, outcome.byteOffset, outcome.byteLength)],
    );
  }

  async readFinishedLogJobs(ids: readonly number[]): Promise<LogJobOutcome[]> {
    if (ids.length === 0) return [];
    return (await this.q(
      `SELECT id, state, outcome FROM log_jobs WHERE id = ANY($1::bigint[]) AND state <> 'queued' ORDER BY id`,
      [ids],
    )) as unknown as LogJobOutcome[];
  }

  async cancelLogJob(id: number): Promise<boolean> {
    return (
      (
        await this.q(
          `UPDATE log_jobs SET state = 'cancelled', finished_at = clock_timestamp() WHERE id = $1 AND state = 'queued' RETURNING id`,
          [id],
        )
      ).length === 1
    );
  }

  async purgeLogJobs(olderThanMs: number): Promise<number> {
    return (
      await this.q(
        `DELETE FROM log_jobs WHERE state <> 'queued' AND finished_at < clock_timestamp() - $1 * interval '1 millisecond' RETURNING id`,
        [olderThanMs],
      )
    ).length;
  }

  // ── publishers ──────────────────────────────────────────────────────────

  async insertPublisher(namespace: string, tokenHash: string, createdAt: string): Promise<PublisherRecord> {
    // ON CONFLICT: a refusal that leaves the transaction usable (a failed statement would abort all of it).
    const row = await this.write(() =>
      this.one<PublisherRecord>(
        `INSERT INTO publishers (namespace, token_hash, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING ${PUBLISHER.replace(' FROM publishers', '')}`,
        [namespace, tokenHash, createdAt],
      ),
    );
    if (row === undefined) throw new ToolsealError('NAMESPACE_TAKEN', `namespace ${namespace} already has a publisher`);
    return row;
  }

  async findPublisherByTokenHash(tokenHash: string): Promise<PublisherRecord | undefined> {
    return await this.one(`SELECT ${PUBLISHER} WHERE token_hash = $1`, [tokenHash]);
  }

  async findPublisherById(id: number): Promise<PublisherRecord | undefined> {
    return await this.one(`SELECT ${PUBLISHER} WHERE id = $1`, [id]);
  }

  async findPublisherByNamespace(namespace: string): Promise<PublisherRecord | undefined> {
    return await this.one(`SELECT ${PUBLISHER} WHERE lower(namespace) = lower($1)`, [namespace]);
  }

  async countPublishers(): Promise<number> {
    return (await this.one<{ n: number }>('SELECT count(*) AS n FROM publishers'))?.n ?? 0;
  }

  async listPublishers(): Promise<PublisherRecord[]> {
    return (await this.q(`SELECT ${PUBLISHER} ORDER BY id`)) as unknown as PublisherRecord[];
  }

  async revokePublisher(id: number, revokedAt: string): Promise<void> {
    await this.write(() => this.q('UPDATE publishers SET revoked_at = $1 WHERE id = $2', [revokedAt, id]));
  }

  async replacePublisherTokenHash(id: number, tokenHash: string): Promise<void> {
    await this.write(() => this.q('UPDATE publishers SET token_hash = $1 WHERE id = $2', [tokenHash, id]));
  }

  // ── principals and approvals ────────────────────────────────────────────

  async insertPrincipal(
    kind: PrincipalKind,
    name: string,
    tokenHash: string,
    createdAt: string,
  ): Promise<PrincipalRecord> {
    const row = await this.write(() =>
      this.one<PrincipalRecord>(
        `INSERT INTO principals (kind, name, token_hash, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING ${PRINCIPAL.replace(' FROM principals', '')}`,
        [kind, name, tokenHash, createdAt],
      ),
    );
    if (row === undefined)
      throw new ToolsealError('NAMESPACE_TAKEN', `there already is a${kind === 'operator' ? 'n' : ''} ${kind} ${name}`);
    return row;
  }

  async findPrincipalByTokenHash(tokenHash: string): Promise<PrincipalRecord | undefined> {
    return await this.one(`SELECT ${PRINCIPAL} WHERE token_hash = $1`, [tokenHash]);
  }

  async findPrincipalById(id: number): Promise<PrincipalRecord | undefined> {
    return await this.one(`SELECT ${PRINCIPAL} WHERE id = $1`, [id]);
  }

  async findPrincipal(kind: PrincipalKind, name: string): Promise<PrincipalRecord | undefined> {
    return await this.one(`SELECT ${PRINCIPAL} WHERE kind = $1 AND name = $2`, [kind, name]);
  }

  async listPrincipals(kind: PrincipalKind): Promise<PrincipalRecord[]> {
    return (await this.q(`SELECT ${PRINCIPAL} WHERE kind = $1 ORDER BY id`, [kind])) as unknown as PrincipalRecord[];
  }

  async revokePrincipal(id: number, revokedAt: string): Promise<void> {
    await this.write(() => this.q('UPDATE principals SET revoked_at = $1 WHERE id = $2', [revokedAt, id]));
  }

  async insertApproval(row: NewApprovalRecord): Promise<void> {
    await this.write(() =>
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

  async getApproval(id: string): Promise<ApprovalRecord | undefined> {
    return await this.one(`SELECT ${APPROVAL} WHERE a.id = $1`, [id]);
  }

  async findStandingApproval(hostId: number, digest: string, now: string): Promise<ApprovalRecord | undefined> {
    return await this.one(
      `SELECT ${APPROVAL} WHERE a.host_id = $1 AND a.digest = $2 AND a.status IN ('pending', 'approved', 'denied') ` +
        `AND a.expires_at ${C} > $3::text ${NEWEST_FIRST} LIMIT 1`,
      [hostId, digest, now],
    );
  }

  async listApprovals(filter: ApprovalFilter): Promise<ApprovalRecord[]> {
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
    return (await this.q(`SELECT ${APPROVAL} WHERE ${condition} ${NEWEST_FIRST} LIMIT $${params.length + 1}`, [
      ...params,
      limit,
    ])) as unknown as ApprovalRecord[];
  }

  async listAllApprovals(): Promise<ApprovalRecord[]> {
    return (await this.q(`SELECT ${APPROVAL} ORDER BY a.seq`)) as unknown as ApprovalRecord[];
  }

  async decideApproval(id: string, decision: ApprovalDecision): Promise<boolean> {
    const changed = await this.write(() =>
      this.q(
        'UPDATE approvals SET status = $1, decided_by = $2, decided_at = $3, reason = $4, decision_log_index = $5 ' +
          "WHERE id = $6 AND status = 'pending' RETURNING 1",
        [decision.status, decision.decidedById, decision.decidedAt, decision.reason, decision.logIndex, id],
      ),
    );
    return changed.length === 1;
  }

  async consumeApproval(id: string, consumedAt: string, logIndex: number): Promise<boolean> {
    const changed = await this.write(() =>
      this.q(
        "UPDATE approvals SET status = 'consumed', consumed_at = $1, consumption_log_index = $2 " +
          "WHERE id = $3 AND status = 'approved' RETURNING 1",
        [consumedAt, logIndex, id],
      ),
    );
    return changed.length === 1;
  }

  // ── blobs and versions ──────────────────────────────────────────────────

  async insertBlobIfAbsent(digest: string, bytes: Uint8Array): Promise<void> {
    await this.write(() =>
      this.q('INSERT INTO blobs (digest, bytes, size) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        digest,
        bytes,
        bytes.byteLength,
      ]),
    );
  }

  async getBlob(digest: string): Promise<BlobRecord | undefined> {
    return await this.one('SELECT digest, bytes, size FROM blobs WHERE digest = $1', [digest]);
  }

  async getVersion(name: string, version: string): Promise<VersionRecord | undefined> {
    return await this.one(`SELECT ${VERSION} WHERE name = $1 AND version = $2`, [name, version]);
  }

  async getLatestStoredDigest(name: string): Promise<string | undefined> {
    return (
      await this.one<{ digest: string }>(
        'SELECT digest FROM manifest_versions WHERE name = $1 ORDER BY id DESC LIMIT 1',
        [name],
      )
    )?.digest;
  }

  async insertVersion(
    row: Omit<VersionRecord, 'id' | 'status' | 'yankReason' | 'yankedAt' | 'yankLogIndex'>,
  ): Promise<VersionRecord> {
    const inserted = await this.write(() =>
      this.one<{ id: number }>(
        'INSERT INTO manifest_versions (name, version, digest, publisher_id, stored_at, attestation, kid, log_index) ' +
          'VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (name, version) DO NOTHING RETURNING id',
        [row.name, row.version, row.digest, row.publisherId, row.storedAt, row.attestation, row.kid, row.logIndex],
      ),
    );
    if (inserted === undefined) throw new ToolsealError('VERSION_EXISTS', `${row.name}@${row.version} already exists`);
    return { ...row, id: inserted.id, status: 'active', yankReason: null, yankedAt: null, yankLogIndex: null };
  }

  async getVersions(keys: readonly { name: string; version: string }[]): Promise<VersionRecord[]> {
    if (keys.length === 0) return [];
    return (await this.q(`SELECT ${VERSION} WHERE (name, version) IN (SELECT * FROM unnest($1::text[], $2::text[]))`, [
      keys.map((k) => k.name),
      keys.map((k) => k.version),
    ])) as unknown as VersionRecord[];
  }

  async getLatestStoredDigests(names: readonly string[]): Promise<Map<string, string>> {
    if (names.length === 0) return new Map();
    const rows = (await this.q(
      'SELECT DISTINCT ON (name) name, digest FROM manifest_versions WHERE name = ANY($1::text[]) ORDER BY name, id DESC',
      [[...new Set(names)]],
    )) as unknown as { name: string; digest: string }[];
    return new Map(rows.map((row) => [row.name, row.digest]));
  }

  async insertBlobsIfAbsent(blobs: readonly { digest: string; bytes: Uint8Array }[]): Promise<void> {
    if (blobs.length === 0) return;
    await this.write(async () => {
      for (const run of splitRowsForStatements(blobs, 3)) {
        await this.q(
          `INSERT INTO blobs (digest, bytes, size) VALUES ${formatValuesList(run.length, 3)} ON CONFLICT DO NOTHING`,
          flattenRows(run, (blob) => [blob.digest, blob.bytes, blob.bytes.byteLength]),
        );
      }
    });
  }

  async insertVersions(rows: readonly NewVersionRecord[]): Promise<VersionRecord[]> {
    if (rows.length === 0) return [];
    const inserted = await this.write(async () => {
      const found: { id: number; name: string; version: string }[] = [];
      for (const run of splitRowsForStatements(rows, 8)) {
        const ids = (await this.q(
          'INSERT INTO manifest_versions (name, version, digest, publisher_id, stored_at, attestation, kid, log_index) ' +
            `VALUES ${formatValuesList(run.length, 8)} ON CONFLICT (name, version) DO NOTHING RETURNING id, name, version`,
          flattenRows(run, (row) => [
            row.name,
            row.version,
            row.digest,
            row.publisherId,
            row.storedAt,
            row.attestation,
            row.kid,
            row.logIndex,
          ]),
        )) as unknown as { id: number; name: string; version: string }[];
        found.push(...ids);
      }
      return found;
    });
    const ids = new Map(inserted.map((row) => [`${row.name}\n${row.version}`, row.id]));
    return rows.map((row) => {
      const id = ids.get(`${row.name}\n${row.version}`);
      // A row already stored, or twice in `rows` (ON CONFLICT skips the second): the caller's transaction rolls back
      // the rows that were inserted (a publish batch always has one).
      if (id === undefined || inserted.length !== rows.length)
        throw new ToolsealError('VERSION_EXISTS', `${row.name}@${row.version} already exists`);
      return { ...row, id, status: 'active', yankReason: null, yankedAt: null, yankLogIndex: null };
    });
  }

  async markYanked(id: number, reason: string, yankedAt: string, yankLogIndex: number): Promise<void> {
    await this.write(() =>
      this.q(
        "UPDATE manifest_versions SET status = 'yanked', yank_reason = $1, yanked_at = $2, yank_log_index = $3 WHERE id = $4",
        [reason, yankedAt, yankLogIndex, id],
      ),
    );
  }

  async listVersions(name: string): Promise<VersionRecord[]> {
    return (await this.q(`SELECT ${VERSION} WHERE name = $1 ORDER BY id`, [name])) as unknown as VersionRecord[];
  }

  async listVersionsByDigest(digest: string): Promise<VersionWithPublisher[]> {
    return (await this.q(
      `SELECT v.*, p.namespace AS publisher FROM (SELECT ${VERSION} WHERE digest = $1) v JOIN publishers p ON p.id = v."publisherId" ORDER BY v.id`,
      [digest],
    )) as unknown as VersionWithPublisher[];
  }

  async listManifestNames(query: string | undefined, afterName: string | undefined, limit: number): Promise<string[]> {
    const pattern =
      query === undefined || query === ''
        ? null
        : `%${query.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/[A-Z]/g, (c) => c.toLowerCase())}%`;
    return (
      await this.q(
        `SELECT DISTINCT v.name ${C} AS name FROM manifest_versions v
       WHERE ($1::text IS NULL OR ${searchCondition('$1')}) AND ($2::text IS NULL OR v.name ${C} > $2::text)
       ORDER BY 1 LIMIT $3`,
        [pattern, afterName ?? null, limit],
      )
    ).map((row) => row['name'] as string);
  }

  async listAllVersions(): Promise<VersionRecord[]> {
    return (await this.q(`SELECT ${VERSION} ORDER BY id`)) as unknown as VersionRecord[];
  }

  async listAllBlobs(): Promise<BlobRecord[]> {
    return (await this.q(`SELECT digest, bytes, size FROM blobs ORDER BY digest ${C}`)) as unknown as BlobRecord[];
  }

  // ── Sigstore bundles ────────────────────────────────────────────────────

  async insertBundles(rows: readonly BundleRecord[]): Promise<void> {
    if (rows.length === 0) return;
    await this.write(async () => {
      for (const run of splitRowsForStatements(rows, 6)) {
        await this.q(
          'INSERT INTO version_bundles (version_id, kid, envelope, log_index, integrated_time, promise) ' +
            `VALUES ${formatValuesList(run.length, 6)}`,
          flattenRows(run, (row) => [
            row.versionId,
            row.kid,
            row.envelope,
            row.logIndex,
            row.integratedTime,
            row.promise,
          ]),
        );
      }
    });
  }

  async getBundle(versionId: number): Promise<BundleRecord | undefined> {
    return (await this.one(`SELECT ${BUNDLE} WHERE version_id = $1`, [versionId])) as BundleRecord | undefined;
  }

  async listVersionsWithoutBundle(): Promise<VersionRecord[]> {
    return (await this.q(
      `SELECT ${VERSION} WHERE NOT EXISTS (SELECT 1 FROM version_bundles b WHERE b.version_id = manifest_versions.id) ORDER BY id`,
    )) as unknown as VersionRecord[];
  }

  async listAllBundles(): Promise<BundleRecord[]> {
    return (await this.q(`SELECT ${BUNDLE} ORDER BY version_id`)) as unknown as BundleRecord[];
  }

  // ── signing keys ────────────────────────────────────────────────────────

  async activeSigningKid(): Promise<string | undefined> {
    return (
      await this.one<{ kid: string }>(
        'SELECT kid FROM signing_keys WHERE not_after IS NULL ORDER BY not_before DESC LIMIT 1',
      )
    )?.kid;
  }

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    return (await this.q(`SELECT ${SIGNING_KEY} ORDER BY not_before`)) as unknown as SigningKeyRecord[];
  }

  async insertSigningKey(row: SigningKeyRecord): Promise<void> {
    await this.write(() =>
      this.q(
        'INSERT INTO signing_keys (kid, public_jwk, not_before, not_after, log_index) VALUES ($1, $2, $3, $4, $5)',
        [row.kid, row.publicJwk, row.notBefore, row.notAfter, row.logIndex],
      ),
    );
  }

  async retireSigningKey(kid: string, notAfter: number): Promise<void> {
    await this.write(() => this.q('UPDATE signing_keys SET not_after = $1 WHERE kid = $2', [notAfter, kid]));
  }

  // ── transparency log ────────────────────────────────────────────────────

  async getLogSize(): Promise<number> {
    return (await this.one<{ n: number }>('SELECT coalesce(max(idx) + 1, 0) AS n FROM log_entries'))?.n ?? 0;
  }

  async readLogNode(level: number, index: number): Promise<Buffer | undefined> {
    return (
      await this.one<{ hash: Buffer }>('SELECT hash FROM log_nodes WHERE level = $1 AND idx = $2', [level, index])
    )?.hash;
  }

  async readLogNodes(nodes: readonly { level: number; index: number }[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    if (nodes.length === 0) return found;
    const rows = await this.q(
      'SELECT n.level, n.idx, n.hash FROM log_nodes n JOIN unnest($1::int[], $2::bigint[]) AS w(level, idx) ' +
        'ON n.level = w.level AND n.idx = w.idx',
      [nodes.map((node) => node.level), nodes.map((node) => node.index)],
    );
    for (const row of rows) found.set(logNodeKey(Number(row['level']), Number(row['idx'])), row['hash'] as Buffer);
    return found;
  }

  async insertLogEntry(entry: LogEntryRecord): Promise<void> {
    await this.write(() =>
      this.q('INSERT INTO log_entries (idx, kind, data, leaf_hash) VALUES ($1, $2, $3, $4)', [
        entry.index,
        entry.kind,
        entry.data,
        entry.leafHash,
      ]),
    );
  }

  async insertLogLeaves(entries: readonly LogEntryRecord[], nodes: readonly LogNodeRecord[]): Promise<void> {
    if (entries.length === 0 && nodes.length === 0) return;
    const entryCells = (entry: LogEntryRecord) => [entry.index, entry.kind, entry.data, entry.leafHash];
    const nodeCells = (node: LogNodeRecord) => [node.level, node.index, node.hash];
    await this.write(async () => {
      if (entries.length > 0 && nodes.length > 0 && entries.length * 4 + nodes.length * 3 <= MAX_PARAMETERS) {
        // Two multi-row INSERTs in one statement (a data-modifying CTE): one round trip for a whole batch.
        await this.q(
          `WITH entries AS (INSERT INTO log_entries (idx, kind, data, leaf_hash) VALUES ${formatValuesList(entries.length, 4)})
           INSERT INTO log_nodes (level, idx, hash) VALUES ${formatValuesList(nodes.length, 3, entries.length * 4 + 1)}`,
          [...flattenRows(entries, entryCells), ...flattenRows(nodes, nodeCells)],
        );
        return;
      }
      for (const run of splitRowsForStatements(entries, 4)) {
        await this.q(
          `INSERT INTO log_entries (idx, kind, data, leaf_hash) VALUES ${formatValuesList(run.length, 4)}`,
          flattenRows(run, entryCells),
        );
      }
      for (const run of splitRowsForStatements(nodes, 3)) {
        await this.q(
          `INSERT INTO log_nodes (level, idx, hash) VALUES ${formatValuesList(run.length, 3)}`,
          flattenRows(run, nodeCells),
        );
      }
    });
  }

  async insertLogNode(level: number, index: number, hash: Uint8Array): Promise<void> {
    await this.write(() =>
      this.q('INSERT INTO log_nodes (level, idx, hash) VALUES ($1, $2, $3)', [level, index, hash]),
    );
  }

  async readLogEntries(start: number, end: number): Promise<LogEntryRecord[]> {
    return (await this.q(`SELECT ${ENTRY} WHERE idx >= $1 AND idx < $2 ORDER BY idx`, [
      start,
      end,
    ])) as unknown as LogEntryRecord[];
  }

  async listAllLogNodes(): Promise<{ level: number; index: number; hash: Buffer }[]> {
    return (await this.q('SELECT level, idx AS index, hash FROM log_nodes ORDER BY level, idx')) as unknown as {
      level: number;
      index: number;
      hash: Buffer;
    }[];
  }

  async listCheckpoints(): Promise<CheckpointRecord[]> {
    return (await this.q(`SELECT ${CHECKPOINT} ORDER BY size`)) as unknown as CheckpointRecord[];
  }

  async latestCheckpoint(): Promise<CheckpointRecord | undefined> {
    return await this.one(`SELECT ${CHECKPOINT} ORDER BY size DESC LIMIT 1`);
  }

  async insertCheckpoint(row: CheckpointRecord): Promise<void> {
    await this.write(() =>
      this.q('INSERT INTO log_checkpoints (size, root_hash, note, created_at) VALUES ($1, $2, $3, $4)', [
        row.size,
        row.rootHash,
        row.note,
        row.createdAt,
      ]),
    );
  }

  async saveCosignature(row: CosignatureRecord): Promise<void> {
    // One statement on its own (no writer lock): the table is not part of the log, and only the sequencer writes it.
    await this.q(
      `INSERT INTO witness_cosignatures (size, witness, line) VALUES ($1, $2, $3)
       ON CONFLICT (size, witness) DO UPDATE SET line = EXCLUDED.line`,
      [row.size, row.witness, row.line],
    );
  }

  async listCosignatures(size: number): Promise<CosignatureRecord[]> {
    return (await this.q('SELECT size, witness, line FROM witness_cosignatures WHERE size = $1 ORDER BY witness', [
      size,
    ])) as unknown as CosignatureRecord[];
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
export function postgresQueryOf(store: Store): (sql: string, params?: readonly unknown[]) => Promise<Row[]> {
  if (!(store instanceof PostgresStore)) throw new ToolsealError('BAD_REQUEST', 'not a PostgreSQL store');
  return (sql, params) => store.runSql(sql, params);
}

/** Undo after a failure; a session that is gone has undone it already (the server rolls back). */
async function rollBack(session: SqlRunner, sql: string): Promise<void> {
  try {
    await session.exec(sql);
  } catch {
    // the original error is what the caller needs
  }
}

// The SQLite store's tables: every port method as one synchronous statement (or a few) over better-sqlite3, with
// prepared statements for what runs per request; sqlite-store.ts makes them the async port. With the rest of
// src/store/sqlite/, the only place that speaks SQL. (Over 450 lines: one method per port method, kept together.)

import type Database from 'better-sqlite3';
import { and, asc, eq, gt, type SQL, sql } from 'drizzle-orm';
import type { BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { ToolsealError } from '../../core/errors.ts';
import {
  blobs,
  logCheckpoints,
  witnessCosignatures,
  logEntries,
  logNodes,
  manifestVersions,
  principals,
  publishers,
  signingKeys,
  versionBundles,
} from './schema.ts';
import type * as schema from './schema.ts';
import type {
  ApprovalDecision,
  ApprovalFilter,
  ApprovalRecord,
  BlobRecord,
  BundleRecord,
  CheckpointRecord,
  CosignatureRecord,
  LogEntryRecord,
  LogNodeRecord,
  NewApprovalRecord,
  PrincipalKind,
  PrincipalRecord,
  PublisherRecord,
  SigningKeyRecord,
  Store,
  VersionRecord,
  VersionWithPublisher,
  StoreTransactions,
  VersionBatchStore,
} from '../port.ts';
import { logNodeKey } from '../port.ts';

/** The port's data methods, synchronous (what SqliteTables implements; sqlite-store.ts wraps each in a Promise). */
export type SynchronousStore = {
  [K in Exclude<keyof Store, keyof StoreTransactions | keyof VersionBatchStore>]: Store[K] extends (
    ...args: infer A
  ) => Promise<infer R>
    ? (...args: A) => R
    : never;
};

export class SqliteTables implements SynchronousStore {
  private readonly statements;

  /**
   * Statements on the publish and proof paths, prepared once on the client itself: drizzle's result mapping
   * costs more than the query for these point reads and writes.
   */
  private readonly raw;

  /** The approval service's statements (src/registry/approvals.ts). */
  private readonly approvalStatements;

  constructor(
    private readonly db: BetterSQLite3Database<typeof schema>,
    client: Database.Database,
  ) {
    const versionColumns =
      'id, name, version, digest, publisher_id AS publisherId, stored_at AS storedAt, attestation, kid, log_index AS logIndex, ' +
      'status, yank_reason AS yankReason, yanked_at AS yankedAt, yank_log_index AS yankLogIndex';
    this.raw = {
      versionByNameVersion: client.prepare(
        `SELECT ${versionColumns} FROM manifest_versions WHERE name = ? AND version = ?`,
      ),
      latestDigestOf: client
        .prepare('SELECT digest FROM manifest_versions WHERE name = ? ORDER BY id DESC LIMIT 1')
        .pluck(),
      insertBlobIfAbsent: client.prepare(
        'INSERT INTO blobs (digest, bytes, size) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
      ),
      insertVersion: client.prepare(
        'INSERT INTO manifest_versions (name, version, digest, publisher_id, stored_at, attestation, kid, log_index) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      activeSigningKid: client
        .prepare('SELECT kid FROM signing_keys WHERE not_after IS NULL ORDER BY not_before DESC LIMIT 1')
        .pluck(),
      logNode: client.prepare('SELECT hash FROM log_nodes WHERE level = ? AND idx = ?').pluck(),
      latestCheckpoint: client.prepare(
        'SELECT size, root_hash AS rootHash, note, created_at AS createdAt FROM log_checkpoints ORDER BY size DESC LIMIT 1',
      ),
      publisherByTokenHash: client.prepare(
        'SELECT id, namespace, token_hash AS tokenHash, created_at AS createdAt, revoked_at AS revokedAt FROM publishers WHERE token_hash = ?',
      ),
      insertCheckpoint: client.prepare(
        'INSERT INTO log_checkpoints (size, root_hash, note, created_at) VALUES (?, ?, ?, ?)',
      ),
      logSize: client.prepare('SELECT coalesce(max(idx) + 1, 0) FROM log_entries').pluck(),
      insertNode: client.prepare('INSERT INTO log_nodes (level, idx, hash) VALUES (?, ?, ?)'),
      insertEntry: client.prepare('INSERT INTO log_entries (idx, kind, data, leaf_hash) VALUES (?, ?, ?, ?)'),
    };
    this.approvalStatements = prepareApprovalStatements(client);
    const p = sql.placeholder;
    this.statements = {
      blobByDigest: db
        .select()
        .from(blobs)
        .where(eq(blobs.digest, p('digest')))
        .prepare(),
      publisherById: db
        .select()
        .from(publishers)
        .where(eq(publishers.id, p('id')))
        .prepare(),
    };
  }

  // ── publishers ──────────────────────────────────────────────────────────

  insertPublisher(namespace: string, tokenHash: string, createdAt: string): PublisherRecord {
    try {
      return this.db.insert(publishers).values({ namespace, tokenHash, createdAt }).returning().get();
    } catch (cause) {
      if (isUniqueViolation(cause))
        throw new ToolsealError('NAMESPACE_TAKEN', `namespace ${namespace} already has a publisher`, { cause });
      throw cause; // translated by the caller (sqlite-store.ts)
    }
  }

  listPublishers(): PublisherRecord[] {
    return this.db.select().from(publishers).orderBy(asc(publishers.id)).all();
  }

  revokePublisher(id: number, revokedAt: string): void {
    this.db.update(publishers).set({ revokedAt }).where(eq(publishers.id, id)).run();
  }

  replacePublisherTokenHash(id: number, tokenHash: string): void {
    this.db.update(publishers).set({ tokenHash }).where(eq(publishers.id, id)).run();
  }

  findPublisherByTokenHash(tokenHash: string): PublisherRecord | undefined {
    return this.raw.publisherByTokenHash.get(tokenHash) as PublisherRecord | undefined;
  }

  findPublisherById(id: number): PublisherRecord | undefined {
    return this.statements.publisherById.get({ id });
  }

  findPublisherByNamespace(namespace: string): PublisherRecord | undefined {
    return this.db.select().from(publishers).where(sql`${publishers.namespace} = ${namespace} COLLATE NOCASE`).get();
  }

  countPublishers(): number {
    return this.db.select({ n: sql<number>`count(*)` }).from(publishers).get()?.n ?? 0;
  }

  // ── principals and approvals ────────────────────────────────────────────

  insertPrincipal(kind: PrincipalKind, name: string, tokenHash: string, createdAt: string): PrincipalRecord {
    try {
      return this.db.insert(principals).values({ kind, name, tokenHash, createdAt }).returning().get();
    } catch (cause) {
      if (isUniqueViolation(cause))
        throw new ToolsealError(
          'NAMESPACE_TAKEN',
          `there already is a${kind === 'operator' ? 'n' : ''} ${kind} ${name}`,
          {
            cause,
          },
        );
      throw cause; // translated by the caller (sqlite-store.ts)
    }
  }

  findPrincipalByTokenHash(tokenHash: string): PrincipalRecord | undefined {
    return this.approvalStatements.principalByTokenHash.get(tokenHash) as PrincipalRecord | undefined;
  }

  findPrincipalById(id: number): PrincipalRecord | undefined {
    return this.approvalStatements.principalById.get(id) as PrincipalRecord | undefined;
  }

  findPrincipal(kind: PrincipalKind, name: string): PrincipalRecord | undefined {
    return this.db
      .select()
      .from(principals)
      .where(and(eq(principals.kind, kind), eq(principals.name, name)))
      .get();
  }

  listPrincipals(kind: PrincipalKind): PrincipalRecord[] {
    return this.db.select().from(principals).where(eq(principals.kind, kind)).orderBy(asc(principals.id)).all();
  }

  revokePrincipal(id: number, revokedAt: string): void {
    this.db.update(principals).set({ revokedAt }).where(eq(principals.id, id)).run();
  }

  insertApproval(row: NewApprovalRecord): void {
    this.approvalStatements.insert.run(row);
  }

  getApproval(id: string): ApprovalRecord | undefined {
    return this.approvalStatements.byId.get(id) as ApprovalRecord | undefined;
  }

  findStandingApproval(hostId: number, digest: string, now: string): ApprovalRecord | undefined {
    return this.approvalStatements.standing.get(hostId, digest, now) as ApprovalRecord | undefined;
  }

  listApprovals(filter: ApprovalFilter): ApprovalRecord[] {
    const { status, now, limit } = filter;
    const statements = this.approvalStatements;
    if (status === undefined) return statements.listAll.all(limit) as ApprovalRecord[];
    if (status === 'expired') return statements.listExpired.all(now, limit) as ApprovalRecord[];
    if (status === 'pending' || status === 'approved') {
      return statements.listOpen.all(status, now, limit) as ApprovalRecord[];
    }
    return statements.listFinal.all(status, limit) as ApprovalRecord[];
  }

  listAllApprovals(): ApprovalRecord[] {
    return this.approvalStatements.everyOne.all() as ApprovalRecord[];
  }

  decideApproval(id: string, decision: ApprovalDecision): boolean {
    return this.approvalStatements.decide.run({ id, ...decision }).changes === 1;
  }

  consumeApproval(id: string, consumedAt: string, logIndex: number): boolean {
    return this.approvalStatements.consume.run({ id, consumedAt, logIndex }).changes === 1;
  }

  // ── blobs and versions ──────────────────────────────────────────────────

  insertBlobIfAbsent(digest: string, bytes: Uint8Array): void {
    this.raw.insertBlobIfAbsent.run(
      digest,
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      bytes.byteLength,
    );
  }

  getBlob(digest: string): BlobRecord | undefined {
    return this.statements.blobByDigest.get({ digest });
  }

  getVersion(name: string, version: string): VersionRecord | undefined {
    return this.raw.versionByNameVersion.get(name, version) as VersionRecord | undefined;
  }

  /** The digest of the most recently stored version of `name` (any status), for the attestation's previousDigest. */
  getLatestStoredDigest(name: string): string | undefined {
    return this.raw.latestDigestOf.get(name) as string | undefined;
  }

  insertVersion(row: Omit<VersionRecord, 'id' | 'status' | 'yankReason' | 'yankedAt' | 'yankLogIndex'>): VersionRecord {
    try {
      const { lastInsertRowid } = this.raw.insertVersion.run(
        row.name,
        row.version,
        row.digest,
        row.publisherId,
        row.storedAt,
        row.attestation,
        row.kid,
        row.logIndex,
      );
      return {
        ...row,
        id: Number(lastInsertRowid),
        status: 'active',
        yankReason: null,
        yankedAt: null,
        yankLogIndex: null,
      };
    } catch (cause) {
      if (isUniqueViolation(cause))
        throw new ToolsealError('VERSION_EXISTS', `${row.name}@${row.version} already exists`, { cause });
      throw cause;
    }
  }

  markYanked(id: number, reason: string, yankedAt: string, yankLogIndex: number): void {
    this.db
      .update(manifestVersions)
      .set({ status: 'yanked', yankReason: reason, yankedAt, yankLogIndex })
      .where(eq(manifestVersions.id, id))
      .run();
  }

  listVersions(name: string): VersionRecord[] {
    return this.db
      .select()
      .from(manifestVersions)
      .where(eq(manifestVersions.name, name))
      .orderBy(asc(manifestVersions.id))
      .all() as VersionRecord[];
  }

  /** Versions bound to a digest, with their publisher's namespace (the auditor query). */
  listVersionsByDigest(digest: string): VersionWithPublisher[] {
    return this.db
      .select({ version: manifestVersions, publisher: publishers.namespace })
      .from(manifestVersions)
      .innerJoin(publishers, eq(publishers.id, manifestVersions.publisherId))
      .where(eq(manifestVersions.digest, digest))
      .orderBy(asc(manifestVersions.id))
      .all()
      .map((row) => ({ ...(row.version as VersionRecord), publisher: row.publisher }));
  }

  /**
   * Distinct manifest names in name order after `afterName`; with `query`, only those whose name, or any version's
   * description or tool name, title or description, contains it (case-insensitively for ASCII; `%` and `_` literal).
   */
  listManifestNames(query: string | undefined, afterName: string | undefined, limit: number): string[] {
    const conditions = [];
    if (query) {
      const pattern = `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const like = (value: SQL): SQL => sql`${value} LIKE ${pattern} ESCAPE '\\'`;
      // The name, or any version's description or tool name, title or description (SQLite JSON1 over the stored
      // canonical bytes: a scan, fine for a registry's size; an index table is the next step if it is not).
      conditions.push(
        sql`(${like(sql`${manifestVersions.name}`)} OR EXISTS (SELECT 1 FROM blobs b WHERE b.digest = ${manifestVersions.digest}
          AND (${like(sql`json_extract(CAST(b.bytes AS TEXT), '$.description')`)} OR EXISTS (
            SELECT 1 FROM json_each(CAST(b.bytes AS TEXT), '$.tools') t WHERE ${like(sql`json_extract(t.value, '$.name')`)}
              OR ${like(sql`json_extract(t.value, '$.title')`)} OR ${like(sql`json_extract(t.value, '$.description')`)}))))`,
      );
    }
    if (afterName !== undefined) conditions.push(gt(manifestVersions.name, afterName));
    return this.db
      .selectDistinct({ name: manifestVersions.name })
      .from(manifestVersions)
      .where(conditions.length === 0 ? undefined : and(...conditions))
      .orderBy(asc(manifestVersions.name))
      .limit(limit)
      .all()
      .map((row) => row.name);
  }

  /** Every version, oldest first (for fsck). */
  listAllVersions(): VersionRecord[] {
    return this.db.select().from(manifestVersions).orderBy(asc(manifestVersions.id)).all() as VersionRecord[];
  }

  /** Every blob, in digest order (for fsck). */
  listAllBlobs(): BlobRecord[] {
    return this.db.select().from(blobs).orderBy(asc(blobs.digest)).all();
  }

  // ── Sigstore bundles ────────────────────────────────────────────────────

  insertBundles(rows: readonly BundleRecord[]): void {
    if (rows.length > 0)
      this.db
        .insert(versionBundles)
        .values([...rows])
        .run();
  }

  getBundle(versionId: number): BundleRecord | undefined {
    return this.db.select().from(versionBundles).where(eq(versionBundles.versionId, versionId)).get();
  }

  listVersionsWithoutBundle(): VersionRecord[] {
    return this.db
      .select({ version: manifestVersions })
      .from(manifestVersions)
      .leftJoin(versionBundles, eq(versionBundles.versionId, manifestVersions.id))
      .where(sql`${versionBundles.versionId} IS NULL`)
      .orderBy(asc(manifestVersions.id))
      .all()
      .map((row) => row.version as VersionRecord);
  }

  listAllBundles(): BundleRecord[] {
    return this.db.select().from(versionBundles).orderBy(asc(versionBundles.versionId)).all();
  }

  // ── signing keys ────────────────────────────────────────────────────────

  /** The kid of the key without `notAfter` (the active one), if any. */
  activeSigningKid(): string | undefined {
    return this.raw.activeSigningKid.get() as string | undefined;
  }

  listSigningKeys(): SigningKeyRecord[] {
    return this.db.select().from(signingKeys).orderBy(asc(signingKeys.notBefore)).all();
  }

  insertSigningKey(row: SigningKeyRecord): void {
    this.db.insert(signingKeys).values(row).run();
  }

  retireSigningKey(kid: string, notAfter: number): void {
    this.db.update(signingKeys).set({ notAfter }).where(eq(signingKeys.kid, kid)).run();
  }

  // ── transparency log ────────────────────────────────────────────────────

  getLogSize(): number {
    return this.raw.logSize.get() as number;
  }

  readLogNode(level: number, index: number): Buffer | undefined {
    return this.raw.logNode.get(level, index) as Buffer | undefined;
  }

  readLogNodes(nodes: readonly { level: number; index: number }[]): Map<string, Buffer> {
    const found = new Map<string, Buffer>();
    for (const { level, index } of nodes) {
      const hash = this.raw.logNode.get(level, index) as Buffer | undefined;
      if (hash !== undefined) found.set(logNodeKey(level, index), hash);
    }
    return found;
  }

  insertLogEntry(entry: LogEntryRecord): void {
    this.raw.insertEntry.run(entry.index, entry.kind, entry.data, entry.leafHash);
  }

  insertLogLeaves(entries: readonly LogEntryRecord[], nodes: readonly LogNodeRecord[]): void {
    for (const entry of entries) this.insertLogEntry(entry);
    for (const node of nodes) this.insertLogNode(node.level, node.index, node.hash);
  }

  insertLogNode(level: number, index: number, hash: Uint8Array): void {
    this.raw.insertNode.run(level, index, Buffer.from(hash.buffer, hash.byteOffset, hash.byteLength));
  }

  readLogEntries(start: number, end: number): LogEntryRecord[] {
    return this.db
      .select()
      .from(logEntries)
      .where(and(sql`${logEntries.index} >= ${start}`, sql`${logEntries.index} < ${end}`))
      .orderBy(asc(logEntries.index))
      .all();
  }

  /** Every stored perfect-subtree node (for fsck). */
  listAllLogNodes(): { level: number; index: number; hash: Buffer }[] {
    return this.db.select().from(logNodes).orderBy(asc(logNodes.level), asc(logNodes.index)).all();
  }

  listCheckpoints(): CheckpointRecord[] {
    return this.db.select().from(logCheckpoints).orderBy(asc(logCheckpoints.size)).all();
  }

  latestCheckpoint(): CheckpointRecord | undefined {
    return this.raw.latestCheckpoint.get() as CheckpointRecord | undefined;
  }

  insertCheckpoint(row: CheckpointRecord): void {
    this.raw.insertCheckpoint.run(row.size, row.rootHash, row.note, row.createdAt);
  }

  saveCosignature(row: CosignatureRecord): void {
    this.db
      .insert(witnessCosignatures)
      .values(row)
      .onConflictDoUpdate({ target: [witnessCosignatures.size, witnessCosignatures.witness], set: { line: row.line } })
      .run();
  }

  listCosignatures(size: number): CosignatureRecord[] {
    return this.db
      .select()
      .from(witnessCosignatures)
      .where(eq(witnessCosignatures.size, size))
      .orderBy(asc(witnessCosignatures.witness))
      .all();
  }
}

const PRINCIPAL_COLUMNS =
  'id, kind, name, token_hash AS tokenHash, created_at AS createdAt, revoked_at AS revokedAt FROM principals';
const APPROVAL_SELECT =
  'SELECT a.id, a.host_id AS hostId, a.audience, a.manifest_name AS manifestName, a.manifest_version AS manifestVersion, ' +
  'a.tool, a.digest, a.envelope, a.salt, a.status, a.created_at AS createdAt, a.expires_at AS expiresAt, ' +
  'a.decided_by AS decidedById, o.name AS decidedBy, a.decided_at AS decidedAt, a.reason, ' +
  'a.decision_log_index AS decisionLogIndex, a.consumed_at AS consumedAt, a.consumption_log_index AS consumptionLogIndex ' +
  'FROM approvals a LEFT JOIN principals o ON o.id = a.decided_by';
const NEWEST_FIRST = 'ORDER BY a.created_at DESC, a.rowid DESC LIMIT ?';

/** The approval service's statements: point reads and the guarded transitions (WHERE the state allows them). */
function prepareApprovalStatements(client: Database.Database) {
  return {
    principalByTokenHash: client.prepare(`SELECT ${PRINCIPAL_COLUMNS} WHERE token_hash = ?`),
    principalById: client.prepare(`SELECT ${PRINCIPAL_COLUMNS} WHERE id = ?`),
    insert: client.prepare(
      'INSERT INTO approvals (id, host_id, audience, manifest_name, manifest_version, tool, digest, envelope, salt, created_at, expires_at) ' +
        'VALUES (@id, @hostId, @audience, @manifestName, @manifestVersion, @tool, @digest, @envelope, @salt, @createdAt, @expiresAt)',
    ),
    byId: client.prepare(`${APPROVAL_SELECT} WHERE a.id = ?`),
    standing: client.prepare(
      `${APPROVAL_SELECT} WHERE a.host_id = ? AND a.digest = ? AND a.status IN ('pending', 'approved', 'denied') AND a.expires_at > ? ` +
        'ORDER BY a.created_at DESC, a.rowid DESC LIMIT 1',
    ),
    listAll: client.prepare(`${APPROVAL_SELECT} ${NEWEST_FIRST}`),
    listExpired: client.prepare(
      `${APPROVAL_SELECT} WHERE a.status IN ('pending', 'approved') AND a.expires_at <= ? ${NEWEST_FIRST}`,
    ),
    listOpen: client.prepare(`${APPROVAL_SELECT} WHERE a.status = ? AND a.expires_at > ? ${NEWEST_FIRST}`),
    listFinal: client.prepare(`${APPROVAL_SELECT} WHERE a.status = ? ${NEWEST_FIRST}`),
    everyOne: client.prepare(`${APPROVAL_SELECT} ORDER BY a.rowid`),
    decide: client.prepare(
      'UPDATE approvals SET status = @status, decided_by = @decidedById, decided_at = @decidedAt, reason = @reason, ' +
        "decision_log_index = @logIndex WHERE id = @id AND status = 'pending'",
    ),
    consume: client.prepare(
      "UPDATE approvals SET status = 'consumed', consumed_at = @consumedAt, consumption_log_index = @logIndex " +
        "WHERE id = @id AND status = 'approved'",
    ),
  };
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

// The PostgreSQL schema (drizzle pg-core), the same tables, keys and constraints as src/store/sqlite/schema.ts (issue
// 16 §1): bytes as bytea, counters and times as bigint (read back as numbers); approvals keep their insertion order in
// `seq` (SQLite's rowid). Migrations: drizzle-pg/ (immutability triggers hand-written in 0001).

import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  customType,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** bytea, read as a Buffer (node-postgres) or Uint8Array (PGlite; the store wraps it as a Buffer). */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

/** A bigint column read as a JavaScript number (every value the registry stores stays below 2^53). */
const counter = (name: string) => bigint(name, { mode: 'number' });

export const publishers = pgTable(
  'publishers',
  {
    id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
    /** As the operator typed it (lowercase reverse-DNS). */
    namespace: text('namespace').notNull().unique(),
    /** SHA-256 hex of the bearer token; the token itself is never stored. Replaced when the token is rotated. */
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: text('created_at').notNull(),
    /** When the publisher was revoked (its token is refused from then on); null while active. Set once. */
    revokedAt: text('revoked_at'),
  },
  (table) => [uniqueIndex('publishers_namespace_nocase').on(sql`lower(${table.namespace})`)],
);

/** Bytes stored once per digest. Immutable (triggers refuse UPDATE, DELETE and TRUNCATE). */
export const blobs = pgTable('blobs', {
  digest: text('digest').primaryKey(),
  bytes: bytea('bytes').notNull(),
  size: counter('size').notNull(),
});

export const manifestVersions = pgTable(
  'manifest_versions',
  {
    id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
    name: text('name').notNull(),
    version: text('version').notNull(),
    digest: text('digest')
      .notNull()
      .references(() => blobs.digest),
    publisherId: integer('publisher_id')
      .notNull()
      .references(() => publishers.id),
    storedAt: text('stored_at').notNull(),
    /** The exact attestation bytes (a flattened JWS), created once, served as stored. */
    attestation: bytea('attestation').notNull(),
    kid: text('kid').notNull(),
    /** Index of this attestation's leaf in the transparency log. */
    logIndex: counter('log_index').notNull().unique(),
    status: text('status', { enum: ['active', 'yanked'] })
      .notNull()
      .default('active'),
    yankReason: text('yank_reason'),
    yankedAt: text('yanked_at'),
    yankLogIndex: counter('yank_log_index'),
  },
  (table) => [
    uniqueIndex('manifest_versions_name_version').on(table.name, table.version),
    /** The latest stored version of a name (previousDigest) without sorting every version. */
    index('manifest_versions_name_id').on(table.name, table.id),
    index('manifest_versions_digest').on(table.digest),
    check('manifest_versions_status', sql`${table.status} IN ('active', 'yanked')`),
  ],
);

/** Every public key the registry has signed with, and when (seconds since the epoch). */
export const signingKeys = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  publicJwk: text('public_jwk').notNull(),
  notBefore: counter('not_before').notNull(),
  notAfter: counter('not_after'),
  logIndex: counter('log_index'),
});

/** Transparency log leaves (RFC 6962 §2.1): the leaf data as hashed, and what event it records. */
export const logEntries = pgTable('log_entries', {
  index: counter('idx').primaryKey(),
  /** The entry formats are src/log/entries.ts's (no check here, as in SQLite: the kinds grow with the log). */
  kind: text('kind', {
    enum: ['attestation', 'yank', 'key', 'approval-decision', 'approval-consumption', 'bundle'],
  }).notNull(),
  data: bytea('data').notNull(),
  leafHash: bytea('leaf_hash').notNull(),
});

/** Hashes of perfect subtrees: (level, index) covers leaves [index·2^level, (index+1)·2^level). */
export const logNodes = pgTable(
  'log_nodes',
  {
    level: integer('level').notNull(),
    index: counter('idx').notNull(),
    hash: bytea('hash').notNull(),
  },
  (table) => [primaryKey({ columns: [table.level, table.index] })],
);

/** Every signed checkpoint, in order of tree size (one per size: the primary key refuses a second root). */
export const logCheckpoints = pgTable('log_checkpoints', {
  size: counter('size').primaryKey(),
  rootHash: bytea('root_hash').notNull(),
  note: text('note').notNull(),
  createdAt: text('created_at').notNull(),
});

/**
 * Witness cosignatures of signed checkpoints (C2SP tlog-cosignature), each verified before it is saved: one line per
 * checkpoint size and witness (the policy's name), replaced when the witness cosigns that size again.
 */
export const witnessCosignatures = pgTable(
  'witness_cosignatures',
  {
    size: counter('size').notNull(),
    witness: text('witness').notNull(),
    /** The cosignature line, "— name base64\n". */
    line: text('line').notNull(),
  },
  (table) => [primaryKey({ columns: [table.size, table.witness] })],
);

/** Operators (who decide approvals) and hosts (whose guard asks and consumes): kept forever, revocable once. */
export const principals = pgTable(
  'principals',
  {
    id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
    kind: text('kind', { enum: ['operator', 'host'] }).notNull(),
    /** Unique per kind; a host's name is the audience of its approvals. Immutable. */
    name: text('name').notNull(),
    /** SHA-256 hex of the bearer token; the token itself is never stored. */
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: text('created_at').notNull(),
    /** When the principal was revoked (its token refused from then on); null while active. Set once. */
    revokedAt: text('revoked_at'),
  },
  (table) => [
    uniqueIndex('principals_kind_name').on(table.kind, table.name),
    check('principals_kind', sql`${table.kind} IN ('operator', 'host')`),
  ],
);

/** Approval requests (docs/approvals.md), as in the SQLite schema; `seq` orders them as inserted. */
export const approvals = pgTable(
  'approvals',
  {
    /** `apr_` + 22 base64url characters. */
    id: text('id').primaryKey(),
    seq: counter('seq').notNull().generatedAlwaysAsIdentity(),
    hostId: integer('host_id')
      .notNull()
      .references(() => principals.id),
    audience: text('audience').notNull(),
    manifestName: text('manifest_name').notNull(),
    manifestVersion: text('manifest_version').notNull(),
    tool: text('tool').notNull(),
    digest: text('digest').notNull(),
    envelope: bytea('envelope').notNull(),
    salt: bytea('salt').notNull(),
    status: text('status', { enum: ['pending', 'approved', 'denied', 'consumed'] })
      .notNull()
      .default('pending'),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    decidedBy: integer('decided_by').references(() => principals.id),
    decidedAt: text('decided_at'),
    reason: text('reason'),
    decisionLogIndex: counter('decision_log_index'),
    consumedAt: text('consumed_at'),
    consumptionLogIndex: counter('consumption_log_index'),
  },
  (table) => [
    index('approvals_host_digest').on(table.hostId, table.digest),
    index('approvals_created_at').on(table.createdAt),
    check('approvals_status', sql`${table.status} IN ('pending', 'approved', 'denied', 'consumed')`),
    check('approvals_salt', sql`octet_length(${table.salt}) = 32`),
  ],
);

/**
 * The sequencer lease (issue 16 §2): one row; the process named in `holder` sequences the log and signs checkpoints
 * until `expires_at` (the database's clock), renewing it; `epoch` grows by one at every change of holder (a fencing
 * token every sequencing transaction checks).
 */
export const sequencerLease = pgTable(
  'sequencer_lease',
  {
    id: integer('id').primaryKey(),
    holder: text('holder').notNull(),
    epoch: counter('epoch').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'string' }).notNull(),
  },
  (table) => [check('sequencer_lease_one_row', sql`${table.id} = 1`)],
);

/**
 * Log-writing work handed to the sequencer by the other processes (issue 16 §2): a publish, a yank or an approval
 * transition, with its outcome written in the same transaction as the work itself. The sequencer purges finished rows a minute after they finished.
 */
export const logJobs = pgTable(
  'log_jobs',
  {
    id: counter('id').primaryKey().generatedAlwaysAsIdentity(),
    kind: text('kind', { enum: ['publish', 'yank', 'approval-decision', 'approval-consumption'] }).notNull(),
    payload: bytea('payload').notNull(),
    submittedBy: text('submitted_by').notNull(),
    submittedAt: timestamp('submitted_at', { withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    state: text('state', { enum: ['queued', 'done', 'failed', 'cancelled'] })
      .notNull()
      .default('queued'),
    outcome: bytea('outcome'),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'string' }),
  },
  (table) => [
    index('log_jobs_queued').on(table.id).where(sql`${table.state} = 'queued'`),
    check('log_jobs_kind', sql`${table.kind} IN ('publish', 'yank', 'approval-decision', 'approval-consumption')`),
    check('log_jobs_state', sql`${table.state} IN ('queued', 'done', 'failed', 'cancelled')`),
  ],
);

/** Trust rules of trusted publishing (issue 28 §1): as in src/store/sqlite/schema.ts. */
export const trustRules = pgTable(
  'trust_rules',
  {
    id: integer('id').primaryKey().generatedByDefaultAsIdentity(),
    namespace: text('namespace').notNull(),
    issuer: text('issuer').notNull(),
    audience: text('audience').notNull(),
    claims: text('claims').notNull(),
    refClaims: text('ref_claims').notNull(),
    oidcOnly: integer('oidc_only').notNull(),
    createdAt: text('created_at').notNull(),
    removedAt: text('removed_at'),
  },
  (table) => [index('trust_rules_namespace').on(table.namespace)],
);

/** How a namespace was verified (issue 28 §4): as in src/store/sqlite/schema.ts. */
export const namespaceVerifications = pgTable('namespace_verifications', {
  namespace: text('namespace').primaryKey(),
  unverified: integer('unverified').notNull(),
  domain: text('domain'),
  provenAt: text('proven_at'),
});

/** The Sigstore bundle of a version (issue 26): as src/store/sqlite/schema.ts's version_bundles. */
export const versionBundles = pgTable('version_bundles', {
  versionId: integer('version_id')
    .primaryKey()
    .references(() => manifestVersions.id),
  kid: text('kid').notNull(),
  envelope: text('envelope').notNull(),
  logIndex: counter('log_index').notNull().unique(),
  integratedTime: counter('integrated_time').notNull(),
  promise: bytea('promise').notNull(),
});

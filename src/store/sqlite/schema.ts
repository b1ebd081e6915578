// The drizzle schema: publishers (revocable, tokens rotatable), content-addressed blobs, manifest versions, signing keys,
// the transparency log, and the approval service's principals and requests (issue 13 §3).

import { sql } from 'drizzle-orm';
import { blob, check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const publishers = sqliteTable(
  'publishers',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** As the operator typed it (lowercase reverse-DNS). */
    namespace: text('namespace').notNull().unique(),
    /** SHA-256 hex of the bearer token; the token itself is never stored. Replaced when the token is rotated. */
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: text('created_at').notNull(),
    /** When the publisher was revoked (its token is refused from then on); null while active. Set once. */
    revokedAt: text('revoked_at'),
  },
  (table) => [uniqueIndex('publishers_namespace_nocase').on(sql`${table.namespace} COLLATE NOCASE`)],
);

/** Bytes stored once per digest. Immutable (triggers refuse UPDATE and DELETE). */
export const blobs = sqliteTable('blobs', {
  digest: text('digest').primaryKey(),
  bytes: blob('bytes', { mode: 'buffer' }).notNull(),
  size: integer('size').notNull(),
});

export const manifestVersions = sqliteTable(
  'manifest_versions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
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
    attestation: blob('attestation', { mode: 'buffer' }).notNull(),
    kid: text('kid').notNull(),
    /** Index of this attestation's leaf in the transparency log. */
    logIndex: integer('log_index').notNull().unique(),
    status: text('status', { enum: ['active', 'yanked'] })
      .notNull()
      .default('active'),
    yankReason: text('yank_reason'),
    yankedAt: text('yanked_at'),
    yankLogIndex: integer('yank_log_index'),
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
export const signingKeys = sqliteTable('signing_keys', {
  kid: text('kid').primaryKey(),
  publicJwk: text('public_jwk').notNull(),
  notBefore: integer('not_before').notNull(),
  notAfter: integer('not_after'),
  logIndex: integer('log_index'),
});

/** Transparency log leaves (RFC 6962 §2.1): the leaf data as hashed, and what event it records. */
export const logEntries = sqliteTable('log_entries', {
  index: integer('idx').primaryKey(),
  kind: text('kind', {
    enum: ['attestation', 'yank', 'key', 'approval-decision', 'approval-consumption', 'bundle'],
  }).notNull(),
  data: blob('data', { mode: 'buffer' }).notNull(),
  leafHash: blob('leaf_hash', { mode: 'buffer' }).notNull(),
});

/** Hashes of perfect subtrees: (level, index) covers leaves [index·2^level, (index+1)·2^level). */
export const logNodes = sqliteTable(
  'log_nodes',
  {
    level: integer('level').notNull(),
    index: integer('idx').notNull(),
    hash: blob('hash', { mode: 'buffer' }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.level, table.index] })],
);

/** Every signed checkpoint, in order of tree size. */
export const logCheckpoints = sqliteTable('log_checkpoints', {
  size: integer('size').primaryKey(),
  rootHash: blob('root_hash', { mode: 'buffer' }).notNull(),
  note: text('note').notNull(),
  createdAt: text('created_at').notNull(),
});

/**
 * Witness cosignatures of signed checkpoints (C2SP tlog-cosignature), each verified before it is saved: one line per
 * checkpoint size and witness (the policy's name), replaced when the witness cosigns that size again.
 */
export const witnessCosignatures = sqliteTable(
  'witness_cosignatures',
  {
    size: integer('size').notNull(),
    witness: text('witness').notNull(),
    /** The cosignature line, "— name base64\n". */
    line: text('line').notNull(),
  },
  (table) => [primaryKey({ columns: [table.size, table.witness] })],
);

/** Operators (who decide approvals) and hosts (whose guard asks and consumes): kept forever, revocable once. */
export const principals = sqliteTable(
  'principals',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
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

/**
 * Approval requests (docs/approvals.md): the envelope exactly as the host sent it, the digest the registry recomputed,
 * the secret salt of the log leaves' commitment, and the one-way state pending → approved | denied, approved → consumed.
 */
export const approvals = sqliteTable(
  'approvals',
  {
    /** `apr_` + 22 base64url characters. */
    id: text('id').primaryKey(),
    hostId: integer('host_id')
      .notNull()
      .references(() => principals.id),
    audience: text('audience').notNull(),
    manifestName: text('manifest_name').notNull(),
    manifestVersion: text('manifest_version').notNull(),
    tool: text('tool').notNull(),
    digest: text('digest').notNull(),
    envelope: blob('envelope', { mode: 'buffer' }).notNull(),
    salt: blob('salt', { mode: 'buffer' }).notNull(),
    status: text('status', { enum: ['pending', 'approved', 'denied', 'consumed'] })
      .notNull()
      .default('pending'),
    createdAt: text('created_at').notNull(),
    expiresAt: text('expires_at').notNull(),
    decidedBy: integer('decided_by').references(() => principals.id),
    decidedAt: text('decided_at'),
    reason: text('reason'),
    decisionLogIndex: integer('decision_log_index'),
    consumedAt: text('consumed_at'),
    consumptionLogIndex: integer('consumption_log_index'),
  },
  (table) => [
    index('approvals_host_digest').on(table.hostId, table.digest),
    index('approvals_created_at').on(table.createdAt),
    check('approvals_status', sql`${table.status} IN ('pending', 'approved', 'denied', 'consumed')`),
    check('approvals_salt', sql`length(${table.salt}) = 32`),
  ],
);

/**
 * Trust rules of trusted publishing (issue 28 §1, docs/trusted-publishing.md): which OIDC issuer, audience and exact
 * claims may publish to a namespace. Claims are JSON objects of strings. Removing a rule (`publisher untrust`) sets
 * `removed_at`: the row stays as the record of what was trusted and when.
 */
export const trustRules = sqliteTable(
  'trust_rules',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** Lowercase reverse-DNS, as the manifest names it. */
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

/**
 * How a namespace was verified (issue 28 §4): `unverified` set by `publisher add … --unverified-namespace`; `domain`
 * and `proven_at` by `publisher add … --prove-http`. A namespace without a row has neither.
 */
export const namespaceVerifications = sqliteTable('namespace_verifications', {
  namespace: text('namespace').primaryKey(),
  unverified: integer('unverified').notNull(),
  domain: text('domain'),
  provenAt: text('proven_at'),
});

/**
 * The Sigstore bundle of a version (issue 26, docs/sigstore.md): its DSSE envelope (JSON, as signed), the bundle key's
 * kid, the index of its hashedrekord leaf in the log, when the log integrated it and the log's inclusion promise.
 * The proof and checkpoint are not stored: each answer takes the current ones. One per version, never changed.
 */
export const versionBundles = sqliteTable('version_bundles', {
  versionId: integer('version_id')
    .primaryKey()
    .references(() => manifestVersions.id),
  kid: text('kid').notNull(),
  envelope: text('envelope').notNull(),
  logIndex: integer('log_index').notNull().unique(),
  integratedTime: integer('integrated_time').notNull(),
  promise: blob('promise', { mode: 'buffer' }).notNull(),
});

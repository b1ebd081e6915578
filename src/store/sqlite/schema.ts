// The drizzle schema: publishers (revocable, tokens rotatable), content-addressed blobs, manifest versions, signing keys and the transparency log.

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
  kind: text('kind', { enum: ['attestation', 'yank', 'key'] }).notNull(),
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

// fsck's structural check of a PostgreSQL store (issue 16 §1): every immutability trigger of drizzle-pg/0001 is in
// place and enabled, and, when the amcheck extension is installed (it is not created here), every B-tree index of
// the registry's tables passes bt_index_check (PostgreSQL docs, "amcheck"). The rows themselves are fsck's.

import type { Row } from './database-handle.ts';

type Query = (sql: string, params?: readonly unknown[]) => Promise<Row[]>;

/** The triggers drizzle-pg/0001_immutability.sql creates, by table. */
export const IMMUTABILITY_TRIGGERS: readonly string[] = [
  'approvals_no_delete',
  'approvals_no_truncate',
  'approvals_update',
  'blobs_no_delete',
  'blobs_no_truncate',
  'blobs_no_update',
  'log_checkpoints_no_delete',
  'log_checkpoints_no_truncate',
  'log_checkpoints_no_update',
  'log_entries_no_delete',
  'log_entries_no_truncate',
  'log_entries_no_update',
  'log_nodes_no_delete',
  'log_nodes_no_truncate',
  'log_nodes_no_update',
  'manifest_versions_no_delete',
  'manifest_versions_no_truncate',
  'manifest_versions_update',
  'principals_no_delete',
  'principals_no_truncate',
  'principals_update',
  'publishers_no_delete',
  'publishers_no_truncate',
  'publishers_update',
  'signing_keys_no_delete',
  'signing_keys_no_truncate',
  'signing_keys_update',
];

const TABLES = [
  'approvals',
  'blobs',
  'log_checkpoints',
  'log_entries',
  'log_nodes',
  'manifest_versions',
  'principals',
  'publishers',
  'signing_keys',
];

/** One line per problem; none when intact. */
export async function checkPostgresStructure(query: Query): Promise<string[]> {
  const problems: string[] = [];
  const present = new Map(
    (
      await query(
        `SELECT t.tgname AS name, t.tgenabled AS enabled FROM pg_trigger t
       WHERE NOT t.tgisinternal AND t.tgrelid = ANY (SELECT to_regclass(name)::oid FROM unnest($1::text[]) AS name)`,
        [TABLES],
      )
    ).map((row) => [row['name'] as string, row['enabled'] as string]),
  );
  for (const name of IMMUTABILITY_TRIGGERS) {
    const enabled = present.get(name);
    if (enabled === undefined) problems.push(`the immutability trigger ${name} is missing`);
    else if (enabled === 'D') problems.push(`the immutability trigger ${name} is disabled`);
  }
  if ((await query("SELECT 1 FROM pg_extension WHERE extname = 'amcheck'")).length === 0) return problems;
  const indexes = await query(
    `SELECT i.indexrelid::regclass::text AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'btree'
     AND i.indrelid = ANY (SELECT to_regclass(name)::oid FROM unnest($1::text[]) AS name) ORDER BY 1`,
    [TABLES],
  );
  for (const row of indexes) {
    try {
      await query('SELECT bt_index_check($1::regclass)', [row['name']]);
    } catch (error) {
      problems.push(`index ${String(row['name'])}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return problems;
}

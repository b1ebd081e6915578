// The SQLite implementation of the trust-rule port (store/trust-rules-port.ts), over the store's own better-sqlite3
// handle (sqliteDatabaseOf): the tables of drizzle/0005_trust_rules.sql.

import type Database from 'better-sqlite3';
import type {
  NamespaceVerificationRecord,
  NewTrustRuleRecord,
  TrustRuleRecord,
  TrustRuleStore,
} from '../trust-rules-port.ts';
import { translateStorageError } from './storage-errors.ts';

const RULE =
  'id, namespace, issuer, audience, claims, ref_claims AS refClaims, oidc_only AS oidcOnly, ' +
  'created_at AS createdAt, removed_at AS removedAt FROM trust_rules';

interface RuleRow {
  id: number;
  namespace: string;
  issuer: string;
  audience: string;
  claims: string;
  refClaims: string;
  oidcOnly: number;
  createdAt: string;
  removedAt: string | null;
}

/** Trust rules in the SQLite database of `client` (migrated by openStore). */
export function createSqliteTrustRuleStore(client: Database.Database): TrustRuleStore {
  const run = <T>(work: () => T): Promise<T> => {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(translateStorageError(error, () => undefined));
    }
  };
  const byNamespace = client.prepare(`SELECT ${RULE} WHERE namespace = ? AND removed_at IS NULL ORDER BY id`);
  const all = client.prepare(`SELECT ${RULE} WHERE removed_at IS NULL ORDER BY namespace, id`);
  const byId = client.prepare(`SELECT ${RULE} WHERE id = ?`);
  const insert = client.prepare(
    'INSERT INTO trust_rules (namespace, issuer, audience, claims, ref_claims, oidc_only, created_at) ' +
      'VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const remove = client.prepare(
    'UPDATE trust_rules SET removed_at = ? WHERE id = ? AND namespace = ? AND removed_at IS NULL',
  );
  const verification = client.prepare(
    'SELECT namespace, unverified, domain, proven_at AS provenAt FROM namespace_verifications WHERE namespace = ?',
  );
  const saveVerification = client.prepare(
    'INSERT INTO namespace_verifications (namespace, unverified, domain, proven_at) VALUES (?, ?, ?, ?) ' +
      'ON CONFLICT (namespace) DO UPDATE SET unverified = excluded.unverified, domain = excluded.domain, ' +
      'proven_at = excluded.proven_at',
  );
  const readVerification = (namespace: string): NamespaceVerificationRecord | undefined => {
    const row = verification.get(namespace) as
      | { namespace: string; unverified: number; domain: string | null; provenAt: string | null }
      | undefined;
    return row === undefined ? undefined : { ...row, unverified: row.unverified === 1 };
  };
  return {
    listTrustRules: (namespace) => run(() => (byNamespace.all(namespace) as RuleRow[]).map(readRuleRow)),
    listAllTrustRules: () => run(() => (all.all() as RuleRow[]).map(readRuleRow)),
    insertTrustRule: (rule: NewTrustRuleRecord) =>
      run(() => {
        const { lastInsertRowid } = insert.run(
          rule.namespace,
          rule.issuer,
          rule.audience,
          JSON.stringify(rule.claims),
          JSON.stringify(rule.refClaims),
          rule.oidcOnly ? 1 : 0,
          rule.createdAt,
        );
        return readRuleRow(byId.get(lastInsertRowid) as RuleRow);
      }),
    removeTrustRule: (namespace, id, removedAt) =>
      run(() => {
        if (remove.run(removedAt, id, namespace).changes === 0) return undefined;
        return readRuleRow(byId.get(id) as RuleRow);
      }),
    findNamespaceVerification: (namespace) => run(() => readVerification(namespace)),
    // Two reads of one synchronous turn: nothing this connection writes can come between them.
    loadNamespaceTrust: (namespace) =>
      run(() => ({
        rules: (byNamespace.all(namespace) as RuleRow[]).map(readRuleRow),
        verification: readVerification(namespace),
      })),
    saveNamespaceVerification: (record: NamespaceVerificationRecord) =>
      run(() => {
        saveVerification.run(record.namespace, record.unverified ? 1 : 0, record.domain, record.provenAt);
      }),
  };
}

function readRuleRow(row: RuleRow): TrustRuleRecord {
  return {
    id: Number(row.id),
    namespace: row.namespace,
    issuer: row.issuer,
    audience: row.audience,
    claims: JSON.parse(row.claims) as Record<string, string>,
    refClaims: JSON.parse(row.refClaims) as Record<string, string>,
    oidcOnly: Number(row.oidcOnly) === 1,
    createdAt: row.createdAt,
    removedAt: row.removedAt,
  };
}

// The PostgreSQL implementation of the trust-rule port (store/trust-rules-port.ts), over the store's query function
// (postgresQueryOf; each statement its own transaction): the tables of drizzle-pg/0003_trust_rules.sql.

import type {
  NamespaceVerificationRecord,
  NewTrustRuleRecord,
  TrustRuleRecord,
  TrustRuleStore,
} from '../trust-rules-port.ts';
import { translatePostgresError } from './storage-errors.ts';
import type { Row } from './database-handle.ts';

type Query = (sql: string, params?: readonly unknown[]) => Promise<Row[]>;

const RULE =
  'id, namespace, issuer, audience, claims, ref_claims AS "refClaims", oidc_only AS "oidcOnly", ' +
  'created_at AS "createdAt", removed_at AS "removedAt" FROM trust_rules';

/** Trust rules in the PostgreSQL database behind `query` (migrated by openPostgresStore). */
export function createPostgresTrustRuleStore(query: Query): TrustRuleStore {
  const run = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw translatePostgresError(error);
    }
  };
  return {
    listTrustRules: (namespace) =>
      run(async () =>
        (await query(`SELECT ${RULE} WHERE namespace = $1 AND removed_at IS NULL ORDER BY id`, [namespace])).map(
          readRow,
        ),
      ),
    listAllTrustRules: () =>
      run(async () =>
        (await query(`SELECT ${RULE} WHERE removed_at IS NULL ORDER BY namespace COLLATE "C", id`)).map(readRow),
      ),
    insertTrustRule: (rule: NewTrustRuleRecord) =>
      run(async () => {
        const [row] = await query(
          'INSERT INTO trust_rules (namespace, issuer, audience, claims, ref_claims, oidc_only, created_at) ' +
            `VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${RULE.slice(0, RULE.indexOf(' FROM '))}`,
          [
            rule.namespace,
            rule.issuer,
            rule.audience,
            JSON.stringify(rule.claims),
            JSON.stringify(rule.refClaims),
            rule.oidcOnly ? 1 : 0,
            rule.createdAt,
          ],
        );
        return readRow(row!);
      }),
    removeTrustRule: (namespace, id, removedAt) =>
      run(async () => {
        const [row] = await query(
          'UPDATE trust_rules SET removed_at = $1 WHERE id = $2 AND namespace = $3 AND removed_at IS NULL ' +
            `RETURNING ${RULE.slice(0, RULE.indexOf(' FROM '))}`,
          [removedAt, id, namespace],
        );
        return row === undefined ? undefined : readRow(row);
      }),
    findNamespaceVerification: (namespace) =>
      run(async () => {
        const [row] = await query(
          'SELECT namespace, unverified, domain, proven_at AS "provenAt" FROM namespace_verifications WHERE namespace = $1',
          [namespace],
        );
        return row === undefined ? undefined : readVerificationRow(row);
      }),
    // One statement (one snapshot, one round trip): a row per rule in force (or one with no rule), each carrying the
    // verification record's columns (null without one).
    loadNamespaceTrust: (namespace) =>
      run(async () => {
        const rows = await query(
          'SELECT v.namespace AS "verifiedNamespace", v.unverified, v.domain, v.proven_at AS "provenAt", ' +
            'r.id, r.namespace, r.issuer, r.audience, r.claims, r.ref_claims AS "refClaims", ' +
            'r.oidc_only AS "oidcOnly", r.created_at AS "createdAt", r.removed_at AS "removedAt" ' +
            'FROM (SELECT $1::text AS namespace) asked ' +
            'LEFT JOIN namespace_verifications v ON v.namespace = asked.namespace ' +
            'LEFT JOIN trust_rules r ON r.namespace = asked.namespace AND r.removed_at IS NULL ORDER BY r.id',
          [namespace],
        );
        const first = rows[0];
        return {
          rules: rows.filter((row) => row.id !== null).map(readRow),
          verification:
            first === undefined || first.verifiedNamespace === null
              ? undefined
              : readVerificationRow({ ...first, namespace: first.verifiedNamespace }),
        };
      }),
    saveNamespaceVerification: (record: NamespaceVerificationRecord) =>
      run(async () => {
        await query(
          'INSERT INTO namespace_verifications (namespace, unverified, domain, proven_at) VALUES ($1, $2, $3, $4) ' +
            'ON CONFLICT (namespace) DO UPDATE SET unverified = excluded.unverified, domain = excluded.domain, ' +
            'proven_at = excluded.proven_at',
          [record.namespace, record.unverified ? 1 : 0, record.domain, record.provenAt],
        );
      }),
  };
}

function readVerificationRow(row: Row): NamespaceVerificationRecord {
  return {
    namespace: String(row.namespace),
    unverified: Number(row.unverified) === 1,
    domain: (row.domain as string | null) ?? null,
    provenAt: (row.provenAt as string | null) ?? null,
  };
}

function readRow(row: Row): TrustRuleRecord {
  return {
    id: Number(row.id),
    namespace: String(row.namespace),
    issuer: String(row.issuer),
    audience: String(row.audience),
    claims: JSON.parse(String(row.claims)) as Record<string, string>,
    refClaims: JSON.parse(String(row.refClaims)) as Record<string, string>,
    oidcOnly: Number(row.oidcOnly) === 1,
    createdAt: String(row.createdAt),
    removedAt: (row.removedAt as string | null) ?? null,
  };
}

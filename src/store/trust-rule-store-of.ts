// The trust-rule store (trust-rules-port.ts) of an open store: the SQLite or PostgreSQL implementation over the
// same database handle, chosen by the store's kind (issue 28 §1).

import type { Store } from './port.ts';
import { createPostgresTrustRuleStore } from './postgres/trust-rule-store.ts';
import { PostgresStore, postgresQueryOf } from './postgres/postgres-store.ts';
import { createSqliteTrustRuleStore } from './sqlite/trust-rule-store.ts';
import { sqliteDatabaseOf } from './sqlite/sqlite-store.ts';
import type { TrustRuleStore } from './trust-rules-port.ts';

export type * from './trust-rules-port.ts';

/** The trust rules kept in `store`'s database. */
export function openTrustRuleStore(store: Store): TrustRuleStore {
  return store instanceof PostgresStore
    ? createPostgresTrustRuleStore(postgresQueryOf(store))
    : createSqliteTrustRuleStore(sqliteDatabaseOf(store));
}

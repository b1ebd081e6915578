// The PostgreSQL implementation of the store port (issue 16 §1): a server by URL, or PGlite in this process.

export {
  isDatabaseUrl,
  openPostgresStore,
  PostgresStore,
  postgresQueryOf,
  redactDatabaseUrl,
  type OpenPostgresStoreOptions,
} from './postgres-store.ts';

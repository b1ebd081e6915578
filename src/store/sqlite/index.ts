// The SQLite implementation of the store port (embedded, one file per data folder, WAL, synchronous=FULL).

export { databaseFileOf, openStore, SqliteStore, sqliteDatabaseOf, type OpenStoreOptions } from './sqlite-store.ts';
export { inspectDatabaseFile } from './integrity-check.ts';
export { backupDatabase, type DatabaseBackup } from './backup.ts';

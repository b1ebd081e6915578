// The SQLite store (issue 24 §1): the async port over better-sqlite3, migrations on open. Each call runs synchronously
// underneath (microseconds, in process); connection-gate.ts keeps a transaction's awaits from letting anyone else's
// calls into it. WAL with synchronous=FULL (SQLite docs, "PRAGMA synchronous").

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { ToolsealError } from '../../core/errors.ts';
import type { NewVersionRecord, Store, VersionRecord } from '../port.ts';
import { ConnectionGate } from './connection-gate.ts';
import { runIntegrityCheck } from './integrity-check.ts';
import * as schema from './schema.ts';
import { SqliteTables, type SynchronousStore } from './sqlite-tables.ts';
import { measureFreeBytes, translateStorageError } from './storage-errors.ts';

export interface OpenStoreOptions {
  /** Folder holding `toolseal.db`; `:memory:` for tests. */
  dataDir: string;
}

const migrationsFolder = fileURLToPath(new URL('../../../drizzle', import.meta.url));

/** The database file of a data folder. */
export function databaseFileOf(dataDir: string): string {
  return join(dataDir, 'toolseal.db');
}

/**
 * Open (creating if needed) the database, apply committed migrations, and prepare the hot statements. A damaged
 * file is INTEGRITY_ERROR and no room for the migrations STORAGE_FULL (see storage-errors.ts).
 */
export function openStore(options: OpenStoreOptions): SqliteStore {
  let file = ':memory:';
  if (options.dataDir !== ':memory:') {
    mkdirSync(options.dataDir, { recursive: true });
    file = databaseFileOf(options.dataDir);
  }
  const freeBytes = (): number | undefined => measureFreeBytes(options.dataDir);
  const client = new Database(file);
  try {
    // WAL with synchronous=FULL: a committed publish survives power loss, not only a crash (SQLite docs, "PRAGMA synchronous").
    client.pragma('journal_mode = WAL');
    client.pragma('synchronous = FULL');
    client.pragma('foreign_keys = ON');
    client.pragma('busy_timeout = 5000');
    const db = drizzle({ client, schema });
    try {
      migrate(db, { migrationsFolder });
    } catch (cause) {
      const translated = translateStorageError(cause, freeBytes);
      if (translated instanceof ToolsealError) throw translated;
      throw new ToolsealError('INTERNAL', 'could not apply database migrations', { cause });
    }
    return new SqliteStore(new SqliteTables(db, client), client, freeBytes);
  } catch (error) {
    client.close();
    throw translateStorageError(error, freeBytes);
  }
}

type Sync = SynchronousStore;

export class SqliteStore implements Store {
  private readonly gate: ConnectionGate;

  constructor(
    private readonly tables: SqliteTables,
    private readonly client: Database.Database,
    /** Free bytes where the database lives, asked when an I/O error may mean a full disk. */
    freeBytes: () => number | undefined = () => undefined,
  ) {
    this.gate = new ConnectionGate(client, (error) => translateStorageError(error, freeBytes));
  }

  /** The better-sqlite3 handle (see sqliteDatabaseOf). */
  get database(): Database.Database {
    return this.client;
  }

  /**
   * Run `work` in one SQLite transaction (BEGIN IMMEDIATE: one writer at a time). A failure rolls it back and is
   * thrown translated: STORAGE_FULL when there is no room, INTEGRITY_ERROR for a damaged file.
   */
  transaction<T>(work: () => Promise<T>): Promise<T> {
    return this.gate.transaction('IMMEDIATE', work);
  }

  /** Run the reads in `work` in one deferred transaction: one WAL snapshot, never blocking another connection's writer. */
  read<T>(work: () => Promise<T>): Promise<T> {
    return this.gate.transaction('DEFERRED', work);
  }

  isInTransaction(): boolean {
    return this.gate.isInside();
  }

  /** SQLite's own integrity check (PRAGMA integrity_check, at most 20 problems): pages, b-trees, indexes. */
  checkStructure(): Promise<string[]> {
    return this.gate.call(() => runIntegrityCheck(this.client));
  }

  close(): Promise<void> {
    return this.gate.call(() => {
      if (this.client.open) this.client.close();
    });
  }
  // ── the data methods: each one synchronous statement (sqlite-tables.ts), through the gate ──

  insertPublisher(...args: Parameters<Sync['insertPublisher']>): Promise<ReturnType<Sync['insertPublisher']>> {
    return this.gate.call(() => this.tables.insertPublisher(...args));
  }

  findPublisherByTokenHash(
    ...args: Parameters<Sync['findPublisherByTokenHash']>
  ): Promise<ReturnType<Sync['findPublisherByTokenHash']>> {
    return this.gate.call(() => this.tables.findPublisherByTokenHash(...args));
  }

  findPublisherById(...args: Parameters<Sync['findPublisherById']>): Promise<ReturnType<Sync['findPublisherById']>> {
    return this.gate.call(() => this.tables.findPublisherById(...args));
  }

  findPublisherByNamespace(
    ...args: Parameters<Sync['findPublisherByNamespace']>
  ): Promise<ReturnType<Sync['findPublisherByNamespace']>> {
    return this.gate.call(() => this.tables.findPublisherByNamespace(...args));
  }

  countPublishers(...args: Parameters<Sync['countPublishers']>): Promise<ReturnType<Sync['countPublishers']>> {
    return this.gate.call(() => this.tables.countPublishers(...args));
  }

  listPublishers(...args: Parameters<Sync['listPublishers']>): Promise<ReturnType<Sync['listPublishers']>> {
    return this.gate.call(() => this.tables.listPublishers(...args));
  }

  revokePublisher(...args: Parameters<Sync['revokePublisher']>): Promise<ReturnType<Sync['revokePublisher']>> {
    return this.gate.call(() => this.tables.revokePublisher(...args));
  }

  replacePublisherTokenHash(
    ...args: Parameters<Sync['replacePublisherTokenHash']>
  ): Promise<ReturnType<Sync['replacePublisherTokenHash']>> {
    return this.gate.call(() => this.tables.replacePublisherTokenHash(...args));
  }

  insertPrincipal(...args: Parameters<Sync['insertPrincipal']>): Promise<ReturnType<Sync['insertPrincipal']>> {
    return this.gate.call(() => this.tables.insertPrincipal(...args));
  }

  findPrincipalByTokenHash(
    ...args: Parameters<Sync['findPrincipalByTokenHash']>
  ): Promise<ReturnType<Sync['findPrincipalByTokenHash']>> {
    return this.gate.call(() => this.tables.findPrincipalByTokenHash(...args));
  }

  findPrincipalById(...args: Parameters<Sync['findPrincipalById']>): Promise<ReturnType<Sync['findPrincipalById']>> {
    return this.gate.call(() => this.tables.findPrincipalById(...args));
  }

  findPrincipal(...args: Parameters<Sync['findPrincipal']>): Promise<ReturnType<Sync['findPrincipal']>> {
    return this.gate.call(() => this.tables.findPrincipal(...args));
  }

  listPrincipals(...args: Parameters<Sync['listPrincipals']>): Promise<ReturnType<Sync['listPrincipals']>> {
    return this.gate.call(() => this.tables.listPrincipals(...args));
  }

  revokePrincipal(...args: Parameters<Sync['revokePrincipal']>): Promise<ReturnType<Sync['revokePrincipal']>> {
    return this.gate.call(() => this.tables.revokePrincipal(...args));
  }

  insertApproval(...args: Parameters<Sync['insertApproval']>): Promise<ReturnType<Sync['insertApproval']>> {
    return this.gate.call(() => this.tables.insertApproval(...args));
  }

  getApproval(...args: Parameters<Sync['getApproval']>): Promise<ReturnType<Sync['getApproval']>> {
    return this.gate.call(() => this.tables.getApproval(...args));
  }

  findStandingApproval(
    ...args: Parameters<Sync['findStandingApproval']>
  ): Promise<ReturnType<Sync['findStandingApproval']>> {
    return this.gate.call(() => this.tables.findStandingApproval(...args));
  }

  listApprovals(...args: Parameters<Sync['listApprovals']>): Promise<ReturnType<Sync['listApprovals']>> {
    return this.gate.call(() => this.tables.listApprovals(...args));
  }

  listAllApprovals(...args: Parameters<Sync['listAllApprovals']>): Promise<ReturnType<Sync['listAllApprovals']>> {
    return this.gate.call(() => this.tables.listAllApprovals(...args));
  }

  decideApproval(...args: Parameters<Sync['decideApproval']>): Promise<ReturnType<Sync['decideApproval']>> {
    return this.gate.call(() => this.tables.decideApproval(...args));
  }

  consumeApproval(...args: Parameters<Sync['consumeApproval']>): Promise<ReturnType<Sync['consumeApproval']>> {
    return this.gate.call(() => this.tables.consumeApproval(...args));
  }

  insertBlobIfAbsent(...args: Parameters<Sync['insertBlobIfAbsent']>): Promise<ReturnType<Sync['insertBlobIfAbsent']>> {
    return this.gate.call(() => this.tables.insertBlobIfAbsent(...args));
  }

  getBlob(...args: Parameters<Sync['getBlob']>): Promise<ReturnType<Sync['getBlob']>> {
    return this.gate.call(() => this.tables.getBlob(...args));
  }

  getVersion(...args: Parameters<Sync['getVersion']>): Promise<ReturnType<Sync['getVersion']>> {
    return this.gate.call(() => this.tables.getVersion(...args));
  }

  getLatestStoredDigest(
    ...args: Parameters<Sync['getLatestStoredDigest']>
  ): Promise<ReturnType<Sync['getLatestStoredDigest']>> {
    return this.gate.call(() => this.tables.getLatestStoredDigest(...args));
  }

  insertVersion(...args: Parameters<Sync['insertVersion']>): Promise<ReturnType<Sync['insertVersion']>> {
    return this.gate.call(() => this.tables.insertVersion(...args));
  }

  getVersions(keys: readonly { name: string; version: string }[]): Promise<VersionRecord[]> {
    return this.gate.call(() =>
      keys.flatMap(({ name, version }) => {
        const row = this.tables.getVersion(name, version);
        return row === undefined ? [] : [row];
      }),
    );
  }

  getLatestStoredDigests(names: readonly string[]): Promise<Map<string, string>> {
    return this.gate.call(() => {
      const digests = new Map<string, string>();
      for (const name of new Set(names)) {
        const digest = this.tables.getLatestStoredDigest(name);
        if (digest !== undefined) digests.set(name, digest);
      }
      return digests;
    });
  }

  insertBlobsIfAbsent(blobs: readonly { digest: string; bytes: Uint8Array }[]): Promise<void> {
    return this.gate.call(() => {
      for (const { digest, bytes } of blobs) this.tables.insertBlobIfAbsent(digest, bytes);
    });
  }

  insertVersions(rows: readonly NewVersionRecord[]): Promise<VersionRecord[]> {
    return this.gate.call(() => rows.map((row) => this.tables.insertVersion(row)));
  }

  markYanked(...args: Parameters<Sync['markYanked']>): Promise<ReturnType<Sync['markYanked']>> {
    return this.gate.call(() => this.tables.markYanked(...args));
  }

  listVersions(...args: Parameters<Sync['listVersions']>): Promise<ReturnType<Sync['listVersions']>> {
    return this.gate.call(() => this.tables.listVersions(...args));
  }

  listVersionsByDigest(
    ...args: Parameters<Sync['listVersionsByDigest']>
  ): Promise<ReturnType<Sync['listVersionsByDigest']>> {
    return this.gate.call(() => this.tables.listVersionsByDigest(...args));
  }

  listManifestNames(...args: Parameters<Sync['listManifestNames']>): Promise<ReturnType<Sync['listManifestNames']>> {
    return this.gate.call(() => this.tables.listManifestNames(...args));
  }

  listAllVersions(...args: Parameters<Sync['listAllVersions']>): Promise<ReturnType<Sync['listAllVersions']>> {
    return this.gate.call(() => this.tables.listAllVersions(...args));
  }

  listAllBlobs(...args: Parameters<Sync['listAllBlobs']>): Promise<ReturnType<Sync['listAllBlobs']>> {
    return this.gate.call(() => this.tables.listAllBlobs(...args));
  }

  insertBundles(...args: Parameters<Sync['insertBundles']>): Promise<ReturnType<Sync['insertBundles']>> {
    return this.gate.call(() => this.tables.insertBundles(...args));
  }

  getBundle(...args: Parameters<Sync['getBundle']>): Promise<ReturnType<Sync['getBundle']>> {
    return this.gate.call(() => this.tables.getBundle(...args));
  }

  listVersionsWithoutBundle(
    ...args: Parameters<Sync['listVersionsWithoutBundle']>
  ): Promise<ReturnType<Sync['listVersionsWithoutBundle']>> {
    return this.gate.call(() => this.tables.listVersionsWithoutBundle(...args));
  }

  listAllBundles(...args: Parameters<Sync['listAllBundles']>): Promise<ReturnType<Sync['listAllBundles']>> {
    return this.gate.call(() => this.tables.listAllBundles(...args));
  }

  activeSigningKid(...args: Parameters<Sync['activeSigningKid']>): Promise<ReturnType<Sync['activeSigningKid']>> {
    return this.gate.call(() => this.tables.activeSigningKid(...args));
  }

  listSigningKeys(...args: Parameters<Sync['listSigningKeys']>): Promise<ReturnType<Sync['listSigningKeys']>> {
    return this.gate.call(() => this.tables.listSigningKeys(...args));
  }

  insertSigningKey(...args: Parameters<Sync['insertSigningKey']>): Promise<ReturnType<Sync['insertSigningKey']>> {
    return this.gate.call(() => this.tables.insertSigningKey(...args));
  }

  retireSigningKey(...args: Parameters<Sync['retireSigningKey']>): Promise<ReturnType<Sync['retireSigningKey']>> {
    return this.gate.call(() => this.tables.retireSigningKey(...args));
  }

  getLogSize(...args: Parameters<Sync['getLogSize']>): Promise<ReturnType<Sync['getLogSize']>> {
    return this.gate.call(() => this.tables.getLogSize(...args));
  }

  readLogNode(...args: Parameters<Sync['readLogNode']>): Promise<ReturnType<Sync['readLogNode']>> {
    return this.gate.call(() => this.tables.readLogNode(...args));
  }

  readLogNodes(...args: Parameters<Sync['readLogNodes']>): Promise<ReturnType<Sync['readLogNodes']>> {
    return this.gate.call(() => this.tables.readLogNodes(...args));
  }

  insertLogEntry(...args: Parameters<Sync['insertLogEntry']>): Promise<ReturnType<Sync['insertLogEntry']>> {
    return this.gate.call(() => this.tables.insertLogEntry(...args));
  }

  insertLogLeaves(...args: Parameters<Sync['insertLogLeaves']>): Promise<ReturnType<Sync['insertLogLeaves']>> {
    return this.gate.call(() => this.tables.insertLogLeaves(...args));
  }

  insertLogNode(...args: Parameters<Sync['insertLogNode']>): Promise<ReturnType<Sync['insertLogNode']>> {
    return this.gate.call(() => this.tables.insertLogNode(...args));
  }

  readLogEntries(...args: Parameters<Sync['readLogEntries']>): Promise<ReturnType<Sync['readLogEntries']>> {
    return this.gate.call(() => this.tables.readLogEntries(...args));
  }

  listAllLogNodes(...args: Parameters<Sync['listAllLogNodes']>): Promise<ReturnType<Sync['listAllLogNodes']>> {
    return this.gate.call(() => this.tables.listAllLogNodes(...args));
  }

  listCheckpoints(...args: Parameters<Sync['listCheckpoints']>): Promise<ReturnType<Sync['listCheckpoints']>> {
    return this.gate.call(() => this.tables.listCheckpoints(...args));
  }

  latestCheckpoint(...args: Parameters<Sync['latestCheckpoint']>): Promise<ReturnType<Sync['latestCheckpoint']>> {
    return this.gate.call(() => this.tables.latestCheckpoint(...args));
  }

  insertCheckpoint(...args: Parameters<Sync['insertCheckpoint']>): Promise<ReturnType<Sync['insertCheckpoint']>> {
    return this.gate.call(() => this.tables.insertCheckpoint(...args));
  }

  saveCosignature(...args: Parameters<Sync['saveCosignature']>): Promise<ReturnType<Sync['saveCosignature']>> {
    return this.gate.call(() => this.tables.saveCosignature(...args));
  }

  listCosignatures(...args: Parameters<Sync['listCosignatures']>): Promise<ReturnType<Sync['listCosignatures']>> {
    return this.gate.call(() => this.tables.listCosignatures(...args));
  }
}

/**
 * The database behind a SQLite store, for maintenance and tests that inspect or damage rows on purpose (fsck,
 * integrity tests) and for benches that measure the file. Nothing in the registry uses it: they see the port.
 */
export function sqliteDatabaseOf(store: unknown): Database.Database {
  if (!(store instanceof SqliteStore)) throw new ToolsealError('BAD_REQUEST', 'not a SQLite store');
  return store.database;
}

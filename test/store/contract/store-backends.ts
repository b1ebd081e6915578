// The stores the contract suite runs against (issue 16 §1): SQLite in memory and on a file, PostgreSQL at
// TOOLSEAL_TEST_DATABASE_URL (a fresh database per test, dropped after) when it is set, and PGlite otherwise (fresh
// copies of one migrated data folder; also a smaller PGlite run beside the server, so both paths stay exercised).

import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Store } from '../../../src/store/index.ts';
import { openPostgresStore, postgresQueryOf } from '../../../src/store/postgres/index.ts';
import { openStore, sqliteDatabaseOf } from '../../../src/store/sqlite/index.ts';
import { makeTempDir } from '../../helpers/registry-helpers.ts';

export type Row = Record<string, unknown>;

/** Where a store lives, for opening more stores on it (another connection, or a racer thread). */
export type StoreLocation = { kind: 'sqlite'; dataDir: string } | { kind: 'postgres'; url: string };

export interface OpenedBackend {
  store: Store;
  /** Raw SQL on the store's database (`$1`-style parameters on both dialects). */
  raw(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Where it is, when another connection can open it (not for :memory: SQLite or PGlite, single-connection). */
  location: StoreLocation | undefined;
  cleanup(): Promise<void>;
}

export interface StoreBackend {
  name: string;
  dialect: 'sqlite' | 'postgres';
  open(): Promise<OpenedBackend>;
}

export const testDatabaseUrl: string | undefined = process.env['TOOLSEAL_TEST_DATABASE_URL'] || undefined;

export async function openStoreAt(location: StoreLocation): Promise<Store> {
  return location.kind === 'sqlite'
    ? openStore({ dataDir: location.dataDir })
    : await openPostgresStore({ url: location.url });
}

/** Raw SQL on any store: `$n` becomes `?` for SQLite (parameters are used in order). */
export function rawSqlOf(store: Store, dialect: 'sqlite' | 'postgres'): OpenedBackend['raw'] {
  if (dialect === 'postgres') return (sql, params = []) => postgresQueryOf(store)(sql, params);
  return async (sql, params = []) => {
    const statement = sqliteDatabaseOf(store).prepare(sql.replace(/\$\d+/g, '?'));
    if (statement.reader) return statement.all(...params) as Row[];
    statement.run(...params);
    return [];
  };
}

function sqliteBackend(name: string, onDisk: boolean): StoreBackend {
  return {
    name,
    dialect: 'sqlite',
    open: async () => {
      const dataDir = onDisk ? join(makeTempDir(), 'data') : ':memory:';
      const store = openStore({ dataDir });
      return {
        store,
        raw: rawSqlOf(store, 'sqlite'),
        location: onDisk ? { kind: 'sqlite', dataDir } : undefined,
        cleanup: () => store.close(),
      };
    },
  };
}

/** A URL naming another database on the same server. */
function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database on the test server, and its dropping. */
export async function createTestDatabase(serverUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `toolseal_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  return {
    url: withDatabase(serverUrl, name),
    drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

function postgresBackend(serverUrl: string): StoreBackend {
  return {
    name: 'postgres',
    dialect: 'postgres',
    open: async () => {
      const database = await createTestDatabase(serverUrl);
      const store = await openPostgresStore({ url: database.url });
      return {
        store,
        raw: rawSqlOf(store, 'postgres'),
        location: { kind: 'postgres', url: database.url },
        cleanup: async () => {
          await store.close();
          await database.drop();
        },
      };
    },
  };
}

let pgliteTemplate: string | undefined;

/** A fresh PGlite data folder: a copy of one migrated once per test file (PGlite's first start runs initdb). */
export async function freshPgliteDir(): Promise<string> {
  if (pgliteTemplate === undefined) {
    const dir = join(makeTempDir('toolseal-pglite-'), 'template');
    await (await openPostgresStore({ url: `pglite:${dir}` })).close();
    pgliteTemplate = dir;
  }
  const copy = join(makeTempDir('toolseal-pglite-'), 'data');
  cpSync(pgliteTemplate, copy, { recursive: true });
  return copy;
}

const pgliteBackend: StoreBackend = {
  name: 'pglite',
  dialect: 'postgres',
  open: async () => {
    const dir = await freshPgliteDir();
    const store = await openPostgresStore({ url: `pglite:${dir}` });
    const cleanup = async (): Promise<void> => {
      await store.close();
      rmSync(dir, { recursive: true, force: true }); // ~40 MB each
    };
    return { store, raw: rawSqlOf(store, 'postgres'), location: undefined, cleanup };
  },
};

/** Every backend the full contract runs against here. */
export const contractBackends: StoreBackend[] = [
  sqliteBackend('sqlite :memory:', false),
  sqliteBackend('sqlite file', true),
  testDatabaseUrl === undefined ? pgliteBackend : postgresBackend(testDatabaseUrl),
];

/** PGlite, for the smaller run beside a real server (undefined when the full contract already runs on it). */
export const extraPgliteBackend: StoreBackend | undefined = testDatabaseUrl === undefined ? undefined : pgliteBackend;

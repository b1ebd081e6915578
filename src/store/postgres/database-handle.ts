// The PostgreSQL store's connections (issue 24 §1), on the event loop: a `pg` Pool for a server (each transaction on
// one pooled session; single statements on any free one), or PGlite in this process (one session: a transaction holds
// it from BEGIN to COMMIT and anyone else's statements wait). Every session runs with synchronous_commit = on, so an
// acknowledged commit is durable (PostgreSQL docs, "synchronous_commit").

import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/node-postgres';
import { migrate as migratePostgres } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';

export type Row = Record<string, unknown>;

/** Where the connections go: a PostgreSQL server, or PGlite in this process (a data folder, or in memory). */
export type ConnectionTarget = { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string | undefined };

/** Statements on one session, or on any free one. */
export interface SqlRunner {
  /** One statement with parameters ($1, $2, …). */
  query(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** Several statements without parameters. */
  exec(sql: string): Promise<void>;
}

export interface DatabaseHandle extends SqlRunner {
  /** Run `work` on one session of its own (nobody else's statements run on it meanwhile), then give it back. */
  withSession<T>(work: (session: SqlRunner) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  target: ConnectionTarget;
  migrationsFolder: string;
  /** Sessions in the pool (a server only; default 10). */
  poolSize?: number;
  /** How long a statement may run before the server cancels it (default 30 s). */
  statementTimeoutMs: number;
}

/** int8 (bigint, count(*)) read as a number: every value the registry stores stays below 2^53. */
const INT8_OID = 20;
/** One key for migrations, so two processes starting at once do not both apply them. */
const MIGRATION_LOCK = "hashtext('toolseal.migrate')";

/** Connect (or start PGlite) and apply the committed migrations. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  return options.target.kind === 'postgres'
    ? openServer(options.target.url, options)
    : openPglite(options.target.dataDir, options.migrationsFolder);
}

async function openServer(url: string, options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const int8 = (value: string): number => Number(value);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    application_name: 'toolseal',
    statement_timeout: options.statementTimeoutMs,
    options: '-c synchronous_commit=on',
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? int8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle session that drops is removed by the pool; the next statement gets a fresh one.
  pool.on('error', () => {});
  const runnerOf = (client: pg.Pool | pg.PoolClient): SqlRunner => ({
    query: async (sql, params = []) => (await client.query(sql, params.map(asBuffer))).rows as Row[],
    exec: async (sql) => {
      await client.query(sql);
    },
  });
  const migrator = await pool.connect();
  try {
    await migrator.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    try {
      await migratePostgres(drizzlePostgres({ client: migrator }), {
        migrationsFolder: options.migrationsFolder,
        migrationsSchema: 'public',
      });
    } finally {
      await migrator.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
    }
    migrator.release();
  } catch (error) {
    migrator.release(true);
    await pool.end().catch(() => {});
    throw error;
  }
  return {
    ...runnerOf(pool),
    async withSession(work) {
      const client = await pool.connect();
      // A session the server ends while it is checked out fails the statement in flight; the error event it also
      // emits must not become an uncaught exception.
      const ignore = (): void => {};
      client.on('error', ignore);
      let broken = false;
      try {
        return await work(runnerOf(client));
      } catch (error) {
        // A session whose transaction could not be ended cleanly is not given back to the pool.
        broken = isConnectionError(error);
        throw error;
      } finally {
        client.off('error', ignore);
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}

async function openPglite(dataDir: string | undefined, migrationsFolder: string): Promise<DatabaseHandle> {
  const db = await PGlite.create({ ...(dataDir === undefined ? {} : { dataDir }), parsers: { [INT8_OID]: Number } });
  await db.exec("SET synchronous_commit = on; SET application_name = 'toolseal'");
  await migratePglite(drizzlePglite({ client: db }), { migrationsFolder, migrationsSchema: 'public' });
  const session: SqlRunner = {
    query: async (sql, params = []) => (await db.query<Row>(sql, [...params])).rows.map(withBuffers),
    exec: async (sql) => {
      await db.exec(sql);
    },
  };
  const turn = new SessionTurn();
  return {
    query: (sql, params) => turn.run(() => session.query(sql, params)),
    exec: (sql) => turn.run(() => session.exec(sql)),
    withSession: (work) => turn.run(() => work(session)),
    close: () => turn.run(() => db.close()),
  };
}

/** One user of PGlite's single session at a time, in arrival order. */
class SessionTurn {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work);
    this.tail = result.catch(() => {});
    return result;
  }
}

/** A bound Uint8Array as a Buffer view (node-postgres sends Buffers as bytea). */
function asBuffer(value: unknown): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value)
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    : value;
}

/** PGlite answers bytea as Uint8Array: give the store Buffers, as node-postgres and better-sqlite3 do. */
function withBuffers(row: Row): Row {
  for (const [key, value] of Object.entries(row)) {
    if (value instanceof Uint8Array && !Buffer.isBuffer(value))
      row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
  return row;
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (code.startsWith('08') || code.startsWith('57P'))) return true;
  return error instanceof Error && /Connection terminated|not queryable|connection error/i.test(error.message);
}

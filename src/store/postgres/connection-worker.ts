// The connection thread of a PostgreSQL store (issue 16 §1): ONE connection (a `pg` Client, or a PGlite instance),
// so a transaction is BEGIN … COMMIT on one session. Answers each request of sync-bridge.ts, then wakes the blocked
// caller through the shared signal. The session runs with synchronous_commit = on (an acknowledged commit is durable).

import { workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/node-postgres';
import { migrate as migratePostgres } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import type {
  ConnectionReply,
  ConnectionRequest,
  ConnectionTarget,
  ConnectionWorkerData,
  PostedDatabaseError,
} from './connection-protocol.ts';

/** int8 (bigint, count(*)) read as a number: every value the registry stores stays below 2^53. */
const INT8_OID = 20;
/** One key for migrations, so two processes starting at once do not both apply them. */
const MIGRATION_LOCK = "hashtext('toolseal.migrate')";
/** What every session runs first: durable commits, and a name in pg_stat_activity. */
const SESSION_SETUP = "SET synchronous_commit = on; SET application_name = 'toolseal'";

interface Session {
  query(sql: string, params: unknown[]): Promise<Record<string, unknown>[]>;
  exec(sql: string): Promise<void>;
  migrate(migrationsFolder: string): Promise<void>;
  close(): Promise<void>;
}

async function openPostgres(url: string): Promise<Session> {
  const int8 = (value: string): number => Number(value);
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? int8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A lost connection fails the query in flight (and every later one) with its error: nothing here to crash.
  client.on('error', () => {});
  await client.connect();
  await client.query(SESSION_SETUP);
  return {
    query: async (sql, params) => (await client.query(sql, params.map(asBuffer))).rows,
    exec: async (sql) => {
      await client.query(sql);
    },
    migrate: async (migrationsFolder) => {
      await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
      try {
        await migratePostgres(drizzlePostgres({ client }), { migrationsFolder, migrationsSchema: 'public' });
      } finally {
        await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
      }
    },
    close: () => client.end(),
  };
}

async function openPglite(dataDir: string | undefined): Promise<Session> {
  const db = await PGlite.create({ ...(dataDir === undefined ? {} : { dataDir }), parsers: { [INT8_OID]: Number } });
  await db.exec(SESSION_SETUP);
  return {
    query: async (sql, params) => (await db.query<Record<string, unknown>>(sql, params)).rows,
    exec: async (sql) => {
      await db.exec(sql);
    },
    migrate: async (migrationsFolder) => {
      await migratePglite(drizzlePglite({ client: db }), { migrationsFolder, migrationsSchema: 'public' });
    },
    close: () => db.close(),
  };
}

function openSession(target: ConnectionTarget): Promise<Session> {
  return target.kind === 'postgres' ? openPostgres(target.url) : openPglite(target.dataDir);
}

/** A bound Uint8Array as a Buffer view (node-postgres sends Buffers as bytea). */
function asBuffer(value: unknown): unknown {
  return value instanceof Uint8Array && !Buffer.isBuffer(value)
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    : value;
}

function toPostedError(error: unknown): PostedDatabaseError {
  const fields = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return {
    code: typeof fields.code === 'string' ? fields.code : undefined,
    message: error instanceof Error ? error.message : String(error),
    constraint: typeof fields.constraint === 'string' ? fields.constraint : undefined,
  };
}

async function answer(session: Session | undefined, request: ConnectionRequest): Promise<Record<string, unknown>[]> {
  if (request.op === 'open') throw new Error('the connection is already open');
  if (session === undefined) throw Object.assign(new Error('the connection is not open'), { code: '08003' });
  if (request.op === 'query') return session.query(request.sql, request.params);
  if (request.op === 'exec') await session.exec(request.sql);
  else await session.close();
  return [];
}

function serve(): void {
  const { signal, port } = workerData as ConnectionWorkerData;
  let session: Session | undefined;
  let queue = Promise.resolve();
  const reply = (message: ConnectionReply): void => {
    port.postMessage(message);
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
  };
  port.on('message', (request: ConnectionRequest) => {
    // One request at a time, in order (the caller blocks on each one anyway).
    queue = queue.then(async () => {
      try {
        if (request.op === 'open') {
          session = await openSession(request.target);
          await session.migrate(request.migrationsFolder);
          reply({ id: request.id, rows: [] });
        } else reply({ id: request.id, rows: await answer(session, request) });
      } catch (error) {
        reply({ id: request.id, error: toPostedError(error) });
      }
    });
  });
}

serve();

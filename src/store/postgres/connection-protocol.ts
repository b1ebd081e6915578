// The messages between a PostgreSQL store and its connection thread (sync-bridge.ts ↔ connection-worker.ts): one
// request, one reply, each a single round trip to the database (issue 16 §1).

import type { MessagePort } from 'node:worker_threads';

/** Where the connection goes: a PostgreSQL server, or PGlite in the worker (a data folder, or in memory). */
export type ConnectionTarget = { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string | undefined };

/** What the worker gets as workerData (the port is also in the transfer list). */
export interface ConnectionWorkerData {
  signal: Int32Array;
  port: MessagePort;
}

export type ConnectionRequest =
  | { id: number; op: 'open'; target: ConnectionTarget; migrationsFolder: string }
  /** One statement with parameters ($1, $2, …). */
  | { id: number; op: 'query'; sql: string; params: unknown[] }
  /** Several statements without parameters (BEGIN …; SELECT pg_advisory_xact_lock(…)). */
  | { id: number; op: 'exec'; sql: string }
  | { id: number; op: 'close' };

/** A database error as posted: SQLSTATE (or a Node error code), message, and the constraint it names, if any. */
export interface PostedDatabaseError {
  code: string | undefined;
  message: string;
  constraint: string | undefined;
}

export type ConnectionReply = { id: number } & ({ rows: Record<string, unknown>[] } | { error: PostedDatabaseError });

// The child process of pglite-socket-server.ts: PGlite in memory behind @electric-sql/pglite-socket's connection
// handler on 127.0.0.1, with a query queue of its own; prints `listening postgres://…` and serves until SIGTERM.
// Why not the package's PGLiteSocketServer: its queue (0.2.17) keeps a transaction block exclusive but otherwise
// interleaves the connections per protocol message, so one connection's Parse can land between another's Parse and
// Bind (node-postgres sends every parameterised query as Parse/Bind/Describe/Execute/Sync). Seen with three registry
// processes: "malformed array literal", `portal "" does not exist`. This queue gives a connection PGlite from its
// first message until the backend is idle again after a Sync or a simple Query (no transaction block open), the
// exclusivity a PostgreSQL session has. PGlite is one backend: session-level advisory locks are shared by all.

import { createServer } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketHandler, type PGLiteSocketHandlerOptions } from '@electric-sql/pglite-socket';

interface Queued {
  handlerId: number;
  message: Uint8Array;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (error: unknown) => void;
}

const SIMPLE_QUERY = 0x51; // 'Q'
const SYNC = 0x53; // 'S'
const TERMINATE = 0x58; // 'X'
const PROTOCOL_3 = 196_608;

/** True for a frontend message after which the backend answers ReadyForQuery (or the session ends). */
function endsCycle(message: Uint8Array): boolean {
  const type = message[0];
  if (type === SIMPLE_QUERY || type === SYNC || type === TERMINATE) return true;
  // The startup packet has no type byte: length, then the protocol version.
  return message.length >= 8 && new DataView(message.buffer, message.byteOffset, 8).getInt32(4) === PROTOCOL_3;
}

/** One connection at a time, from its first message until the backend is idle after a cycle (see the header). */
class SessionQueue {
  private readonly queued: Queued[] = [];
  private owner: number | undefined;
  private pumping = false;

  constructor(private readonly db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queued.push({ handlerId, message, onData, resolve, reject });
      void this.pump();
    });
  }

  getQueueLength(): number {
    return this.queued.length;
  }

  clearQueueForHandler(handlerId: number): void {
    for (let i = this.queued.length - 1; i >= 0; i--) {
      if (this.queued[i]!.handlerId !== handlerId) continue;
      this.queued.splice(i, 1)[0]!.reject(new Error('Handler disconnected'));
    }
  }

  /** A connection closed: roll back the transaction block it left open, and let the others in. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) return;
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.owner = undefined;
    await this.pump();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (;;) {
        const index = this.owner === undefined ? 0 : this.queued.findIndex((item) => item.handlerId === this.owner);
        if (index < 0 || index >= this.queued.length) return; // the owner has not sent its next message yet
        const item = this.queued.splice(index, 1)[0]!;
        this.owner = item.handlerId;
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
        } catch (error) {
          this.owner = undefined;
          item.reject(error);
          continue;
        }
        if (endsCycle(item.message) && !this.db.isInTransaction()) this.owner = undefined;
        item.resolve(bytes);
      }
    } finally {
      this.pumping = false;
    }
  }
}

const db = await PGlite.create();
const queue = new SessionQueue(db);
// The handler's option is typed as the package's own queue class (private fields); this one has the same methods.
const queryQueue = queue as unknown as PGLiteSocketHandlerOptions['queryQueue'];
const server = createServer((socket) => {
  void new PGLiteSocketHandler({ queryQueue, closeOnDetach: true }).attach(socket);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = server.address();
if (address === null || typeof address === 'string') throw new Error('no TCP address');
process.stdout.write(`listening postgres://postgres@127.0.0.1:${address.port}/postgres\n`);
process.once('SIGTERM', () => {
  server.close();
  void db.close().finally(() => process.exit(0));
});

// One better-sqlite3 connection shared by async callers (issue 24 §1): a transaction holds the connection from BEGIN to
// COMMIT while its work awaits; calls made inside it (its async context, AsyncLocalStorage) run at once, anyone
// else's wait until it ends, so nothing outside a transaction sees or joins its uncommitted writes (SQLite
// "Transaction", BEGIN IMMEDIATE / DEFERRED; nested transactions are SAVEPOINTs).

import { AsyncLocalStorage } from 'node:async_hooks';
import type Database from 'better-sqlite3';

export type TransactionMode = 'IMMEDIATE' | 'DEFERRED';

export class ConnectionGate {
  private readonly context = new AsyncLocalStorage<symbol>();
  /** The open transaction's token while one is open. */
  private holder: symbol | undefined;
  private locked = false;
  private readonly waiting: (() => void)[] = [];
  private savepoints = 0;

  constructor(
    private readonly client: Database.Database,
    /** What a failure becomes (STORAGE_FULL, INTEGRITY_ERROR, or itself). */
    private readonly translate: (error: unknown) => unknown,
  ) {}

  /** Run one synchronous call: at once when no transaction is open or the caller is inside it, else after it ends. */
  call<T>(work: () => T): Promise<T> {
    if (!this.locked || this.isInside()) return this.settle(work);
    return this.acquire().then(() => {
      try {
        return this.settle(work);
      } finally {
        this.release();
      }
    });
  }

  /** Run `work` in one transaction (a SAVEPOINT inside another); a throw rolls it back and is rethrown translated. */
  async transaction<T>(mode: TransactionMode, work: () => Promise<T>): Promise<T> {
    if (this.isInside()) return this.savepoint(work);
    await this.acquire();
    const token = Symbol('transaction');
    try {
      this.client.exec(`BEGIN ${mode}`);
      this.holder = token;
      const result = await this.context.run(token, work);
      this.client.exec('COMMIT');
      return result;
    } catch (error) {
      if (this.client.open && this.client.inTransaction) this.client.exec('ROLLBACK');
      throw this.translate(error);
    } finally {
      this.holder = undefined;
      this.release();
    }
  }

  private async savepoint<T>(work: () => Promise<T>): Promise<T> {
    const name = `toolseal_${++this.savepoints}`;
    this.client.exec(`SAVEPOINT ${name}`);
    try {
      const result = await work();
      this.client.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      if (this.client.inTransaction) this.client.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw this.translate(error);
    } finally {
      this.savepoints--;
    }
  }

  /** True when the caller runs inside the open transaction. */
  isInside(): boolean {
    return this.holder !== undefined && this.context.getStore() === this.holder;
  }

  private settle<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(this.translate(error));
    }
  }

  private acquire(): Promise<void> {
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next === undefined) this.locked = false;
    else next();
  }
}

// The HTTP benches' load generator client: scripts/bench-http-load.ts (autocannon) forked once, one job at a time over
// IPC, each bounded by its duration plus a grace period. Shared by the http, mirror and postgres sections.

import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadJob, LoadReply, LoadResult } from './bench-http-load.ts';

/** The forked load generator; one job at a time, each bounded by its duration plus a grace period. */
export class LoadClient {
  private readonly child: ChildProcess;
  private nextId = 0;

  constructor() {
    this.child = fork(fileURLToPath(new URL('./bench-http-load.ts', import.meta.url)), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
  }

  run(job: LoadJob): Promise<LoadResult> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          cleanup();
          reject(new Error(`load generator did not answer within ${job.seconds + 30} s`));
        },
        (job.seconds + 30) * 1000,
      );
      const onMessage = (reply: LoadReply): void => {
        if (reply.id !== id) return;
        cleanup();
        if ('error' in reply) reject(new Error(`load generator: ${reply.error}`));
        else resolve(reply.result);
      };
      const onExit = (code: number | null): void => {
        cleanup();
        reject(new Error(`load generator exited (${code})`));
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
      };
      this.child.on('message', onMessage);
      this.child.on('exit', onExit);
      this.child.send({ id, job });
    });
  }

  close(): void {
    if (this.child.connected) this.child.disconnect();
    if (this.child.exitCode === null) this.child.kill();
  }
}

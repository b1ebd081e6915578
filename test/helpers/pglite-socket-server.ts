// A PostgreSQL wire-protocol server for tests on a machine without one (issue 16 §2's test): PGlite (in memory) behind
// @electric-sql/pglite-socket on 127.0.0.1, in a child process of its own (pglite-socket-child.ts, which says why it
// has its own query queue), so the test's timing is not the WASM's. One database: PGlite is one backend.

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childEnv, repoRoot } from './registry-helpers.ts';

const LISTENING = /^listening (postgres:\/\/\S+)$/m;

export interface PgliteSocketServer {
  /** postgres://postgres@127.0.0.1:PORT/postgres (one database: PGlite has one backend). */
  url: string;
  stop(): Promise<void>;
}

/** Spawn the server (a fresh in-memory database) and resolve once it listens. */
export function startPgliteSocketServer(timeoutMs = 30_000): Promise<PgliteSocketServer> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('./pglite-socket-child.ts', import.meta.url))],
    {
      cwd: repoRoot,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the PGlite socket server did not start:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: string): void => {
      output += chunk;
      const match = LISTENING.exec(output);
      if (!match) return;
      clearTimeout(timer);
      resolve({
        url: match[1]!,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the PGlite socket server exited:\n${output}`));
    });
  });
}

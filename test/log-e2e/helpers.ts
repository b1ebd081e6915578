// Helpers for the end-to-end log suites: a registry on a temporary folder served on 127.0.0.1:0, manifests, raw-SQL tampering.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Registry } from '../../src/registry/index.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import type { PublisherRecord } from '../../src/store/index.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';

export const repoRoot: string = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

export const NAMESPACE = 'io.github.audit-test';

export interface TestRegistry {
  dir: string;
  registry: Registry;
  server: RunningRegistryServer;
  url: string;
  token: string;
  publisher: PublisherRecord;
  close(): Promise<void>;
}

/** A fresh registry (SQLite file under a temporary folder), served on 127.0.0.1 on a free port. */
export async function startTestRegistry(): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'toolseal-log-e2e-'));
  const running = await startRegistryServer({
    dataDir: join(dir, 'data'),
    keysDir: join(dir, 'keys'),
    origin: 'http://127.0.0.1',
    port: 0,
    app: { onUnexpectedError: () => {} },
  });
  const { publisher, token } = await running.registry.createPublisher(NAMESPACE);
  return {
    dir,
    registry: running.registry,
    server: running,
    url: running.url,
    token,
    publisher,
    async close() {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A small valid manifest; `name` is the part after the namespace. */
export function manifestBytes(name: string, version = '1.0.0', description = `Tool ${name}`): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({
      name: `${NAMESPACE}/${name}`,
      version,
      description,
      tools: [
        {
          name: 'run',
          description: `Runs ${name}`,
          inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
        },
      ],
    }),
  );
}

/** POST /v1/manifests; returns status and parsed body. */
export async function publishOverHttp(
  t: TestRegistry,
  bytes: Uint8Array,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${t.url}/v1/manifests`, {
    method: 'POST',
    body: bytes,
    headers: { Authorization: `Bearer ${t.token}`, 'Content-Type': 'application/json' },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Publish many manifests in-process (concurrently: the registry batches their checkpoints). */
export async function publishMany(t: TestRegistry, prefix: string, count: number): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, (_, i) => t.registry.publish(manifestBytes(`${prefix}-${i}`), t.publisher)),
  );
}

/** Raw SQL on the registry's database (better-sqlite3), bypassing the store. */
export function sql(t: TestRegistry): ReturnType<typeof sqliteDatabaseOf> {
  return sqliteDatabaseOf(t.registry.store);
}

export function dropTriggers(t: TestRegistry, ...names: string[]): void {
  for (const name of names) sql(t).exec(`DROP TRIGGER IF EXISTS ${name}`);
}

/**
 * Rewrite history the way a compromised operator could: delete every log entry, node and checkpoint
 * beyond size `k` (and the versions whose attestations were there), so the registry regrows a different
 * tree from size k on. The caller then publishes new manifests.
 */
export function truncateLog(t: TestRegistry, k: number): void {
  dropTriggers(
    t,
    'log_entries_no_delete',
    'log_nodes_no_delete',
    'log_checkpoints_no_delete',
    'manifest_versions_no_delete',
    'version_bundles_no_delete',
  );
  const db = sql(t);
  db.prepare(
    'DELETE FROM version_bundles WHERE log_index >= ? OR version_id IN (SELECT id FROM manifest_versions WHERE log_index >= ?)',
  ).run(k, k);
  db.prepare('DELETE FROM log_entries WHERE idx >= ?').run(k);
  db.prepare('DELETE FROM log_nodes WHERE (idx + 1) * (1 << level) > ?').run(k);
  db.prepare('DELETE FROM log_checkpoints WHERE size > ?').run(k);
  db.prepare('DELETE FROM manifest_versions WHERE log_index >= ?').run(k);
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `node bin/toolseal.js ...args` asynchronously (the in-process server keeps serving meanwhile). */
export function runCli(args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'bin', 'toolseal.js'), ...args],
      { cwd: repoRoot, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

// Test helpers for the registry, HTTP, store, attestation and end-to-end suites: temp dirs, a registry with an
// app over it (every answer checked against the OpenAPI document), manifest builders, database snapshots,
// problem+json reading, and CLI / server child processes.

import { mountWebRoutes } from '../../src/web/index.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { ErrorCode } from '../../src/core/errors.ts';
import { createApp, type AppDeps } from '../../src/http/app.ts';
import type { PipelineLimits } from '../../src/pipeline/index.ts';
import type { PipelineRunner } from '../../src/registry/pipeline-runner.ts';
import type { PublishCommitter, PublisherRecord, Registry } from '../../src/registry/index.ts';
import { openRegistryAt } from '../../src/server/index.ts';
import type { Store } from '../../src/store/index.ts';
import { httpStatusByCode } from '../../src/http/problem.ts';
import { checkAnswersOf } from './openapi-conformance.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';

export const repoRoot: string = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');
export const binPath: string = join(repoRoot, 'bin', 'toolseal.js');

// ── temp dirs ─────────────────────────────────────────────────────────────

const tempDirs: string[] = [];

/** A fresh folder under the OS temp dir; removed by cleanupTempDirs(). */
export function makeTempDir(prefix = 'toolseal-test-'): string {
  const dir = mkdtempSync(join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function cleanupTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

// ── bytes ─────────────────────────────────────────────────────────────────

const encoder = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function digestOfBytes(bytes: Uint8Array): `sha256:${string}` {
  return `sha256:${sha256Hex(bytes)}`;
}

/** RFC 9530 Repr-Digest value for sha-256. */
export function reprDigestOf(bytes: Uint8Array): string {
  return `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`;
}

export async function bodyBytes(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

// ── manifests ─────────────────────────────────────────────────────────────

export interface ManifestOptions {
  name?: string;
  version?: string;
  description?: string;
  tools?: unknown[];
}

export function sampleTool(name = 'lookup', description = 'Look something up.'): Record<string, unknown> {
  return {
    name,
    description,
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string', maxLength: 200 } },
      required: ['query'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true },
  };
}

export function makeManifest(options: ManifestOptions = {}): Record<string, unknown> {
  const manifest: Record<string, unknown> = {
    name: options.name ?? 'io.github.acme/widgets',
    version: options.version ?? '1.0.0',
    tools: options.tools ?? [sampleTool()],
  };
  if (options.description !== undefined) manifest['description'] = options.description;
  return manifest;
}

/** JSON.stringify of a manifest as bytes (pretty-printed with `space`). */
/** Rewrite a stored blob behind the registry's back (the immutability trigger has to go first). */
export function corruptBlob(env: TestEnv, digest: string, bytes: Buffer, size = bytes.byteLength): void {
  expect(() =>
    sqliteDatabaseOf(env.store).prepare('UPDATE blobs SET bytes = ? WHERE digest = ?').run(bytes, digest),
  ).toThrow(/immutable/);
  sqliteDatabaseOf(env.store).exec('DROP TRIGGER blobs_no_update');
  sqliteDatabaseOf(env.store).prepare('UPDATE blobs SET bytes = ?, size = ? WHERE digest = ?').run(bytes, size, digest);
}

export function manifestBytes(options: ManifestOptions = {}, space?: number): Uint8Array {
  return utf8(JSON.stringify(makeManifest(options), null, space));
}

// ── a registry with an app ────────────────────────────────────────────────

export interface TestEnvOptions {
  /** Store the database in a temp folder instead of `:memory:`. */
  onDisk?: boolean;
  clock?: () => Date;
  limits?: Partial<PipelineLimits>;
  app?: Omit<AppDeps, 'registry'>;
  /** Namespace of the first publisher (default io.github.acme). */
  namespace?: string;
  origin?: string;
  /** Where the registry runs the pipeline (default inline). */
  pipeline?: PipelineRunner;
  /** Where the registry commits publishes (default on this thread), built from the env's folders. */
  committer?: (where: { dataDir: string; keysDir: string; origin: string }) => PublishCommitter;
  /** How long approval requests stay open (the registry's default otherwise). */
  approvalTtlSeconds?: number;
  maxPendingWrites?: number;
}

export interface TestEnv {
  root: string;
  dataDir: string;
  keysDir: string;
  store: Store;
  registry: Registry;
  app: ReturnType<typeof createApp>;
  publisher: PublisherRecord;
  token: string;
  unexpectedErrors: unknown[];
  /** Another app over the same registry (e.g. with `cacheBytes: 0`). */
  newApp(deps?: Omit<AppDeps, 'registry'>): ReturnType<typeof createApp>;
  addPublisher(namespace: string): Promise<string>;
  close(): Promise<void>;
  /** Closes the committer too (the env's own one, when `committer` was given), then the store. */
  closeAll(): Promise<void>;
}

export async function createTestEnv(options: TestEnvOptions = {}): Promise<TestEnv> {
  const root = makeTempDir();
  const dataDir = options.onDisk ? join(root, 'data') : ':memory:';
  const keysDir = join(root, 'keys');
  const origin = options.origin ?? 'http://127.0.0.1:8787';
  const committer = options.committer?.({ dataDir, keysDir, origin });
  const { store, registry, close } = await openRegistryAt({
    dataDir,
    keysDir,
    origin,
    ...(committer ? { committer } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.pipeline ? { pipeline: options.pipeline } : {}),
    ...(options.approvalTtlSeconds ? { approvalTtlSeconds: options.approvalTtlSeconds } : {}),
    ...(options.maxPendingWrites ? { maxPendingWrites: options.maxPendingWrites } : {}),
  });
  const unexpectedErrors: unknown[] = [];
  // Every answer a test receives through `app.request` is checked against the OpenAPI document (issue 29 item 4).
  const newApp = (deps: Omit<AppDeps, 'registry'> = {}): ReturnType<typeof createApp> =>
    checkAnswersOf(
      createApp({
        onUnexpectedError: (error) => unexpectedErrors.push(error),
        mountPages: mountWebRoutes,
        ...options.app,
        ...deps,
        registry,
      }),
      origin,
    );
  const { publisher, token } = await registry.createPublisher(options.namespace ?? 'io.github.acme');
  return {
    root,
    dataDir,
    keysDir,
    store,
    registry,
    app: newApp(),
    publisher,
    token,
    unexpectedErrors,
    newApp,
    addPublisher: async (namespace) => (await registry.createPublisher(namespace)).token,
    close: () => store.close(),
    closeAll: close,
  };
}

type RequestApp = { request: (input: string, init?: RequestInit) => Response | Promise<Response> };

export function postManifest(
  app: RequestApp,
  body: Uint8Array | string,
  token?: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return Promise.resolve(
    app.request('/v1/manifests', {
      method: 'POST',
      body: typeof body === 'string' ? body : (body as Uint8Array<ArrayBuffer>),
      headers: {
        'Content-Type': 'application/json',
        ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
        ...headers,
      },
    }),
  );
}

export function postYank(app: RequestApp, path: string, body: unknown, token?: string): Promise<Response> {
  return Promise.resolve(
    app.request(`${path}/yank`, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: {
        'Content-Type': 'application/json',
        ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
      },
    }),
  );
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  pointer?: string;
}

/** Read an RFC 9457 problem, asserting its media type, its status, and that its code maps to that status. */
export async function expectProblem(response: Response, code: ErrorCode, pointer?: string): Promise<Problem> {
  const text = await response.text();
  expect(response.headers.get('Content-Type'), text).toBe('application/problem+json');
  const body = JSON.parse(text) as Problem;
  expect(body.code, text).toBe(code);
  expect(response.status, text).toBe(httpStatusByCode[code]);
  expect(body.status).toBe(response.status);
  expect(body.title).toBe(code);
  expect(body.type).toBe(`https://toolseal.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`);
  expect(typeof body.detail).toBe('string');
  if (pointer !== undefined) expect(body.pointer, text).toBe(pointer);
  return body;
}

// ── database snapshots ────────────────────────────────────────────────────

/** Every table of the registry's own data (the PostgreSQL work queue, log_jobs, is not one). */
export const REGISTRY_TABLES = [
  'publishers',
  'blobs',
  'manifest_versions',
  'signing_keys',
  'log_entries',
  'log_nodes',
  'log_checkpoints',
  'principals',
  'approvals',
] as const;

export interface DbSnapshot {
  counts: Record<string, number>;
  /** sha256 over every row of every table: equal snapshots mean nothing changed. */
  fingerprint: string;
}

export function snapshotDb(store: Store): DbSnapshot {
  const counts: Record<string, number> = {};
  const hash = createHash('sha256');
  for (const table of REGISTRY_TABLES) {
    const rows = sqliteDatabaseOf(store).prepare(`SELECT * FROM ${table} ORDER BY rowid`).all() as Record<
      string,
      unknown
    >[];
    counts[table] = rows.length;
    hash.update(table);
    for (const row of rows) {
      hash.update(
        JSON.stringify(row, (_key, value: unknown) =>
          Buffer.isBuffer(value) ? `hex:${value.toString('hex')}` : value,
        ),
      );
    }
  }
  return { counts, fingerprint: hash.digest('hex') };
}

/** Read every file in a folder (the SQLite database and its WAL) as one buffer, to search for secrets. */
export function readAllFiles(dir: string): Buffer {
  return Buffer.concat(
    readdirSync(dir)
      .map((name) => join(dir, name))
      .filter((path) => statSync(path).isFile())
      .map((path) => readFileSync(path)),
  );
}

// ── child processes ───────────────────────────────────────────────────────

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment for child processes: no TOOLSEAL_* settings leak in from the developer's shell. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith('TOOLSEAL_') && !key.startsWith('VITEST')) env[key] = value;
  return { ...env, NODE_NO_WARNINGS: '1', ...extra };
}

/** Run `node bin/toolseal.js ARGS` to completion. The working directory defaults to a fresh temp folder. */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const cwd = options.cwd ?? makeTempDir('toolseal-cwd-');
    const child = spawn(process.execPath, [binPath, ...args], {
      cwd,
      // The offline cache in the run's folder, never the developer's ~/.cache (env may name another).
      env: childEnv({ XDG_CACHE_HOME: join(cwd, '.cache-home'), ...options.env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything the server printed on stdout so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when stdout contains a line matching `pattern`. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Resolves with the exit code and signal once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running (for afterAll). */
  kill(): void;
}

const LISTENING = /^toolseal registry listening on (http:\/\/127\.0\.0\.1:\d+)$/;

/** Spawn `node bin/toolseal.js serve ARGS` and resolve once its first stdout line gives the listening URL. */
export function startServerProcess(
  args: string[],
  options: { cwd?: string; timeoutMs?: number } = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [binPath, 'serve', ...args], {
    cwd: options.cwd ?? makeTempDir('toolseal-cwd-'),
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    for (const waiter of waiters.slice()) {
      if (waiter.pattern.test(stdout)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const waitForOutput = (pattern: RegExp, timeoutMs = 20_000): Promise<void> =>
    new Promise((resolve, reject) => {
      if (pattern.test(stdout)) return resolve();
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting for ${pattern} in server output:\n${stdout}\n${stderr}`)),
        timeoutMs,
      );
      waiters.push({
        pattern,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`server exited (${code ?? signal}) before printing ${pattern}:\n${stdout}\n${stderr}`));
      });
    });
  return waitForOutput(/\n/, options.timeoutMs).then(() => {
    const firstLine = stdout.slice(0, stdout.indexOf('\n'));
    const match = LISTENING.exec(firstLine);
    if (!match) {
      child.kill('SIGKILL');
      throw new Error(`unexpected first line from the server: ${JSON.stringify(firstLine)}`);
    }
    return {
      child,
      url: match[1]!,
      stdout: () => stdout,
      stderr: () => stderr,
      waitForOutput,
      exited,
      kill: () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      },
    };
  });
}

// The MCP conformance suite (@modelcontextprotocol/conformance, `server` mode, every scenario: `--suite all`) run on
// Node ≥ 22 against an SDK server that implements the scenarios, first directly, then through `toolseal guard
// --upstream` (the CLI as a child process, a real in-process registry holding the server's captured, signed tools).
// Every check that passes directly passes through guard, except json-schema-2020-12's `$defs` check: guard presents
// the signed tools, whose schemas the publish pipeline inlined (docs/hosts.md, "MCP conformance").

import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureManifest } from '../../src/build/index.ts';
import { type ConformanceServer, startConformanceServer } from '../fixtures/conformance-server.ts';
import { jsonLines, repoRoot, startTestRegistry, toolsealBin, type TestRegistry } from '../fixtures/guard-env.ts';
import { FIXTURE_NAMESPACE } from '../fixtures/mcp-tools.ts';
import { waitFor } from '../guard/guard-helpers.ts';
import { resolveNode22Binary } from '../helpers/node22.ts';

const conformanceCli = join(
  createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json'),
  '..',
  'dist',
  'index.js',
);
const MANIFEST = `${FIXTURE_NAMESPACE}/conformance@1.0.0`;
/** The one check guard fails on purpose: it presents the signed schema, `$ref`s inlined and `$defs` gone. */
const DEFS_CHECK = 'json-schema-2020-12/json-schema-2020-12-$defs';

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

interface SuiteRun {
  code: number | null;
  output: string;
  /** Every check by scenario (from each scenario's checks.json). */
  checks: Map<string, Check[]>;
}

let node22: string;
let registry: TestRegistry;
let server: ConformanceServer;
let guard: { child: ChildProcessWithoutNullStreams; stderr: () => string; url: string } | undefined;
const scratch: string[] = [];

function runNode22(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      node22,
      [conformanceCli, ...args],
      { cwd: repoRoot, timeout: 300_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

/** The suite's server scenarios, as `list --server` prints them (`  - NAME [versions]`). */
async function listServerScenarios(): Promise<string[]> {
  const { code, output } = await runNode22(['list', '--server']);
  expect(code).toBe(0);
  return [...output.matchAll(/^\s+- ([a-z0-9-]+)/gm)].map((match) => match[1] as string);
}

/** Run every server scenario against `url`; results are read from the per-scenario checks.json files. */
async function runSuite(url: string, scenarios: readonly string[]): Promise<SuiteRun> {
  const outputDir = await mkdtemp(join(tmpdir(), 'toolseal-conformance-'));
  scratch.push(outputDir);
  const { code, output } = await runNode22(['server', '--suite', 'all', '--url', url, '-o', outputDir]);
  const checks = new Map<string, Check[]>();
  for (const folder of await readdir(outputDir)) {
    // server-<scenario>-<ISO timestamp with - for :>
    const match = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(folder);
    if (match === null || !scenarios.includes(match[1] as string)) continue;
    const text = await readFile(join(outputDir, folder, 'checks.json'), 'utf8');
    checks.set(match[1] as string, JSON.parse(text) as Check[]);
  }
  return { code, output, checks };
}

/** `scenario/check-id` of every check with `status` (sorted, once each). */
function keysWith(run: SuiteRun, status: string): string[] {
  const keys = new Set<string>();
  for (const [scenario, checks] of run.checks)
    for (const check of checks) if (check.status === status) keys.add(`${scenario}/${check.id}`);
  return [...keys].sort();
}

/** `scenario/check-id` of every check that passed (SUCCESS, and no FAILURE under the same id). */
function passing(run: SuiteRun): Set<string> {
  const failed = new Set(keysWith(run, 'FAILURE'));
  return new Set(keysWith(run, 'SUCCESS').filter((key) => !failed.has(key)));
}

function statusOf(run: SuiteRun, key: string): string[] {
  const [scenario, id] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
  return (run.checks.get(scenario) ?? []).filter((check) => check.id === id).map((check) => check.status);
}

async function startGuard(upstream: string): Promise<NonNullable<typeof guard>> {
  const child = spawn(
    process.execPath,
    [
      toolsealBin,
      'guard',
      '--manifest',
      MANIFEST,
      '--registry',
      registry.url,
      '--upstream',
      upstream,
      '--listen',
      '127.0.0.1:0',
    ],
    { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_NO_WARNINGS: '1' } },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await waitFor(() => jsonLines(stderr).some((line) => line['event'] === 'listening'), 'guard listening', 60_000);
  const url = jsonLines(stderr).find((line) => line['event'] === 'listening')?.['url'] as string;
  return { child, stderr: () => stderr, url };
}

beforeAll(async () => {
  // Installs the pinned Node once when this one is older than 22.22 (never skipped).
  node22 = resolveNode22Binary();
  registry = await startTestRegistry();
  server = await startConformanceServer();
  const captured = await captureManifest({
    url: server.url,
    name: `${FIXTURE_NAMESPACE}/conformance`,
    version: '1.0.0',
  });
  await registry.publish(Buffer.from(captured.text, 'utf8'));
  guard = await startGuard(server.url);
}, 900_000);

afterAll(async () => {
  guard?.child.kill('SIGTERM');
  await server?.close();
  await registry?.close();
  for (const folder of scratch) await rm(folder, { recursive: true, force: true });
});

describe('MCP conformance suite (server scenarios)', () => {
  it('passes through guard every check it passes directly, except the $defs check guard fails on purpose', async () => {
    const scenarios = await listServerScenarios();
    expect(scenarios).toContain('json-schema-2020-12');
    const toolScenarios = scenarios.filter((name) => name.startsWith('tools-'));
    expect(toolScenarios.length).toBeGreaterThanOrEqual(10);

    const direct = await runSuite(server.url, scenarios);
    const directPassing = passing(direct);
    // Every scenario ran, and the fixture passes every tools scenario and the $defs check directly.
    expect([...direct.checks.keys()].sort(), direct.output).toEqual([...scenarios].sort());
    for (const name of toolScenarios) {
      expect(
        [...directPassing].some((key) => key.startsWith(`${name}/`)),
        `${name} passes directly`,
      ).toBe(true);
    }
    expect(directPassing.has(DEFS_CHECK)).toBe(true);
    // The fixture fails nothing directly (server-sse-polling only warns: docs/hosts.md says why).
    expect(keysWith(direct, 'FAILURE'), direct.output).toEqual([]);

    const through = await runSuite(guard?.url as string, scenarios);
    const throughPassing = passing(through);
    expect([...through.checks.keys()].sort(), through.output).toEqual([...scenarios].sort());
    const expected = [...directPassing].filter((key) => key !== DEFS_CHECK).sort();
    expect([...throughPassing].sort(), through.output).toEqual(expected);
    expect(statusOf(through, DEFS_CHECK)).toEqual(['FAILURE']);
    expect(keysWith(through, 'FAILURE')).toEqual([DEFS_CHECK]);
    // What only warns directly warns the same through guard.
    expect(keysWith(through, 'WARNING')).toEqual(keysWith(direct, 'WARNING'));
    // Guard presented every captured tool: none was withheld.
    expect(jsonLines(guard?.stderr() ?? '').filter((line) => line['event'] === 'tool-withheld')).toEqual([]);
  }, 900_000);
});

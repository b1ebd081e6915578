// The package as a host installs it (npm pack, then npm install of the tarball into an empty folder): the bin, the
// `toolseal/host` entry verifying against a real registry from plain Node, no tsx or typescript installed, and what
// importing `toolseal/host` loads (no database, server or MCP SDK code, no child processes).

import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import { manifestFile, repoRoot, startRegistry, temporaryDirectory } from '../verify/helpers.ts';

const execFileAsync = promisify(execFile);
const fixtures = join(repoRoot, 'test', 'package', 'fixtures');
const PACK_AND_INSTALL_TIMEOUT_MS = 300_000;
const CHILD_TIMEOUT_MS = 120_000;

/** Packages that a host importing `toolseal/host` must never load (the registry's database, server and MCP SDK). */
const FORBIDDEN_PACKAGE =
  /\/node_modules\/(?:better-sqlite3|drizzle-orm|hono|@hono\/[^/]+|@modelcontextprotocol\/sdk)\//;
const FORBIDDEN_BUILTIN = /^(?:node:)?child_process$/;

/** Run a command to completion and return its stdout; a failure carries its stdout and stderr (tsc reports on stdout). */
async function run(
  file: string,
  args: string[],
  options: { cwd: string; timeout?: number; env?: NodeJS.ProcessEnv },
): Promise<string> {
  try {
    return (await execFileAsync(file, args, { maxBuffer: 16 * 1024 * 1024, ...options })).stdout;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${file} ${args.join(' ')} failed:\n${stdout}${stderr}`, { cause: error });
  }
}

/** Every folder named `tsx` or `typescript` installed anywhere under `nodeModules` (nested node_modules too). */
function findInstalled(nodeModules: string, names: readonly string[]): string[] {
  if (!existsSync(nodeModules)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === '.bin') continue;
    const packageDirs = entry.name.startsWith('@')
      ? readdirSync(join(nodeModules, entry.name)).map((scoped) => join(entry.name, scoped))
      : [entry.name];
    for (const packageDir of packageDirs) {
      if (names.includes(packageDir)) found.push(join(nodeModules, packageDir));
      found.push(...findInstalled(join(nodeModules, packageDir, 'node_modules'), names));
    }
  }
  return found;
}

describe('the npm tarball, installed into an empty folder', { timeout: CHILD_TIMEOUT_MS }, () => {
  let packDir: string;
  let hostDir: string;

  beforeAll(async () => {
    packDir = temporaryDirectory('toolseal-pack-');
    hostDir = temporaryDirectory('toolseal-host-');
    // `npm pack` runs prepack, which builds dist/ from src/ first.
    await run('npm', ['pack', '--pack-destination', packDir, '--no-audit', '--no-fund'], { cwd: repoRoot });
    const tarballs = readdirSync(packDir).filter((name) => name.endsWith('.tgz'));
    expect(tarballs).toHaveLength(1);
    writeFileSync(
      join(hostDir, 'package.json'),
      JSON.stringify({ name: 'toolseal-host-check', private: true, type: 'module' }),
    );
    // --ignore-scripts: better-sqlite3's native addon is not compiled. A host that only verifies never loads it
    // (checked below), so it needs no compiler. Every dependency is in the npm cache (--prefer-offline).
    await run(
      'npm',
      ['install', join(packDir, tarballs[0]!), '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'],
      { cwd: hostDir },
    );
    for (const name of readdirSync(fixtures)) copyFileSync(join(fixtures, name), join(hostDir, name));
  }, PACK_AND_INSTALL_TIMEOUT_MS);

  afterAll(() => {
    for (const dir of [packDir, hostDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('ships dist/, the migrations, the schema and the examples, and no TypeScript source', () => {
    const installed = join(hostDir, 'node_modules', 'toolseal');
    for (const path of [
      'dist/cli/main.js',
      'dist/host/index.js',
      'dist/host/index.d.ts',
      'dist/host/index.js.map',
      'drizzle/meta/_journal.json',
      'drizzle-pg/meta/_journal.json',
      'schema/manifest-v1.schema.json',
      'schema/mcp-server.schema.json',
      'manifests/payments.json',
      'README.md',
    ])
      expect(existsSync(join(installed, path)), path).toBe(true);
    expect(existsSync(join(installed, 'src'))).toBe(false);
    // Every entry point and its declarations exist (`.`, host, pipeline, guard, build, audit).
    const { exports } = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
      exports: Record<string, string | Record<string, string>>;
    };
    expect(Object.keys(exports)).toEqual([
      '.',
      './host',
      './pipeline',
      './guard',
      './build',
      './audit',
      './package.json',
    ]);
    const targets = Object.values(exports).flatMap((target) =>
      typeof target === 'string' ? [target] : Object.values(target),
    );
    expect(targets.filter((target) => !existsSync(join(installed, target)))).toEqual([]);
    expect(readFileSync(join(installed, 'dist', 'cli', 'main.js'), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(
      true,
    );
  });

  it('`npx toolseal --help` prints the usage and exits 0', async () => {
    const stdout = await run('npx', ['toolseal', '--help'], { cwd: hostDir, timeout: CHILD_TIMEOUT_MS });
    expect(stdout.startsWith('usage: toolseal <command> [options]\n')).toBe(true);
    expect(stdout).toContain('toolseal verify NAME@VERSION --registry URL');
  });

  it('the installed bin runs from any folder, as the README shows (its path, and npx --prefix … --no-install)', async () => {
    const elsewhere = temporaryDirectory('toolseal-elsewhere-');
    const bin = join(hostDir, 'node_modules', '.bin', 'toolseal');
    const direct = await run(bin, ['help'], { cwd: elsewhere, timeout: CHILD_TIMEOUT_MS });
    expect(direct.startsWith('usage: toolseal <command> [options]\n')).toBe(true);
    const viaNpx = await run('npx', ['--prefix', hostDir, '--no-install', 'toolseal', 'help'], {
      cwd: elsewhere,
      timeout: CHILD_TIMEOUT_MS,
    });
    expect(viaNpx).toBe(direct);
  });

  it('a plain .mjs host imports toolseal/host, verifies a published manifest and pins its digest', async () => {
    const registry = await startRegistry();
    try {
      const { record } = await registry.publish(manifestFile('payments'));
      const verifyFromHost = (): Promise<string> =>
        run(process.execPath, ['verify-host.mjs', registry.url, record.name, record.version], {
          cwd: hostDir,
          timeout: CHILD_TIMEOUT_MS,
        });
      expect(await verifyFromHost()).toBe(record.digest);
      const lockPath = join(hostDir, 'toolseal.lock');
      const lock = JSON.parse(readFileSync(lockPath, 'utf8')) as { manifests: Record<string, { digest: string }> };
      const key = `${record.name}@${record.version}`;
      expect(lock.manifests[key]?.digest).toBe(record.digest);
      // Verified again against that pin; a pin on other bytes is refused.
      expect(await verifyFromHost()).toBe(record.digest);
      lock.manifests[key]!.digest = `sha256:${'0'.repeat(64)}`;
      writeFileSync(lockPath, JSON.stringify(lock));
      await expect(verifyFromHost()).rejects.toThrow(/PIN_MISMATCH/);
    } finally {
      await registry.close();
    }
  });

  it('installs no tsx and no typescript', () => {
    expect(findInstalled(join(hostDir, 'node_modules'), ['tsx', 'typescript'])).toEqual([]);
  });

  it('importing toolseal/host loads no better-sqlite3, drizzle, hono, MCP SDK or node:child_process', async () => {
    const resolvedLog = join(hostDir, 'resolved.log');
    const stdout = await run(
      process.execPath,
      ['--import', './register-recorder.mjs', 'probe-imports.mjs', 'toolseal/host'],
      { cwd: hostDir, timeout: CHILD_TIMEOUT_MS, env: { ...process.env, TOOLSEAL_RESOLVED_LOG: resolvedLog } },
    );
    const { builtins, required } = JSON.parse(stdout) as { builtins: string[]; required: string[] };
    const resolved = readFileSync(resolvedLog, 'utf8').split('\n').filter(Boolean);
    // The recorders saw the load: the entry itself (resolve hook), ajv's CommonJS files (require.cache), the builtins.
    expect(resolved.some((url) => url.endsWith('/node_modules/toolseal/dist/host/index.js'))).toBe(true);
    expect(required.some((path) => path.includes('/node_modules/ajv/'))).toBe(true);
    expect(builtins).toContain('crypto');
    expect([...resolved, ...required].filter((where) => FORBIDDEN_PACKAGE.test(where))).toEqual([]);
    expect([...resolved, ...builtins].filter((name) => FORBIDDEN_BUILTIN.test(name))).toEqual([]);
  });

  it('the built pipeline pool starts its workers from dist/ without tsx', async () => {
    const file = join(repoRoot, 'manifests', 'payments.json');
    const stdout = await run(process.execPath, ['run-pipeline-pool.mjs', file], {
      cwd: hostDir,
      timeout: CHILD_TIMEOUT_MS,
    });
    expect(stdout).toBe(runPipeline(readFileSync(file)).digest);
  });

  it('its type declarations (host, pipeline, guard, build, audit) resolve for a TypeScript host (NodeNext)', async () => {
    writeFileSync(
      join(hostDir, 'check.ts'),
      [
        "import { fetchVerified, type FetchedManifest } from 'toolseal/host';",
        "import { runPipeline, type PipelineResult } from 'toolseal/pipeline';",
        'export const verify: (url: string, ref: string) => Promise<FetchedManifest> = fetchVerified;',
        'export const canonicalize: (bytes: Uint8Array) => PipelineResult = runPipeline;',
        "export { ToolGuard } from 'toolseal/guard';",
        "export { buildManifest, captureManifest } from 'toolseal/build';",
        "export { runAudit } from 'toolseal/audit';",
        '',
      ].join('\n'),
    );
    const compilerOptions = {
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      // The host has no @types/node of its own here: use the repository's.
      typeRoots: [join(repoRoot, 'node_modules', '@types')],
      types: ['node'],
    };
    writeFileSync(join(hostDir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['check.ts'] }));
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    // Throws with tsc's diagnostics if a declaration does not resolve or type-check.
    const diagnostics = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], {
      cwd: hostDir,
      timeout: CHILD_TIMEOUT_MS,
    });
    expect(diagnostics).toBe('');
  });
});

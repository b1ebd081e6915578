// `toolseal guard --manifest NAME@VERSION` without a COMMAND starts the signed package itself (issue 27 §2, "Done
// when"): a real MCP server from npm, @modelcontextprotocol/server-everything at the exact version in package.json's
// devDependencies. The vendor's flow first: `manifest capture --server-json` drafts the manifest from the running
// server and its server.json, the registry signs it; then an MCP client talks to guard, which runs
// `npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio` with the signed environment. Offline by
// construction: npm runs with `offline` and an empty cache, so npx can only take the copy `npm ci` installed (npx
// uses a project's installed package when its version is exactly the one asked for); nothing is downloaded.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULL_CLIENT_CAPABILITIES } from '../../src/build/index.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { repoPath } from '../helpers/pipeline-helpers.ts';
import { childEnv, cleanupTempDirs, makeTempDir, runCli } from '../helpers/registry-helpers.ts';

const NAME = 'io.github.modelcontextprotocol/everything';
const VERSION = '2026.8.31';
const PACKAGE = '@modelcontextprotocol/server-everything';
const repoRoot = repoPath();
const packageDir = dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`));
// What the registry signs must be the package the repository installed: the test is about that exact version.
const installed = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };

/** The tools server-everything shows a client that declares roots, sampling and elicitation (as capture does). */
interface SignedManifest {
  tools: { name: string }[];
  server: { packages: { identifier: string; version: string }[] };
}

describe('guard starts the signed npm package of a real MCP server', () => {
  let registry: RunningRegistryServer;
  let signed: SignedManifest;
  let npmCache: string;

  beforeAll(async () => {
    expect(installed.version).toBe(VERSION);
    const work = makeTempDir('toolseal-signed-package-');
    npmCache = makeTempDir('toolseal-empty-npm-cache-');
    // The vendor's server.json, with the environment variable the package reads (its value signed as a default).
    const serverJson = JSON.parse(
      readFileSync(repoPath('test', 'fixtures', 'server-manifests', 'everything.server.json'), 'utf8'),
    ) as { packages: Record<string, unknown>[] };
    serverJson.packages[0]!['environmentVariables'] = [
      { name: 'LOG_LEVEL', description: 'Log verbosity', default: 'info', choices: ['debug', 'info', 'error'] },
    ];
    writeFileSync(join(work, 'server.json'), JSON.stringify(serverJson));
    const captured = await runCli(
      [
        'manifest',
        'capture',
        '--name',
        NAME,
        '--version',
        VERSION,
        '--server-json',
        'server.json',
        '-o',
        'manifest.json',
        '--',
        process.execPath,
        join(packageDir, 'dist', 'index.js'),
        'stdio',
      ],
      { cwd: work, timeoutMs: 60_000 },
    );
    expect(captured.code, captured.stderr).toBe(0);
    const bytes = readFileSync(join(work, 'manifest.json'));
    signed = JSON.parse(bytes.toString('utf8')) as SignedManifest;
    expect(signed.server.packages[0]).toMatchObject({ identifier: PACKAGE, version: VERSION });

    registry = await startRegistryServer({ dataDir: ':memory:', keysDir: join(work, 'keys'), port: 0 });
    const { token } = await registry.registry.createPublisher('io.github.modelcontextprotocol');
    await registry.registry.publish(bytes, await registry.registry.authenticate(token));
  }, 90_000);

  afterAll(async () => {
    await registry?.close();
    cleanupTempDirs();
  });

  it('capture --server-json refuses a server.json of another server (INVALID_MANIFEST at /name); nothing is written', async () => {
    const work = makeTempDir('toolseal-capture-other-');
    const serverJson = readFileSync(repoPath('test', 'fixtures', 'server-manifests', 'everything.server.json'));
    writeFileSync(join(work, 'server.json'), serverJson);
    const refused = await runCli(
      [
        'manifest',
        'capture',
        '--name',
        'io.github.modelcontextprotocol/other',
        '--version',
        VERSION,
        '--server-json',
        'server.json',
        '-o',
        'manifest.json',
        '--',
        process.execPath,
        join(packageDir, 'dist', 'index.js'),
        'stdio',
      ],
      { cwd: work, timeoutMs: 60_000 },
    );
    expect(refused.code).toBe(1);
    const last = refused.stderr.trimEnd().split('\n').at(-1)!;
    expect(JSON.parse(last)).toMatchObject({ code: 'INVALID_MANIFEST', pointer: '/name' });
    expect(existsSync(join(work, 'manifest.json'))).toBe(false);
  }, 60_000);

  it('an MCP client sees exactly the signed tools of the package guard started, and calls reach it', async () => {
    const env = childEnv({
      npm_config_offline: 'true',
      npm_config_cache: npmCache,
      npm_config_update_notifier: 'false',
      TOOLSEAL_PROBE_SECRET: 'never-for-the-server',
    }) as Record<string, string>;
    delete env['LOG_LEVEL']; // guard sets the signed default only when the variable is unset
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        join(repoRoot, 'bin', 'toolseal.js'),
        'guard',
        '--manifest',
        `${NAME}@${VERSION}`,
        '--registry',
        registry.url,
      ],
      // The repository root: its node_modules holds the installed package, the one npx may take.
      cwd: repoRoot,
      env,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client(
      { name: 'host', version: '1.0.0' },
      { capabilities: FULL_CLIENT_CAPABILITIES }, // what capture declared: the server shows every tool
    );
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
    try {
      await client.connect(transport);
      expect(client.getServerVersion()?.name).toBe('mcp-servers/everything');
      const tools = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect(tools.map((tool) => tool.name).sort()).toEqual(signed.tools.map((tool) => tool.name).sort());
      expect(tools.length).toBeGreaterThanOrEqual(13);

      const echo = await client.callTool({ name: 'echo', arguments: { message: 'signed and started' } });
      expect(echo.content).toEqual([{ type: 'text', text: 'Echo: signed and started' }]);
      const sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
      expect(JSON.stringify(sum.content)).toContain('5');

      // The server's own environment: started by npm exec (npx), the signed default set, no TOOLSEAL_* variable.
      const env = await client.callTool({ name: 'get-env', arguments: {} });
      const text = (env.content as { type: string; text: string }[])[0]!.text;
      const serverEnv = JSON.parse(text.slice(text.indexOf('{'))) as Record<string, string>;
      expect(serverEnv['npm_command']).toBe('exec');
      expect(serverEnv['LOG_LEVEL']).toBe('info');
      expect(Object.keys(serverEnv).filter((key) => key.startsWith('TOOLSEAL_'))).toEqual([]);
    } finally {
      await client.close();
    }
    const lines = stderr
      .split('\n')
      .filter((line) => line.startsWith('{"event"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ event: 'verified', manifest: `${NAME}@${VERSION}` });
    // Every tool presented was the signed one: no finding at all.
    expect(lines.filter((line) => line['event'] !== 'verified' && line['level'] !== 'info')).toEqual([]);
  }, 90_000);
});

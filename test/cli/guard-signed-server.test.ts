// `toolseal guard` with a manifest that signs its server (issue 27 §2): a stdio COMMAND that does not run the signed
// package, or an --upstream that is not a signed remote, is SERVER_NOT_SIGNED before anything starts or is sent;
// --allow-unsigned-command runs the command anyway. Guard starting the real signed npm package by itself is
// test/cli/guard-signed-package.test.ts.

import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { repoPath } from '../helpers/pipeline-helpers.ts';
import { cleanupTempDirs, makeTempDir, runCli } from '../helpers/registry-helpers.ts';

const EVERYTHING = 'io.github.modelcontextprotocol/everything@2026.8.31';
const ANALYTICS = 'com.example/acme-analytics@2.0.0';
// A "server" that proves it was started: it writes a line on stderr and exits 0.
const SERVER = ['--', process.execPath, '-e', 'process.stderr.write("server started\\n")'];

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('guard and the signed server', () => {
  let registry: RunningRegistryServer;
  let upstream: Server;
  let upstreamRequests = 0;
  let cwd: string;

  beforeAll(async () => {
    cwd = makeTempDir('toolseal-signed-server-');
    const root = makeTempDir();
    registry = await startRegistryServer({ dataDir: join(root, 'data'), keysDir: join(root, 'keys'), port: 0 });
    for (const [namespace, file] of [
      ['io.github.modelcontextprotocol', 'everything-npm.json'],
      ['com.example', 'analytics-remote.json'],
    ] as const) {
      const { token } = await registry.registry.createPublisher(namespace);
      const bytes = readFileSync(repoPath('test', 'fixtures', 'server-manifests', file));
      await registry.registry.publish(bytes, await registry.registry.authenticate(token));
    }
    upstream = createServer((_request, response) => {
      upstreamRequests++;
      response.end();
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await registry.close();
    await new Promise((resolve) => upstream.close(resolve));
    cleanupTempDirs();
  });

  it('refuses a command that does not run the signed package before starting it; --allow-unsigned-command runs it', async () => {
    const refused = await runCli(['guard', '--manifest', EVERYTHING, '--registry', registry.url, ...SERVER], { cwd });
    expect(refused.code).toBe(1);
    expect(refused.stderr).not.toContain('server started');
    expect(jsonLines(refused.stderr).at(-1)).toMatchObject({ code: 'SERVER_NOT_SIGNED' });

    const allowed = await runCli(
      ['guard', '--manifest', EVERYTHING, '--registry', registry.url, '--allow-unsigned-command', ...SERVER],
      { cwd },
    );
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).toContain('server started');
  });

  it('refuses an upstream that is not a signed remote before listening; nothing is sent to it', async () => {
    const { port } = upstream.address() as AddressInfo;
    const refused = await runCli(
      [
        'guard',
        '--manifest',
        ANALYTICS,
        '--registry',
        registry.url,
        '--upstream',
        `http://127.0.0.1:${port}/mcp`,
        '--listen',
        '127.0.0.1:0',
      ],
      { cwd },
    );
    expect(refused.code).toBe(1);
    expect(jsonLines(refused.stderr).at(-1)).toMatchObject({ code: 'SERVER_NOT_SIGNED' });
    expect(refused.stderr).not.toContain('"listening"');
    expect(upstreamRequests).toBe(0);
  });

  it('without a COMMAND, a manifest that signs only remotes has no package to start: SERVER_NOT_SIGNED', async () => {
    const remoteOnly = await runCli(['guard', '--manifest', ANALYTICS, '--registry', registry.url], { cwd });
    expect(remoteOnly.code).toBe(1);
    expect(jsonLines(remoteOnly.stderr).at(-1)).toMatchObject({ code: 'SERVER_NOT_SIGNED' });
    expect(remoteOnly.stderr).not.toContain('"verified"');
  });
});

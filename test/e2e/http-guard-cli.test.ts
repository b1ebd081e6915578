// `toolseal guard --upstream … --listen …` end to end: a real registry, the CLI as a child process in front of a real
// SDK server on StreamableHTTPServerTransport, and a real SDK Client on StreamableHTTPClientTransport.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  jsonLines,
  repoRoot,
  runToolseal,
  startTestRegistry,
  toolsealBin,
  type TestRegistry,
} from '../fixtures/guard-env.ts';
import { fixtureTools } from '../fixtures/mcp-tools.ts';
import {
  REF,
  expectRefusedCall,
  listAll,
  localSigned,
  manifestWithCapabilities,
  presentable,
  waitFor,
} from '../guard/guard-helpers.ts';
import { startHttpTestServer, type HttpTestServer } from '../guard/http/http-guard-helpers.ts';

const TOKEN = 'Bearer secret-token-7f3a91';
let registry: TestRegistry;
let server: HttpTestServer;

beforeAll(async () => {
  registry = await startTestRegistry();
  const outcome = await registry.publish(Buffer.from(JSON.stringify(manifestWithCapabilities(fixtureTools))));
  expect(outcome.record.digest).toBe(localSigned.digest);
  server = await startHttpTestServer({ mode: 'extra-tool' });
});

afterAll(async () => {
  await server?.close();
  await registry?.close();
});

function startGuard(args: string[]): { child: ChildProcessWithoutNullStreams; stderr: () => string } {
  const child = spawn(process.execPath, [toolsealBin, 'guard', ...args], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NODE_NO_WARNINGS: '1' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return { child, stderr: () => stderr };
}

describe('toolseal guard --upstream', () => {
  it('verifies, listens on loopback, guards a session, passes Authorization and never prints it', async () => {
    const guard = startGuard([
      '--manifest',
      REF,
      '--registry',
      registry.url,
      '--upstream',
      server.url,
      '--listen',
      '127.0.0.1:0',
    ]);
    const exit = new Promise<number | null>((resolve) => guard.child.once('close', (code) => resolve(code)));
    try {
      await waitFor(() => jsonLines(guard.stderr()).some((line) => line['event'] === 'listening'), 'listening', 30_000);
      const lines = jsonLines(guard.stderr());
      expect(lines[0]).toMatchObject({ event: 'verified', manifest: REF, digest: localSigned.digest });
      const url = lines.find((line) => line['event'] === 'listening')!['url'] as string;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

      const client = new Client({ name: 'host', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: TOKEN } } }),
      );
      expect(await listAll(client)).toEqual(presentable(localSigned.canonicalBytes));
      expect(await client.callTool({ name: 'echo', arguments: { text: 'hello' } })).toMatchObject({
        content: [{ type: 'text', text: 'hello' }],
      });
      await expectRefusedCall(client, 'export_all_notes', { url: 'https://evil.example' });
      await client.close();

      expect(server.received).not.toContain('tools/call export_all_notes');
      expect(server.requests.filter((request) => request.authorization === TOKEN).length).toBeGreaterThan(2);
      await waitFor(
        () => jsonLines(guard.stderr()).some((line) => line['event'] === 'call-refused'),
        'the call-refused line',
      );
      const findings = jsonLines(guard.stderr());
      expect(findings.find((line) => line['event'] === 'tool-withheld')).toMatchObject({
        tool: 'export_all_notes',
        reason: 'unknown-tool',
      });
      expect(guard.stderr()).not.toContain('secret-token');
    } finally {
      guard.child.kill('SIGTERM');
    }
    expect(await exit).toBe(0);
  });

  it('refuses to listen beyond loopback, and a COMMAND beside --upstream', async () => {
    const wide = await runToolseal([
      'guard',
      '--manifest',
      REF,
      '--registry',
      registry.url,
      '--upstream',
      server.url,
      '--listen',
      '0.0.0.0:8080',
    ]);
    expect(wide.code).toBe(2);
    expect(wide.stderr).toContain('127.0.0.1:PORT');
    const both = await runToolseal([
      'guard',
      '--manifest',
      REF,
      '--upstream',
      server.url,
      '--listen',
      '127.0.0.1:0',
      '--',
      'node',
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('no COMMAND');
  });
});

// guardClient's upstream check (issue 27 §2): with `upstream`, the URL the host will connect to must be one of the
// remotes the manifest signs (its `server` member), as `toolseal guard --upstream` checks; SERVER_NOT_SIGNED is thrown
// before anything is connected, and the upstream never sees a request. A real registry; a real local HTTP upstream.

import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../../src/core/errors.ts';
import { GuardedClient, guardClient } from '../../../src/guard/index.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../../src/server/index.ts';
import { repoPath } from '../../helpers/pipeline-helpers.ts';
import { FIXTURE_NAMESPACE, fixtureTools } from '../../fixtures/mcp-tools.ts';
import { manifestWithCapabilities, REF } from '../guard-helpers.ts';

const ANALYTICS = 'com.example/acme-analytics@2.0.0';
const EVERYTHING = 'io.github.modelcontextprotocol/everything@2026.8.31';

let registry: RunningRegistryServer;
let keysDir: string;
let upstream: Server;
let upstreamRequests = 0;

beforeAll(async () => {
  keysDir = await mkdtemp(join(tmpdir(), 'toolseal-guard-client-server-'));
  registry = await startRegistryServer({ dataDir: ':memory:', keysDir, port: 0 });
  const publish = async (namespace: string, bytes: Uint8Array): Promise<void> => {
    const { token } = await registry.registry.createPublisher(namespace);
    await registry.registry.publish(bytes, await registry.registry.authenticate(token));
  };
  const fixture = (file: string): Uint8Array => readFileSync(repoPath('test', 'fixtures', 'server-manifests', file));
  await publish('com.example', fixture('analytics-remote.json'));
  await publish('io.github.modelcontextprotocol', fixture('everything-npm.json'));
  await publish(FIXTURE_NAMESPACE, Buffer.from(JSON.stringify(manifestWithCapabilities(fixtureTools))));
  upstream = createServer((_request, response) => {
    upstreamRequests++;
    response.end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await registry?.close();
  await new Promise((resolve) => upstream?.close(resolve));
  await rm(keysDir, { recursive: true, force: true });
});

async function refusal(manifest: string, url: string | URL): Promise<{ error: unknown; client: Client }> {
  const client = new Client({ name: 'host', version: '1.0.0' });
  const error = await guardClient(client, { manifest, registry: registry.url, upstream: url }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return { error, client };
}

describe('guardClient: the upstream against the signed server', () => {
  it('refuses an upstream that is not a signed remote with SERVER_NOT_SIGNED; nothing is connected or sent', async () => {
    const { port } = upstream.address() as AddressInfo;
    for (const url of [
      `http://127.0.0.1:${port}/mcp`,
      'https://analytics.example.com/mcp', // the signed template needs a tenant label in front
      'https://acme.analytics.example.com/mcp/extra', // a variable is one label, the path is exact
      'https://acme.evil.example/mcp',
      new URL('https://analytics.example.com/sse?x=1'),
    ]) {
      const { error, client } = await refusal(ANALYTICS, url);
      expect(error, String(url)).toBeInstanceOf(ToolsealError);
      expect((error as ToolsealError).code).toBe('SERVER_NOT_SIGNED');
      expect((error as ToolsealError).message).toContain('https://{tenant_id}.analytics.example.com/mcp');
      expect(client.transport).toBeUndefined();
    }
    // A manifest that signs only a package signs no remote at all.
    const npmOnly = await refusal(EVERYTHING, `http://127.0.0.1:${port}/mcp`);
    expect((npmOnly.error as ToolsealError).code).toBe('SERVER_NOT_SIGNED');
    expect((npmOnly.error as ToolsealError).message).toBe(
      'the manifest signs no remote server: guard will not connect to an upstream URL for it',
    );
    expect(upstreamRequests).toBe(0);
  });

  it('accepts a signed remote, its {variable} filled and the URL normalised, as a string or a URL', async () => {
    for (const url of [
      'https://acme.analytics.example.com/mcp',
      'HTTPS://Tenant-42.Analytics.Example.COM:443/mcp',
      new URL('https://analytics.example.com/sse'),
    ]) {
      const guarded = await guardClient(new Client({ name: 'host', version: '1.0.0' }), {
        manifest: ANALYTICS,
        registry: registry.url,
        upstream: url,
      });
      expect(guarded, String(url)).toBeInstanceOf(GuardedClient);
      expect(guarded.guard.subject).toBe(ANALYTICS);
    }
  });

  it('a manifest without a server member signs no server: any upstream is the host’s choice, as before', async () => {
    const { port } = upstream.address() as AddressInfo;
    const guarded = await guardClient(new Client({ name: 'host', version: '1.0.0' }), {
      manifest: REF,
      registry: registry.url,
      upstream: `http://127.0.0.1:${port}/mcp`,
    });
    expect(guarded).toBeInstanceOf(GuardedClient);
    expect(upstreamRequests).toBe(0);
  });
});

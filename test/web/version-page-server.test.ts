// The version page shows the signed server (issue 27 §5): packages, remotes, repository, escaped, vendor URLs as text.

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { repoPath } from '../helpers/pipeline-helpers.ts';
import { cleanupTempDirs, createTestEnv, manifestBytes, postManifest, utf8 } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

function fixtureText(file: string): string {
  return readFileSync(repoPath('test', 'fixtures', 'server-manifests', file), 'utf8');
}

describe('version page: the signed server', () => {
  it('lists the packages, remotes and repository the signature names; vendor text escaped; no section without a server', async () => {
    const env = await createTestEnv();
    const mcp = await env.addPublisher('io.github.modelcontextprotocol');
    const example = await env.addPublisher('com.example');
    expect((await postManifest(env.app, utf8(fixtureText('everything-npm.json')), mcp)).status).toBe(201);
    const remote = JSON.parse(fixtureText('analytics-remote.json')) as { server: Record<string, unknown> };
    remote.server['title'] = '<b>Analytics</b>';
    expect((await postManifest(env.app, utf8(JSON.stringify(remote)), example)).status).toBe(201);
    expect((await postManifest(env.app, manifestBytes(), env.token)).status).toBe(201);

    const npm = await (
      await env.app.request('/ui/manifests/io.github.modelcontextprotocol/everything/2026.8.31')
    ).text();
    expect(npm).toContain('data-testid="signed-server"');
    expect(npm).toContain('<code>@modelcontextprotocol/server-everything</code>');
    expect(npm).toContain('<td>2026.8.31</td>');
    expect(npm).toContain('<code>https://github.com/modelcontextprotocol/servers</code>');
    expect(npm).not.toContain('href="https://github.com/modelcontextprotocol/servers"');

    const remotePage = await (await env.app.request('/ui/manifests/com.example/acme-analytics/2.0.0')).text();
    expect(remotePage).toContain('<code>https://{tenant_id}.analytics.example.com/mcp</code>');
    expect(remotePage).toContain('remote (sse): <code>https://analytics.example.com/sse</code>');
    expect(remotePage).toContain('Signed server: &lt;b&gt;Analytics&lt;/b&gt;');
    expect(remotePage).not.toContain('<b>Analytics</b>');

    const plain = await (await env.app.request('/ui/manifests/io.github.acme/widgets/1.0.0')).text();
    expect(plain).not.toContain('signed-server');
    await env.close();
  });
});

describe('diff page: the signed server first', () => {
  it('shows the server changes (a new remote, another package version) before the capability changes, escaped', async () => {
    const env = await createTestEnv();
    const mcp = await env.addPublisher('io.github.modelcontextprotocol');
    const older = JSON.parse(fixtureText('everything-npm.json')) as {
      version: string;
      server: { packages: { version: string; identifier: string }[]; remotes?: unknown[] };
    };
    expect((await postManifest(env.app, utf8(JSON.stringify(older)), mcp)).status).toBe(201);
    const newer = structuredClone(older);
    newer.version = '2026.9.1';
    newer.server.packages[0]!.version = '2026.9.1';
    newer.server.remotes = [{ type: 'streamable-http', url: 'https://mcp.example.com/<x>/mcp' }];
    expect((await postManifest(env.app, utf8(JSON.stringify(newer)), mcp)).status).toBe(201);

    const page = await (
      await env.app.request('/ui/diff/io.github.modelcontextprotocol/everything/2026.8.31/2026.9.1')
    ).text();
    const server = page.indexOf('data-section="server"');
    expect(server).toBeGreaterThan(0);
    expect(server).toBeLessThan(page.indexOf('data-section="capabilities"'));
    expect(page).toContain(
      '<li class="wider" data-direction="wider"><strong>Wider</strong> — new remote: streamable-http https://mcp.example.com/&lt;x&gt;/mcp',
    );
    expect(page).toContain('package @modelcontextprotocol/server-everything: version 2026.8.31 → 2026.9.1');
    expect(page).toContain('data-pointer="/server/packages/0/version"');
    expect(page).not.toContain('/&lt;x&gt;/mcp" ');
    expect(page).not.toContain('<x>');

    // Two versions of a manifest without a server: no server section at all.
    expect((await postManifest(env.app, manifestBytes(), env.token)).status).toBe(201);
    const bumped = JSON.parse(Buffer.from(manifestBytes()).toString('utf8')) as { version: string };
    bumped.version = '1.0.1';
    expect((await postManifest(env.app, utf8(JSON.stringify(bumped)), env.token)).status).toBe(201);
    const plain = await (await env.app.request('/ui/diff/io.github.acme/widgets/1.0.0/1.0.1')).text();
    expect(plain).toContain('data-section="capabilities"');
    expect(plain).not.toContain('data-section="server"');
    await env.close();
  });
});

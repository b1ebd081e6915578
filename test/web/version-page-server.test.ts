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

// Issue 27 through the bin, against a real registry on 127.0.0.1: publish manifests with npm, OCI and remote
// servers, then `client-config`, `managed-settings` and `manifest from-server-json` print what the clients read.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRegistryServer } from '../../src/server/index.ts';
import { repoPath, vectorPath } from '../helpers/pipeline-helpers.ts';
import { cleanupTempDirs, makeTempDir, runCli } from '../helpers/registry-helpers.ts';

const fixtureDir = repoPath('test', 'fixtures', 'server-manifests');
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
formatsPlugin.default(ajv);
const validateClaudeCode = ajv.compile(
  JSON.parse(readFileSync(vectorPath('client-configs', 'claude-code.schema.json'), 'utf8')),
);
const validateManaged = ajv.compile(
  JSON.parse(readFileSync(vectorPath('client-configs', 'managed-settings.schema.json'), 'utf8')),
);

let server: Awaited<ReturnType<typeof startRegistryServer>>;

beforeAll(async () => {
  server = await startRegistryServer({ dataDir: ':memory:', keysDir: join(makeTempDir(), 'keys'), port: 0 });
  const published: [string, string][] = [
    ['io.github.modelcontextprotocol', 'everything-npm.json'],
    ['io.github.acme', 'weather-oci.json'],
    ['com.example', 'analytics-remote.json'],
  ];
  for (const [namespace, file] of published) {
    const { token } = await server.registry.createPublisher(namespace);
    const result = await runCli(['publish', join(fixtureDir, file), '--registry', server.url, '--token', token]);
    expect(result.code, result.stderr).toBe(0);
  }
}, 60_000);

afterAll(async () => {
  await server.close();
  cleanupTempDirs();
});

describe('toolseal client-config', () => {
  it('prints a verified Claude Code entry that runs guard in front of the signed npm package, paths absolute', async () => {
    const ref = 'io.github.modelcontextprotocol/everything@2026.8.31';
    const result = await runCli(['client-config', ref, '--client', 'claude-code', '--registry', server.url]);
    expect(result.code, result.stderr).toBe(0);
    const { config, files } = JSON.parse(result.stdout) as {
      config: { mcpServers: Record<string, { command: string; args: string[] }> };
      files: string[];
    };
    expect(validateClaudeCode(config), JSON.stringify(validateClaudeCode.errors)).toBe(true);
    const entry = config.mcpServers['io-github-modelcontextprotocol-everything'];
    expect(entry?.command.startsWith('/')).toBe(true);
    const guardAt = entry?.args.indexOf('guard') ?? -1;
    expect(
      entry?.args
        .slice(0, guardAt)
        .filter((arg) => !arg.startsWith('--'))
        .every((arg) => arg.startsWith('/')),
    ).toBe(true);
    expect(entry?.args.slice(guardAt)).toEqual([
      'guard',
      '--manifest',
      ref,
      '--registry',
      server.url,
      '--',
      'npx',
      '-y',
      '@modelcontextprotocol/server-everything@2026.8.31',
      'stdio',
    ]);
    expect(files).toContain('project: .mcp.json in the project root');
  });

  it('refuses a client it does not know, as a usage error', async () => {
    const result = await runCli(['client-config', 'io.github.acme/weather@3.1.0', '--client', 'emacs']);
    expect(result.code).toBe(2);
  });
});

describe('toolseal managed-settings', () => {
  it('lists the catalogue’s signed servers of the namespaces given as the Copilot allow-list', async () => {
    const result = await runCli([
      'managed-settings',
      '--client',
      'copilot',
      '--registry',
      server.url,
      '--namespace',
      'io.github.acme',
      '--namespace',
      'com.example',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const { settings } = JSON.parse(result.stdout) as { settings: { allowedMcpServers: Record<string, unknown>[] } };
    expect(validateManaged(settings), JSON.stringify(validateManaged.errors)).toBe(true);
    expect(settings.allowedMcpServers.filter((e) => 'serverName' in e)).toEqual([
      { serverName: 'com-example-acme-analytics' },
      { serverName: 'io-github-acme-weather' },
    ]);
    expect(settings.allowedMcpServers).toContainEqual({ serverUrl: 'https://*.analytics.example.com/mcp' });
    expect(JSON.stringify(settings)).not.toContain('everything');
  });
});

describe('toolseal manifest from-server-json', () => {
  it('writes a publishable draft from a server.json and the tools of a captured manifest', async () => {
    const out = join(makeTempDir(), 'draft.json');
    const result = await runCli([
      'manifest',
      'from-server-json',
      join(fixtureDir, 'everything.server.json'),
      '--tools',
      join(fixtureDir, 'everything-npm.json'),
      '-o',
      out,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      file: out,
      name: 'io.github.modelcontextprotocol/everything',
      tools: 1,
      leftOut: ['/$schema', '/_meta'],
    });
    const draft = JSON.parse(readFileSync(out, 'utf8')) as { server: { packages: { identifier: string }[] } };
    expect(draft.server.packages[0]?.identifier).toBe('@modelcontextprotocol/server-everything');
  });
});

describe('toolseal manifest build --server-json', () => {
  it('builds the manifest with the server member taken from the server.json', async () => {
    const out = join(makeTempDir(), 'built.json');
    const args = ['manifest', 'build', join(fixtureDir, 'everything-npm.json'), '-o', out];
    const result = await runCli([...args, '--server-json', join(fixtureDir, 'everything.server.json')]);
    expect(result.code, result.stderr).toBe(0);
    const built = JSON.parse(readFileSync(out, 'utf8')) as { server: Record<string, unknown> };
    expect(Object.keys(built.server)).toEqual(['title', 'websiteUrl', 'repository', 'packages']);
  });
});

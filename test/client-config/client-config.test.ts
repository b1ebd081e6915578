// Configs people paste (issue 27 §4): each client's entry and each managed allow-list, validated against the file
// shapes the clients document (test/vectors/client-configs, one small JSON Schema per client, citing its page).

import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import {
  buildClientConfig,
  CONFIG_CLIENTS,
  type ClientConfigRequest,
  formatSignedPackageCommand,
  formatServerKey,
} from '../../src/client-config/client-config.ts';
import { buildManagedSettings, MANAGED_CLIENTS } from '../../src/client-config/managed-settings.ts';
import { runPipeline, type Manifest } from '../../src/pipeline/index.ts';
import type { ServerPackage } from '../../src/pipeline/server-member.ts';
import { expectRefusal, repoPath, vectorPath } from '../helpers/pipeline-helpers.ts';

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
formatsPlugin.default(ajv);
function schema(file: string): ValidateFunction {
  return ajv.compile(JSON.parse(readFileSync(vectorPath('client-configs', file), 'utf8')));
}
const shapes: Record<string, ValidateFunction> = {
  'claude-desktop': schema('claude-desktop.schema.json'),
  'claude-code': schema('claude-code.schema.json'),
  vscode: schema('vscode.schema.json'),
  cursor: schema('cursor.schema.json'),
};
const validateManaged = schema('managed-settings.schema.json');

function expectShape(validate: ValidateFunction | undefined, value: unknown): void {
  expect(validate?.(value), JSON.stringify(validate?.errors)).toBe(true);
}

function signed(file: string): Manifest {
  return runPipeline(readFileSync(repoPath('test', 'fixtures', 'server-manifests', file))).manifest;
}

const npm = signed('everything-npm.json');
const oci = signed('weather-oci.json');
const remote = signed('analytics-remote.json');
const toolsealCommand = ['/usr/bin/node', '/opt/toolseal/dist/cli/main.js'];

function request(client: ClientConfigRequest['client'], extra: Partial<ClientConfigRequest> = {}): ClientConfigRequest {
  return { client, manifest: npm, registry: 'https://registry.example', toolsealCommand, transport: 'stdio', ...extra };
}

describe('signed package commands', () => {
  it('npm, OCI and PyPI start exactly the signed identifier and version with the signed arguments', () => {
    expect(formatSignedPackageCommand(npm.server?.packages?.[0] as ServerPackage)).toEqual([
      'npx',
      '-y',
      '@modelcontextprotocol/server-everything@2026.8.31',
      'stdio',
    ]);
    const image = oci.server?.packages?.[0] as ServerPackage;
    expect(formatSignedPackageCommand(image)).toEqual([
      'docker',
      'run',
      '-i',
      '--rm',
      '-e',
      'WEATHER_API_KEY',
      '--network',
      'bridge',
      image.identifier,
    ]);
    expect(
      formatSignedPackageCommand({
        registryType: 'pypi',
        identifier: 'mcp-server-time',
        version: '0.6.2',
        transport: { type: 'stdio' },
      }),
    ).toEqual(['uvx', 'mcp-server-time==0.6.2']);
    expectRefusal(
      () =>
        formatSignedPackageCommand({
          registryType: 'nuget',
          identifier: 'X',
          version: '1.0.0',
          transport: { type: 'stdio' },
        }),
      'BAD_REQUEST',
      undefined,
    );
  });
});

describe('client-config', () => {
  for (const client of CONFIG_CLIENTS) {
    it(`${client}: a stdio entry in the client's documented shape that runs guard in front of the signed package`, () => {
      const { config, files } = buildClientConfig(request(client, { lockFile: '/home/op/project/toolseal.lock.json' }));
      expectShape(shapes[client], config);
      const servers = (config['servers'] ?? config['mcpServers']) as Record<
        string,
        { command: string; args: string[] }
      >;
      const entry = servers[formatServerKey(npm.name)];
      expect(entry?.command).toBe('/usr/bin/node');
      expect(entry?.args).toEqual([
        '/opt/toolseal/dist/cli/main.js',
        'guard',
        '--manifest',
        'io.github.modelcontextprotocol/everything@2026.8.31',
        '--registry',
        'https://registry.example',
        '--locked',
        '--lock',
        '/home/op/project/toolseal.lock.json',
        '--',
        'npx',
        '-y',
        '@modelcontextprotocol/server-everything@2026.8.31',
        'stdio',
      ]);
      expect(files.length).toBeGreaterThan(0);
    });
  }

  for (const client of ['claude-code', 'vscode', 'cursor'] as const) {
    it(`${client}: a remote entry points at the local HTTP guard, which fronts the signed remote`, () => {
      const result = buildClientConfig(
        request(client, {
          manifest: remote,
          transport: 'remote',
          listen: '127.0.0.1:9000',
          variables: { tenant_id: 'acme' },
        }),
      );
      expectShape(shapes[client], result.config);
      expect(JSON.stringify(result.config)).toContain('"http://127.0.0.1:9000/mcp"');
      expect(result.guardCommand?.slice(-4)).toEqual([
        '--upstream',
        'https://acme.analytics.example.com/mcp',
        '--listen',
        '127.0.0.1:9000',
      ]);
    });
  }

  it('refuses what it cannot write honestly', () => {
    expectRefusal(
      () => buildClientConfig(request('claude-desktop', { manifest: remote, transport: 'remote' })),
      'BAD_REQUEST',
      undefined,
    );
    expectRefusal(
      () => buildClientConfig(request('vscode', { manifest: remote, transport: 'remote' })),
      'BAD_REQUEST',
      undefined,
    );
    expectRefusal(
      () => buildClientConfig(request('cursor', { manifest: remote, transport: 'stdio' })),
      'BAD_REQUEST',
      undefined,
    );
    expectRefusal(
      () =>
        buildClientConfig(
          request('cursor', {
            manifest: remote,
            transport: 'remote',
            listen: '0.0.0.0:80',
            variables: { tenant_id: 'a' },
          }),
        ),
      'BAD_REQUEST',
      undefined,
    );
  });
});

describe('managed-settings', () => {
  for (const client of MANAGED_CLIENTS) {
    it(`${client}: names, the guarded package commands and the signed remote URLs, in the documented shape`, () => {
      const settings = buildManagedSettings({
        client,
        manifests: [npm, oci, remote],
        registry: 'https://registry.example',
        toolsealCommand: ['toolseal'],
        guardListens: ['127.0.0.1:9000'],
      });
      expectShape(validateManaged, settings);
      const entries = settings['allowedMcpServers'] as Record<string, unknown>[];
      expect(entries.filter((e) => 'serverName' in e)).toEqual([
        { serverName: 'com-example-acme-analytics' },
        { serverName: 'io-github-acme-weather' },
        { serverName: 'io-github-modelcontextprotocol-everything' },
      ]);
      expect(entries).toContainEqual({
        serverCommand: [
          'toolseal',
          'guard',
          '--manifest',
          'io.github.modelcontextprotocol/everything@2026.8.31',
          '--registry',
          'https://registry.example',
          '--',
          'npx',
          '-y',
          '@modelcontextprotocol/server-everything@2026.8.31',
          'stdio',
        ],
      });
      expect(entries.filter((e) => 'serverUrl' in e)).toEqual([
        { serverUrl: 'http://127.0.0.1:9000/mcp' },
        { serverUrl: 'https://*.analytics.example.com/mcp' },
        { serverUrl: 'https://analytics.example.com/sse' },
      ]);
      expect(settings['allowManagedMcpServersOnly']).toBe(client === 'claude-code' ? true : undefined);
    });
  }

  it('the allow-list pins exactly the command client-config writes (same --toolseal), so a config passes its own policy', () => {
    const config = buildClientConfig(request('claude-code', { toolsealCommand: ['toolseal'] })).config;
    const entry = (config['mcpServers'] as Record<string, { command: string; args: string[] }>)[
      formatServerKey(npm.name)
    ];
    const settings = buildManagedSettings({
      client: 'claude-code',
      manifests: [npm],
      registry: 'https://registry.example',
      toolsealCommand: ['toolseal'],
    });
    expect(settings['allowedMcpServers']).toContainEqual({ serverCommand: [entry?.command, ...(entry?.args ?? [])] });
  });
});

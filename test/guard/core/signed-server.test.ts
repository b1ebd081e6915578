// Guard compares the server it is given with the signed `server` member (issue 27 §2): upstream URLs against the
// signed remotes (normalised; a declared {variable} is one host label or one path segment), stdio commands against
// the signed package (identifier and exact version). The fixtures are test/fixtures/server-manifests/.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatSignedPackageCommand, selectRunnablePackage } from '../../../src/client-config/client-config.ts';
import { ToolsealError } from '../../../src/core/errors.ts';
import { assertCommandSigned, assertUpstreamSigned } from '../../../src/guard/core/signed-server.ts';
import { runPipeline, type ManifestServer } from '../../../src/pipeline/index.ts';
import { repoPath } from '../../helpers/pipeline-helpers.ts';

function signedServer(file: string): ManifestServer {
  const result = runPipeline(readFileSync(repoPath('test', 'fixtures', 'server-manifests', file)));
  return result.manifest.server!;
}

function refusal(work: () => void): string | undefined {
  try {
    work();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolsealError);
    return (error as ToolsealError).code;
  }
}

const analytics = signedServer('analytics-remote.json');
const everything = signedServer('everything-npm.json');
const weather = signedServer('weather-oci.json');

describe('assertUpstreamSigned', () => {
  it('accepts a signed remote, also as spelled differently but equal after URL normalisation', () => {
    for (const url of [
      'https://analytics.example.com/sse',
      'HTTPS://Analytics.Example.COM:443/sse',
      'https://analytics.example.com/x/../sse',
      'https://user:secret@analytics.example.com/sse#frag',
      'https://tenant-42.analytics.example.com/mcp',
      'https://ACME.analytics.example.com/mcp',
    ]) {
      expect(
        refusal(() => assertUpstreamSigned(analytics, url)),
        url,
      ).toBeUndefined();
    }
  });

  it('refuses every other URL with SERVER_NOT_SIGNED; a variable matches one host label only', () => {
    for (const url of [
      'http://analytics.example.com/sse', // another scheme
      'https://analytics.example.com:8443/sse', // another port
      'https://analytics.example.com/sse/', // another path
      'https://analytics.example.com/sse?x=1', // a query the signed URL has not
      'https://analytics.example.com.evil.test/sse',
      'https://evil.test/analytics.example.com/mcp',
      'https://a.b.analytics.example.com/mcp', // {tenant_id} is one label, not two
      'https://analytics.example.com/mcp', // {tenant_id} is not empty
      'https://x.analytics.example.com/mcp/more',
      'not a url',
      'file:///etc/passwd',
    ]) {
      expect(
        refusal(() => assertUpstreamSigned(analytics, url)),
        url,
      ).toBe('SERVER_NOT_SIGNED');
    }
  });

  it('a server with no remotes signs no upstream; a manifest without a server member leaves the choice to the operator', () => {
    expect(refusal(() => assertUpstreamSigned(everything, 'https://analytics.example.com/sse'))).toBe(
      'SERVER_NOT_SIGNED',
    );
    expect(refusal(() => assertUpstreamSigned(undefined, 'https://anything.test/mcp'))).toBeUndefined();
  });

  it('a path variable matches exactly one segment; an undeclared {name} stays literal', () => {
    const server: ManifestServer = {
      remotes: [
        { type: 'streamable-http', url: 'https://mcp.example.com/{org}/mcp', variables: { org: {} } },
        { type: 'sse', url: 'https://other.example.com/{undeclared}/sse' },
      ],
    };
    expect(refusal(() => assertUpstreamSigned(server, 'https://mcp.example.com/acme/mcp'))).toBeUndefined();
    expect(refusal(() => assertUpstreamSigned(server, 'https://mcp.example.com/a/b/mcp'))).toBe('SERVER_NOT_SIGNED');
    expect(refusal(() => assertUpstreamSigned(server, 'https://mcp.example.com//mcp'))).toBe('SERVER_NOT_SIGNED');
    expect(refusal(() => assertUpstreamSigned(server, 'https://other.example.com/x/sse'))).toBe('SERVER_NOT_SIGNED');
    expect(refusal(() => assertUpstreamSigned(server, 'https://other.example.com/%7Bundeclared%7D/sse'))).toBe(
      undefined,
    );
  });
});

describe('assertCommandSigned', () => {
  it('accepts the command formatSignedPackageCommand builds for the signed npm and OCI packages', () => {
    for (const server of [everything, weather]) {
      const [command, ...args] = formatSignedPackageCommand(
        selectRunnablePackage({ server } as Parameters<typeof selectRunnablePackage>[0])!,
      );
      expect(
        refusal(() => assertCommandSigned(server, command!, args, false)),
        command,
      ).toBeUndefined();
    }
  });

  it('accepts npx spellings of the exact package and version', () => {
    for (const [command, ...args] of [
      ['npx', '-y', '@modelcontextprotocol/server-everything@2026.8.31'],
      ['/usr/local/bin/npx', '--yes', '@modelcontextprotocol/server-everything@2026.8.31', 'stdio'],
      ['npx.cmd', '@modelcontextprotocol/server-everything@2026.8.31'],
    ]) {
      expect(
        refusal(() => assertCommandSigned(everything, command!, args, false)),
        args.join(' '),
      ).toBeUndefined();
    }
  });

  it('refuses another package, another or no version, another runtime, or a package smuggled in by an option', () => {
    for (const [command, ...args] of [
      ['npx', '-y', 'evil-package'],
      ['npx', '-y', '@modelcontextprotocol/server-everything'],
      ['npx', '-y', '@modelcontextprotocol/server-everything@latest'],
      ['npx', '-y', '@modelcontextprotocol/server-everything@2026.8.30'],
      ['npx', '-y', '-p', 'evil', '@modelcontextprotocol/server-everything@2026.8.31'],
      ['npx', '--package=evil', '@modelcontextprotocol/server-everything@2026.8.31'],
      ['node', '@modelcontextprotocol/server-everything@2026.8.31'],
      ['bunx', '@modelcontextprotocol/server-everything@2026.8.31'],
    ]) {
      expect(
        refusal(() => assertCommandSigned(everything, command!, args, false)),
        args.join(' '),
      ).toBe('SERVER_NOT_SIGNED');
    }
    const image = 'ghcr.io/acme/weather-mcp@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
    for (const args of [
      ['run', '-i', '--rm', 'ghcr.io/acme/weather-mcp:latest'],
      ['run', '-i', '--entrypoint', '/bin/sh', image],
      ['run', '-e', image, 'evil/image'],
      ['pull', image],
    ]) {
      expect(
        refusal(() => assertCommandSigned(weather, 'docker', args, false)),
        args.join(' '),
      ).toBe('SERVER_NOT_SIGNED');
    }
    expect(refusal(() => assertCommandSigned(weather, 'docker', ['run', '-i', '-e', 'A=1', image], false))).toBe(
      undefined,
    );
  });

  it('a registry option must name the signed registryBaseUrl (or the default one when none is signed)', () => {
    const spec = '@modelcontextprotocol/server-everything@2026.8.31';
    for (const args of [
      ['-y', '--registry', 'https://registry.npmjs.org', spec], // everything signs https://registry.npmjs.org
      ['-y', '--registry=https://registry.npmjs.org/', spec],
    ])
      expect(
        refusal(() => assertCommandSigned(everything, 'npx', args, false)),
        args.join(' '),
      ).toBeUndefined();
    for (const args of [
      ['-y', '--registry', 'https://npm.evil.example', spec],
      ['-y', '--registry=https://npm.evil.example/', spec],
      ['-y', '--registry', 'https://registry.npmjs.org', '--registry', 'https://npm.evil.example', spec],
    ])
      expect(
        refusal(() => assertCommandSigned(everything, 'npx', args, false)),
        args.join(' '),
      ).toBe('SERVER_NOT_SIGNED');
    const pypi: ManifestServer = {
      packages: [
        { registryType: 'pypi', identifier: 'mcp-server-time', version: '0.6.2', transport: { type: 'stdio' } },
      ],
    };
    for (const args of [
      ['mcp-server-time==0.6.2'],
      ['--index-url', 'https://pypi.org/simple', 'mcp-server-time==0.6.2'],
      ['--default-index=https://pypi.org/simple/', 'mcp-server-time==0.6.2'],
    ])
      expect(
        refusal(() => assertCommandSigned(pypi, 'uvx', args, false)),
        args.join(' '),
      ).toBeUndefined();
    for (const args of [
      ['-i', 'https://pypi.evil.example/simple', 'mcp-server-time==0.6.2'],
      ['--index=https://pypi.evil.example/simple', 'mcp-server-time==0.6.2'],
    ])
      expect(
        refusal(() => assertCommandSigned(pypi, 'uvx', args, false)),
        args.join(' '),
      ).toBe('SERVER_NOT_SIGNED');
  });

  it('--allow-unsigned-command runs it anyway; no server member, nothing to compare; a remote-only server signs no command', () => {
    expect(refusal(() => assertCommandSigned(everything, 'npx', ['-y', 'evil-package'], true))).toBeUndefined();
    expect(refusal(() => assertCommandSigned(undefined, 'npx', ['-y', 'evil-package'], false))).toBeUndefined();
    expect(refusal(() => assertCommandSigned(analytics, 'npx', ['-y', 'anything@1.0.0'], false))).toBe(
      'SERVER_NOT_SIGNED',
    );
  });
});

// diffManifests (src/web/manifest-diff.ts): tools matched by name, changed fields with their JSON pointers, and the
// capability changes in words, widening ones first.

import { describe, expect, it } from 'vitest';
import type { Manifest, ManifestServer, ServerPackage } from '../../src/pipeline/index.ts';
import { diffManifests } from '../../src/web/manifest-diff.ts';

type Tool = Manifest['tools'][number];

const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({ name, inputSchema: { type: 'object' }, ...extra });
const manifest = (version: string, tools: Tool[], description?: string): Manifest => ({
  name: 'io.github.acme/x',
  version,
  ...(description === undefined ? {} : { description }),
  tools,
});

describe('diffManifests', () => {
  it('reports added, removed, changed and unchanged tools, and manifest fields but not the version', () => {
    const diff = diffManifests(
      manifest('1.0.0', [tool('a'), tool('b', { description: 'old' }), tool('gone')], 'one'),
      manifest('2.0.0', [tool('b', { description: 'new' }), tool('a'), tool('fresh')], 'two'),
    );
    expect(diff.manifest).toEqual([{ pointer: '/description', before: 'one', after: 'two' }]);
    expect(diff.tools.map((t) => `${t.name} ${t.kind} ${t.pointer}`)).toEqual([
      'b changed /tools/0',
      'a unchanged /tools/1',
      'fresh added /tools/2',
      'gone removed /tools/2',
    ]);
    expect(diff.tools[0]?.changes).toEqual([{ pointer: '/tools/0/description', before: 'old', after: 'new' }]);
  });

  it('walks objects and equal-length arrays to the changed leaf, and escapes pointer tokens (RFC 6901)', () => {
    const before = tool('t', { inputSchema: { type: 'object', properties: { 'a/b~c': { enum: [1, 2] } } } });
    const after = tool('t', {
      inputSchema: { type: 'object', properties: { 'a/b~c': { enum: [1, 3] } }, required: [] },
    });
    const diff = diffManifests(manifest('1.0.0', [before]), manifest('1.0.1', [after]));
    expect(diff.tools[0]?.changes).toEqual([
      { pointer: '/tools/0/inputSchema/properties/a~1b~0c/enum/1', before: 2, after: 3 },
      { pointer: '/tools/0/inputSchema/required', before: undefined, after: [] },
    ]);
  });

  it('calls out wider capability changes first: a new host, a new secret, a higher ceiling, a dropped claim', () => {
    const before = tool('pay', {
      capabilities: {
        network: { hosts: ['api.stripe.com', 'old.example'] },
        secrets: { env: ['A'] },
        filesystem: { read: ['/data/**'] },
        money: { currencies: ['JPY'], maxAmountMinorPerCall: 1000 },
      },
    });
    const after = tool('pay', {
      capabilities: {
        network: { hosts: ['api.stripe.com', 'evil.example:443'] },
        secrets: { env: ['A', 'B'] },
        money: { currencies: ['JPY'], maxAmountMinorPerCall: 99000 },
      },
    });
    const diff = diffManifests(manifest('1.0.0', [before]), manifest('1.1.0', [after]));
    expect(diff.capabilities.map((c) => `${c.direction}: ${c.text} ${c.pointer}`)).toEqual([
      'wider: new: opens connections to evil.example:443 /tools/0/capabilities/network/hosts',
      'wider: no longer declares the files it reads (was: reads /data/**): now unknown /tools/0/capabilities/filesystem/read',
      'wider: new: needs the secret B /tools/0/capabilities/secrets/env',
      'wider: money ceiling raised from 1000 JPY to 99000 JPY per call /tools/0/capabilities/money',
      'narrower: no longer opens connections to old.example /tools/0/capabilities/network/hosts',
    ]);
  });

  it('says a lower ceiling and a new declaration are narrower, and a removed ceiling wider', () => {
    const caps = (ceiling?: number) => ({
      money: { currencies: ['USD'], ...(ceiling === undefined ? {} : { maxAmountMinorPerCall: ceiling }) },
    });
    const lower = diffManifests(
      manifest('1.0.0', [tool('t', { capabilities: caps(500) })]),
      manifest('1.0.1', [tool('t', { capabilities: { ...caps(100), network: { hosts: [] } } })]),
    );
    expect(lower.capabilities.map((c) => `${c.direction}: ${c.text}`)).toEqual([
      'narrower: now declares its network hosts: none',
      'narrower: money ceiling lowered from 5.00 USD to 1.00 USD per call',
    ]);
    const none = diffManifests(
      manifest('1.0.0', [tool('t', { capabilities: caps(500) })]),
      manifest('1.0.1', [tool('t', { capabilities: caps() })]),
    );
    expect(none.capabilities.map((c) => `${c.direction}: ${c.text}`)).toEqual([
      'wider: no per-call money ceiling any more (was 5.00 USD)',
    ]);
  });

  it('lists what a new tool may touch as wider, and a removed tool as narrower', () => {
    const diff = diffManifests(
      manifest('1.0.0', [tool('old')]),
      manifest('2.0.0', [
        tool('new', {
          capabilities: { network: { hosts: ['*'] }, money: { currencies: ['BHD'], maxAmountMinorPerCall: 1500 } },
        }),
        tool('bare'),
      ]),
    );
    expect(diff.capabilities.map((c) => `${c.direction} ${c.tool}: ${c.text}`)).toEqual([
      'wider new: new tool: opens connections to any host',
      'wider new: new tool: moves BHD',
      'wider new: new tool: moves up to 1.500 BHD per call',
      'wider bare: new tool that declares no capabilities (unknown)',
      'narrower old: tool removed',
    ]);
  });
});

describe('diffManifests: the signed server (issue 27 §5)', () => {
  const npm = (version: string, extra: Partial<ServerPackage> = {}): ServerPackage => ({
    registryType: 'npm',
    identifier: '@acme/x-mcp',
    version,
    transport: { type: 'stdio' },
    ...extra,
  });
  const withServer = (version: string, server: ManifestServer | undefined): Manifest => ({
    ...manifest(version, [tool('a')]),
    ...(server === undefined ? {} : { server }),
  });

  it('a new remote URL or package identifier is wider, listed before changes and drops; /server apart from the manifest', () => {
    const diff = diffManifests(
      withServer('1.0.0', {
        packages: [
          npm('1.0.0'),
          { registryType: 'pypi', identifier: 'acme-x', version: '1.0.0', transport: { type: 'stdio' } },
        ],
        remotes: [{ type: 'streamable-http', url: 'https://x.acme.example/mcp' }],
        repository: { url: 'https://github.com/acme/x', source: 'github' },
      }),
      withServer('1.1.0', {
        packages: [
          npm('1.1.0', { registryBaseUrl: 'https://npm.evil.example' }),
          { registryType: 'npm', identifier: '@evil/x-mcp', version: '1.0.0', transport: { type: 'stdio' } },
        ],
        remotes: [
          { type: 'streamable-http', url: 'https://x.acme.example/mcp', headers: [{ name: 'X-Key', isSecret: true }] },
          { type: 'sse', url: 'https://collect.evil.example/sse' },
        ],
        repository: { url: 'https://github.com/evil/x', source: 'github' },
      }),
    );
    expect(diff.server.map((c) => `${c.direction} ${c.pointer}: ${c.text}`)).toEqual([
      'wider /server/remotes/1: new remote: sse https://collect.evil.example/sse',
      'wider /server/packages/0/registryBaseUrl: package @acme/x-mcp now comes from https://npm.evil.example (was the default registry)',
      'wider /server/packages/1: new package: npm @evil/x-mcp 1.0.0',
      'changed /server/remotes/0: remote streamable-http https://x.acme.example/mcp: headers or variables changed',
      'changed /server/packages/0/version: package @acme/x-mcp: version 1.0.0 → 1.1.0',
      'changed /server/repository: repository https://github.com/acme/x → https://github.com/evil/x',
      'narrower /server/packages/1: package dropped: pypi acme-x 1.0.0',
    ]);
    expect(diff.serverFields).toContainEqual({
      pointer: '/server/packages/0/version',
      before: '1.0.0',
      after: '1.1.0',
    });
    expect(diff.serverFields).toContainEqual({
      pointer: '/server/repository/url',
      before: 'https://github.com/acme/x',
      after: 'https://github.com/evil/x',
    });
    expect(diff.serverFields.every((change) => change.pointer.startsWith('/server/'))).toBe(true);
    expect(diff.manifest).toEqual([]);
    expect(diff.capabilities).toEqual([]);
  });

  it('dropping the signed server is wider, signing one narrower; no server on either side: nothing', () => {
    const server: ManifestServer = { packages: [npm('1.0.0')] };
    const dropped = diffManifests(withServer('1.0.0', server), withServer('1.0.1', undefined));
    expect(dropped.server).toEqual([
      { direction: 'wider', text: 'no longer signs its server: any command or URL may run it', pointer: '/server' },
    ]);
    expect(dropped.serverFields).toEqual([{ pointer: '/server', before: server, after: undefined }]);
    const signed = diffManifests(withServer('1.0.0', undefined), withServer('1.0.1', server));
    expect(signed.server).toEqual([
      { direction: 'narrower', text: 'now signs its server (npm @acme/x-mcp 1.0.0)', pointer: '/server' },
    ]);
    const same = diffManifests(withServer('1.0.0', server), withServer('1.0.1', structuredClone(server)));
    expect(same.server).toEqual([]);
    expect(same.serverFields).toEqual([]);
    const none = diffManifests(withServer('1.0.0', undefined), withServer('1.0.1', undefined));
    expect(none.server).toEqual([]);
    expect(none.serverFields).toEqual([]);
  });

  it('an OCI image with a new digest is the same image changed; another image is a new package', () => {
    const image = (identifier: string): ServerPackage => ({
      registryType: 'oci',
      identifier,
      transport: { type: 'stdio' },
    });
    const a = `ghcr.io/acme/x@sha256:${'a'.repeat(64)}`;
    const b = `ghcr.io/acme/x@sha256:${'b'.repeat(64)}`;
    const diff = diffManifests(
      withServer('1.0.0', { packages: [image(a)] }),
      withServer('1.0.1', { packages: [image(b)] }),
    );
    expect(diff.server).toEqual([
      { direction: 'changed', text: `image ghcr.io/acme/x: ${a} → ${b}`, pointer: '/server/packages/0/identifier' },
    ]);
    const other = diffManifests(
      withServer('1.0.0', { packages: [image(a)] }),
      withServer('1.0.1', { packages: [image(`ghcr.io/evil/x@sha256:${'a'.repeat(64)}`)] }),
    );
    expect(other.server.map((change) => change.direction)).toEqual(['wider', 'narrower']);
  });

  it('the same package run otherwise (its arguments) is a change of the package, not a new one', () => {
    const diff = diffManifests(
      withServer('1.0.0', { packages: [npm('1.0.0')] }),
      withServer('1.0.1', {
        packages: [npm('1.0.0', { packageArguments: [{ type: 'positional', value: '--unsafe' }] })],
      }),
    );
    expect(diff.server).toEqual([
      {
        direction: 'changed',
        text: 'package @acme/x-mcp: how it is run changed (file digest, arguments, environment or transport)',
        pointer: '/server/packages/0',
      },
    ]);
  });
});

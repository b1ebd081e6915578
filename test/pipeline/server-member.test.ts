// The signed `server` member (issue 27 §1): valid npm, OCI and remote servers pass and are signed with the tools;
// every bad input is refused with its code and pointer; the official server.json schema (vendored) agrees.

import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import formatsPlugin from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import {
  composeServerDetail,
  deriveServerDescription,
  SERVER_DESCRIPTION_MAX,
} from '../../src/pipeline/server-member.ts';
import { encodeJson, expectRefusal, repoPath, vectorPath } from '../helpers/pipeline-helpers.ts';

type Json = Record<string, unknown>;

const fixtureDir = repoPath('test', 'fixtures', 'server-manifests');
const fixtures = ['everything-npm.json', 'weather-oci.json', 'analytics-remote.json'];

function readFixture(file: string): Json {
  return JSON.parse(readFileSync(`${fixtureDir}/${file}`, 'utf8')) as Json;
}

/** A fresh copy of the npm fixture; each refusal case changes one thing through `edit`. */
function npmManifest(edit: (server: Json & { packages: Json[] }) => void = () => {}): Json {
  const manifest = readFixture('everything-npm.json');
  edit(manifest['server'] as Json & { packages: Json[] });
  return manifest;
}

function remoteManifest(edit: (server: Json & { remotes: Json[] }) => void): Json {
  const manifest = readFixture('analytics-remote.json');
  edit(manifest['server'] as Json & { remotes: Json[] });
  return manifest;
}

function publish(manifest: Json): ReturnType<typeof runPipeline> {
  return runPipeline(encodeJson(manifest));
}

// The vendored official schema, compiled here on its own (not through src/), as a second opinion.
const vendoredSchemaBytes = readFileSync(vectorPath('mcp-registry', 'server.schema.json'));
const officialAjv = new Ajv({ strict: false });
formatsPlugin.default(officialAjv);
const validateOfficial = officialAjv.compile(JSON.parse(vendoredSchemaBytes.toString('utf8')));

describe('valid servers', () => {
  it('ships the vendored server.json schema byte for byte', () => {
    expect(readFileSync(repoPath('schema', 'mcp-server.schema.json')).equals(vendoredSchemaBytes)).toBe(true);
  });

  for (const file of fixtures) {
    it(`${file}: passes, keeps the server in the signed bytes, and is a server.json the official schema accepts`, () => {
      const manifest = readFixture(file);
      const result = publish(manifest);
      const signed = JSON.parse(new TextDecoder().decode(result.canonicalBytes)) as Json;
      expect(signed['server']).toEqual(manifest['server']);
      const detail = composeServerDetail(result.manifest);
      expect(validateOfficial(detail), JSON.stringify(validateOfficial.errors)).toBe(true);
      expect(detail?.['name']).toBe(manifest['name']);
      expect(detail?.['version']).toBe(manifest['version']);
    });
  }

  it('signs the server: changing the package identifier, its version or a remote URL changes the digest', () => {
    const base = publish(npmManifest()).digest;
    expect(
      publish(npmManifest((s) => (s.packages[0] = { ...s.packages[0], identifier: 'evil-package' }))).digest,
    ).not.toBe(base);
    expect(publish(npmManifest((s) => (s.packages[0] = { ...s.packages[0], version: '2026.8.30' }))).digest).not.toBe(
      base,
    );
    const remote = publish(readFixture('analytics-remote.json')).digest;
    const moved = remoteManifest((s) => {
      s.remotes[1] = { type: 'sse', url: 'https://analytics.example.net/sse' };
    });
    expect(publish(moved).digest).not.toBe(remote);
    const { server: _server, ...withoutServer } = npmManifest();
    expect(publish(withoutServer).digest).not.toBe(base);
  });

  it('property: member order inside the server never changes the digest', () => {
    const manifest = npmManifest();
    const base = publish(manifest).digest;
    fc.assert(
      fc.property(fc.infiniteStream(fc.integer()), (stream) => {
        const shuffle = (value: unknown): unknown => {
          if (Array.isArray(value)) return value.map(shuffle);
          if (value === null || typeof value !== 'object') return value;
          const entries = Object.entries(value as Json).map(([k, v]) => [k, shuffle(v)] as const);
          const keyed = entries.map((entry) => ({ entry, rank: stream.next().value as number }));
          keyed.sort((a, b) => a.rank - b.rank);
          return Object.fromEntries(keyed.map((k) => k.entry));
        };
        expect(publish({ ...manifest, server: shuffle(manifest['server']) }).digest).toBe(base);
      }),
      { numRuns: 50 },
    );
  });

  it('property: any exact package version is signed as sent, and two different versions never share a digest', () => {
    const version = fc
      .tuple(fc.nat(999), fc.nat(999), fc.nat(999))
      .map(([major, minor, patch]) => `${major}.${minor}.${patch}`);
    fc.assert(
      fc.property(version, version, (a, b) => {
        fc.pre(a !== b);
        const withVersion = (v: string) => npmManifest((s) => (s.packages[0] = { ...s.packages[0], version: v }));
        expect(publish(withVersion(a)).digest).not.toBe(publish(withVersion(b)).digest);
      }),
      { numRuns: 50 },
    );
  });
});

describe('bad servers', () => {
  const packageAt = '/server/packages/0';

  it.each([
    ['a caret range', '^1.2.3'],
    ['a tilde range', '~1.2'],
    ['a comparison', '>=1.0.0'],
    ['an x range', '1.x'],
    ['a star', '1.*'],
    ['an or-range', '1.0.0 || 2.0.0'],
    ['the latest tag', 'latest'],
    ['an empty version', ''],
  ])('refuses %s as a package version', (_label, version) => {
    expectRefusal(
      () => publish(npmManifest((s) => (s.packages[0] = { ...s.packages[0], version }))),
      'INVALID_MANIFEST',
      `${packageAt}/version`,
    );
  });

  it('refuses an npm package without a version', () => {
    const manifest = npmManifest((s) => {
      delete s.packages[0]?.['version'];
    });
    expectRefusal(() => publish(manifest), 'INVALID_MANIFEST', `${packageAt}/version`);
  });

  it('refuses an unknown registryType and an unknown package member', () => {
    expectRefusal(
      () => publish(npmManifest((s) => (s.packages[0] = { ...s.packages[0], registryType: 'cargo' }))),
      'INVALID_MANIFEST',
      `${packageAt}/registryType`,
    );
    expectRefusal(
      () => publish(npmManifest((s) => (s.packages[0] = { ...s.packages[0], postInstall: 'rm -rf /' }))),
      'UNKNOWN_FIELD',
      `${packageAt}/postInstall`,
    );
  });

  it('refuses an OCI image named by tag only, and an mcpb package without its SHA-256', () => {
    const oci = readFixture('weather-oci.json');
    ((oci['server'] as Json)['packages'] as Json[])[0] = {
      registryType: 'oci',
      identifier: 'ghcr.io/acme/weather-mcp:latest',
      transport: { type: 'stdio' },
    };
    expectRefusal(() => publish(oci), 'INVALID_MANIFEST', `${packageAt}/identifier`);
    const mcpb = npmManifest((s) => {
      s.packages[0] = {
        registryType: 'mcpb',
        identifier: 'https://github.com/acme/x/releases/download/v1/x.mcpb',
        transport: { type: 'stdio' },
      };
    });
    expectRefusal(() => publish(mcpb), 'INVALID_MANIFEST', `${packageAt}/fileSha256`);
  });

  it('refuses bad URLs: http off loopback, no URL at all, credentials, an undeclared variable, a plain URL', () => {
    const cases: [string, string][] = [
      ['http://analytics.example.com/mcp', '/server/remotes/0/url'],
      ['not a url', '/server/remotes/0/url'],
      ['https://user:pass@analytics.example.com/mcp', '/server/remotes/0/url'],
      ['https://{region}.analytics.example.com/mcp', '/server/remotes/0/url'],
      ['{tenant_id}/mcp', '/server/remotes/0/url'],
      ['https://{tenant_id}/mcp', '/server/remotes/0/url'],
      ['ftp://analytics.example.com/mcp', '/server/remotes/0/url'],
    ];
    for (const [url, pointer] of cases) {
      const manifest = remoteManifest((s) => (s.remotes[0] = { ...s.remotes[0], url }));
      expectRefusal(() => publish(manifest), 'INVALID_MANIFEST', pointer);
    }
    const website = npmManifest((s) => (s['websiteUrl'] = 'http://example.com'));
    expectRefusal(() => publish(website), 'INVALID_MANIFEST', '/server/websiteUrl');
    const loopback = remoteManifest((s) => (s.remotes[1] = { type: 'sse', url: 'http://127.0.0.1:8080/sse' }));
    expect(() => publish(loopback)).not.toThrow();
  });

  it('refuses what only the official schema rules out: a named argument without a name, a bare positional', () => {
    const named = npmManifest((s) => (s.packages[0] = { ...s.packages[0], packageArguments: [{ type: 'named' }] }));
    const refusal = expectRefusal(() => publish(named), 'INVALID_MANIFEST', `${packageAt}/packageArguments/0`);
    expect(refusal.message).toContain('server.json schema');
    const positional = npmManifest(
      (s) => (s.packages[0] = { ...s.packages[0], packageArguments: [{ type: 'positional', description: 'x' }] }),
    );
    expectRefusal(() => publish(positional), 'INVALID_MANIFEST', `${packageAt}/packageArguments/0`);
  });

  it('refuses a server that says nothing about how to reach it, and a stdio transport with a URL', () => {
    expectRefusal(() => publish({ ...npmManifest(), server: { title: 'x' } }), 'INVALID_MANIFEST', '/server');
    const stdioUrl = npmManifest(
      (s) => (s.packages[0] = { ...s.packages[0], transport: { type: 'stdio', url: 'https://a.example/mcp' } }),
    );
    expectRefusal(() => publish(stdioUrl), 'INVALID_MANIFEST', `${packageAt}/transport`);
  });

  it.each([
    ['a right-to-left override in a remote URL', '\u202e', 'url'],
    ['a bell control in a remote URL', '\u0007', 'url'],
    ['a zero-width space in a remote URL', '\u200b', 'url'],
    ['a tag character in a remote URL', '\u{E0041}', 'url'],
  ])('refuses %s with HIDDEN_CHARACTER', (_label, char) => {
    const manifest = remoteManifest(
      (s) => (s.remotes[1] = { type: 'sse', url: `https://analytics.example.com/${char}sse` }),
    );
    expectRefusal(() => publish(manifest), 'HIDDEN_CHARACTER', '/server/remotes/1/url');
  });

  it('refuses hidden characters anywhere in the server: identifiers, descriptions, variable names', () => {
    const identifier = npmManifest(
      (s) => (s.packages[0] = { ...s.packages[0], identifier: '@modelcontextprotocol/server-every\u200dthing' }),
    );
    expectRefusal(() => publish(identifier), 'HIDDEN_CHARACTER', `${packageAt}/identifier`);
    const description = npmManifest((s) => {
      s.packages[0] = {
        ...s.packages[0],
        environmentVariables: [{ name: 'LOG_LEVEL', description: 'level\u2066 hidden' }],
      };
    });
    expectRefusal(() => publish(description), 'HIDDEN_CHARACTER', `${packageAt}/environmentVariables/0/description`);
    const key = remoteManifest((s) => {
      s.remotes[0] = { ...s.remotes[0], variables: { 'tenant\u200b_id': { description: 'x' } } };
    });
    expectRefusal(() => publish(key), 'HIDDEN_CHARACTER', '/server/remotes/0/variables/tenant\u200b_id');
  });
});

describe('deriveServerDescription', () => {
  const base = { name: 'io.github.acme/payments', version: '1.0.0' };

  it('uses the description, else the title, else the name', () => {
    expect(deriveServerDescription({ ...base, description: 'Acme payments' })).toBe('Acme payments');
    expect(deriveServerDescription({ ...base, description: '  \n ', server: { title: 'Payments' } })).toBe('Payments');
    expect(deriveServerDescription(base)).toBe('io.github.acme/payments');
  });

  it('cuts a long description at a word boundary and marks the cut', () => {
    const words = 'word '.repeat(40).trim();
    const derived = deriveServerDescription({ ...base, description: words });
    expect(derived).toBe(`${'word '.repeat(20).trim()}…`); // 20 words are 99 characters, the ellipsis the 100th
    expect([...derived].length).toBeLessThanOrEqual(SERVER_DESCRIPTION_MAX);
  });

  it('skips a description that is one word longer than the limit', () => {
    expect(deriveServerDescription({ ...base, description: 'x'.repeat(150), server: { title: 'Pay' } })).toBe('Pay');
  });

  it('property: 1 to 100 code points, a word-prefix of the source, never empty', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'é', ' ', '\n', '😀', 'Z'), maxLength: 300 });
    fc.assert(
      fc.property(text, (description) => {
        const derived = deriveServerDescription({ ...base, description });
        const length = [...derived].length;
        expect(length).toBeGreaterThanOrEqual(1);
        expect(length).toBeLessThanOrEqual(SERVER_DESCRIPTION_MAX);
        const normal = description.replace(/\s+/gu, ' ').trim();
        if (normal === '') {
          expect(derived).toBe(base.name);
          return;
        }
        if (derived === normal) return;
        if (derived === base.name) {
          expect(normal.length).toBeGreaterThan(SERVER_DESCRIPTION_MAX);
          return;
        }
        expect(derived.endsWith('…')).toBe(true);
        const kept = derived.slice(0, -1);
        expect(normal.startsWith(`${kept} `)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

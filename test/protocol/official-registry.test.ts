// The official MCP Registry read API's answers (issue 27 §3), validated against the vendored OpenAPI document's own
// schemas (test/vectors/mcp-registry/openapi.yaml 2025-12-01, compiled with ajv as JSON Schema 2020-12, the dialect
// the document declares): ServerResponse, ServerList (an empty one too), the 404 bodies.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { computeToolDigest } from '../../src/dispatch/action-digest.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import {
  OFFICIAL_META_KEY,
  TOOLSEAL_META_KEY,
  decodeServerNameSegment,
  decodeVersionSegment,
  formatNotFoundBody,
  formatServerList,
  formatServerResponse,
  officialVersionPath,
  type OfficialServerResponse,
  type StoredServerVersion,
} from '../../src/protocol/official-registry.ts';
import {
  expectValid,
  openapi,
  notFoundPointers,
  schemaAt,
  validateServerList,
  validateServerResponse,
} from '../helpers/official-openapi.ts';
import { encodeJson, repoPath, vectorPath } from '../helpers/pipeline-helpers.ts';

type Json = Record<string, unknown>;

const fixtures = ['everything-npm.json', 'weather-oci.json', 'analytics-remote.json'];

function storedVersion(file: string, change: Partial<StoredServerVersion> = {}): StoredServerVersion {
  const bytes = readFileSync(repoPath('test', 'fixtures', 'server-manifests', file));
  const result = runPipeline(bytes);
  return {
    manifest: result.manifest,
    digest: result.digest,
    status: 'active',
    publishedAt: '2026-11-30T10:00:00.000Z',
    updatedAt: '2026-11-30T10:00:00.000Z',
    isLatest: true,
    logIndex: 41,
    evidence: {
      attestationUrl: `https://registry.example/v1/manifests/${result.name}/${result.version}/attestation`,
      bundleUrl: `https://registry.example/v1/attestations/${result.digest}`,
    },
    ...change,
  };
}

function respond(version: StoredServerVersion): OfficialServerResponse {
  const response = formatServerResponse(version);
  if (response === undefined) throw new Error('expected a server response');
  return response;
}

describe('ServerResponse', () => {
  for (const file of fixtures) {
    it(`${file}: validates against the OpenAPI ServerResponse schema`, () => {
      expectValid(validateServerResponse, respond(storedVersion(file)));
    });
  }

  it('puts exactly status, publishedAt, updatedAt and isLatest under the official key; a yank is deprecated', () => {
    const active = respond(storedVersion('everything-npm.json'));
    expect(active._meta[OFFICIAL_META_KEY]).toEqual({
      status: 'active',
      publishedAt: '2026-11-30T10:00:00.000Z',
      updatedAt: '2026-11-30T10:00:00.000Z',
      isLatest: true,
    });
    const yanked = respond(
      storedVersion('everything-npm.json', {
        status: 'yanked',
        yankReason: 'wrong package',
        updatedAt: '2026-12-01T08:00:00.000Z',
        isLatest: false,
      }),
    );
    expectValid(validateServerResponse, yanked);
    expect(yanked._meta[OFFICIAL_META_KEY]).toEqual({
      status: 'deprecated',
      publishedAt: '2026-11-30T10:00:00.000Z',
      updatedAt: '2026-12-01T08:00:00.000Z',
      isLatest: false,
    });
    expect(yanked._meta[TOOLSEAL_META_KEY].yankReason).toBe('wrong package');
    expect(active._meta[TOOLSEAL_META_KEY]).not.toHaveProperty('yankReason');
  });

  it('the OpenAPI schema refuses any other member under the official key (so ours lives under its own key)', () => {
    const response = respond(storedVersion('everything-npm.json')) as unknown as Json;
    const meta = response['_meta'] as Json;
    const tampered = {
      ...response,
      _meta: { ...meta, [OFFICIAL_META_KEY]: { ...(meta[OFFICIAL_META_KEY] as Json), digest: 'x' } },
    };
    expect(validateServerResponse(tampered)).toBe(false);
    const longDescription = { ...response, server: { ...(response['server'] as Json), description: 'x'.repeat(101) } };
    expect(validateServerResponse(longDescription)).toBe(false); // the ServerDetail $ref is checked too
  });

  it('carries the manifest digest, one digest per tool (the action digest toolDigest), evidence URLs and log index', () => {
    const version = storedVersion('everything-npm.json', {
      evidence: { attestationUrl: 'a', bundleUrl: 'b', tlogProofUrl: 'c' },
    });
    const ours = respond(version)._meta[TOOLSEAL_META_KEY];
    expect(ours).toEqual({
      manifest: 'io.github.modelcontextprotocol/everything@2026.8.31',
      digest: version.digest,
      tools: version.manifest.tools.map((tool) => ({
        name: tool.name,
        digest: computeToolDigest(tool as unknown as Parameters<typeof computeToolDigest>[0]),
      })),
      status: 'active',
      attestationUrl: 'a',
      bundleUrl: 'b',
      tlogProofUrl: 'c',
      logIndex: 41,
    });
  });

  it('the server is the signed server member with the manifest name, version and derived description', () => {
    const version = storedVersion('analytics-remote.json');
    const { server } = respond(version);
    expect(server['name']).toBe('com.example/acme-analytics');
    expect(server['version']).toBe('2.0.0');
    expect(server['description']).toBe('ACME Analytics'); // no description: the title
    expect(server['remotes']).toEqual((version.manifest.server as Json)['remotes']);
  });

  it('a manifest without a server member has no official answer', () => {
    const bytes = encodeJson({
      name: 'io.example.test/plain',
      version: '1.0.0',
      tools: [{ name: 't', inputSchema: { type: 'object' } }],
    });
    const result = runPipeline(bytes);
    expect(
      formatServerResponse({ ...storedVersion('everything-npm.json'), manifest: result.manifest }),
    ).toBeUndefined();
  });
});

describe('ServerList and 404', () => {
  it('validates a page with a cursor, a last page without one, and an empty registry', () => {
    const responses = fixtures.map((file) => respond(storedVersion(file)));
    const first = formatServerList(responses.slice(0, 2), 'opaque-cursor');
    expectValid(validateServerList, first);
    expect(first.metadata).toEqual({ nextCursor: 'opaque-cursor', count: 2 });
    const last = formatServerList(responses.slice(2), null);
    expectValid(validateServerList, last);
    expect(last.metadata).toEqual({ count: 1 });
    const empty = formatServerList([], null);
    expectValid(validateServerList, empty);
    expect(empty).toEqual({ servers: [], metadata: { count: 0 } });
  });

  it('404 bodies match both GET routes’ documented 404 schema', () => {
    for (const pointer of notFoundPointers) {
      const validate = schemaAt(pointer);
      expectValid(validate, formatNotFoundBody('server'));
      expectValid(validate, formatNotFoundBody('version'));
    }
    expect(formatNotFoundBody('server')).toEqual({ error: 'Server not found' });
  });
});

describe('path segments', () => {
  it('decodes a URL-encoded server name and refuses one that is not encoded or not a manifest name', () => {
    expect(decodeServerNameSegment('io.github.acme%2Fpayments')).toBe('io.github.acme/payments');
    expect(decodeServerNameSegment('io.github.acme%2fpayments')).toBe('io.github.acme/payments');
    expect(decodeServerNameSegment('io.github.acme/payments')).toBeUndefined();
    expect(decodeServerNameSegment('io.github.acme')).toBeUndefined();
    expect(decodeServerNameSegment('IO.github.acme%2FPayments')).toBeUndefined();
    expect(decodeServerNameSegment('io.github.acme%2Fpay%E0')).toBeUndefined();
    expect(decodeServerNameSegment('io.github.acme%2F..%2Fx')).toBeUndefined();
  });

  it('decodes versions with build metadata and keeps latest', () => {
    expect(decodeVersionSegment('1.0.0%2B20130313144700')).toBe('1.0.0+20130313144700');
    expect(decodeVersionSegment('latest')).toBe('latest');
    expect(decodeVersionSegment('1.0.0%2Fx')).toBeUndefined();
    expect(decodeVersionSegment('%E0')).toBeUndefined();
    expect(officialVersionPath('io.github.acme/payments', '1.0.0+b')).toBe(
      '/v0.1/servers/io.github.acme%2Fpayments/versions/1.0.0%2Bb',
    );
  });
});

describe('the vendored documents agree', () => {
  it('server.schema.json is the OpenAPI document’s components.schemas (refs renamed)', () => {
    const serverSchema = JSON.parse(readFileSync(vectorPath('mcp-registry', 'server.schema.json'), 'utf8')) as {
      definitions: Json;
    };
    const components = (openapi['components'] as { schemas: Json }).schemas;
    const sorted = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(sorted);
      if (value === null || typeof value !== 'object') return value;
      return Object.fromEntries(
        Object.keys(value as Json)
          .sort()
          .map((key) => [key, sorted((value as Json)[key])]),
      );
    };
    for (const [name, definition] of Object.entries(serverSchema.definitions)) {
      const fromOpenapi = JSON.parse(
        JSON.stringify(components[name]).replaceAll('#/components/schemas/', '#/definitions/'),
      );
      expect(sorted(definition), name).toEqual(sorted(fromOpenapi));
    }
  });
});

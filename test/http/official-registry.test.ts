// GET /v0.1/servers… (issue 27 §3): a registry holding npm, OCI and remote servers answers every route so that the
// vendored OpenAPI document's schemas validate each answer; pagination to the end, an empty registry, a yanked version
// (deprecated), the official 404s, CORS and OPTIONS preflight, and never a version whose bytes fail their digest.

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { OFFICIAL_META_KEY, TOOLSEAL_META_KEY, officialVersionPath } from '../../src/protocol/official-registry.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import {
  expectValid,
  notFoundPointers,
  schemaAt,
  validateServerList,
  validateServerResponse,
} from '../helpers/official-openapi.ts';
import { repoPath } from '../helpers/pipeline-helpers.ts';
import {
  cleanupTempDirs,
  corruptBlob,
  createTestEnv,
  expectProblem,
  manifestBytes,
  postManifest,
  postYank,
  type TestEnv,
  utf8,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

type Json = Record<string, unknown>;
interface ServerList {
  servers: { server: Json; _meta: Record<string, Json> }[];
  metadata: { nextCursor?: string; count: number };
}

function fixture(file: string, version?: string): Uint8Array {
  const text = readFileSync(repoPath('test', 'fixtures', 'server-manifests', file), 'utf8');
  if (version === undefined) return utf8(text);
  return utf8(JSON.stringify({ ...(JSON.parse(text) as Json), version }));
}

const EVERYTHING = 'io.github.modelcontextprotocol/everything';
const WEATHER = 'io.github.acme/weather';
const ANALYTICS = 'com.example/acme-analytics';

/** npm, OCI and remote servers; weather in three versions (3.0.0 yanked); a manifest without a server. */
async function setup(): Promise<TestEnv> {
  const env = await createTestEnv();
  const mcpToken = await env.addPublisher('io.github.modelcontextprotocol');
  const exampleToken = await env.addPublisher('com.example');
  const publish = async (bytes: Uint8Array, token: string): Promise<void> => {
    const response = await postManifest(env.app, bytes, token);
    expect(response.status, await response.clone().text()).toBe(201);
  };
  await publish(fixture('everything-npm.json'), mcpToken);
  await publish(fixture('weather-oci.json'), env.token);
  await publish(fixture('weather-oci.json', '2.5.0'), env.token);
  await publish(fixture('weather-oci.json', '3.0.0'), env.token);
  await publish(fixture('analytics-remote.json'), exampleToken);
  await publish(manifestBytes(), env.token); // io.github.acme/widgets: no server member
  const yank = await postYank(
    env.app,
    '/v1/manifests/io.github.acme/weather/3.0.0',
    { reason: 'bad image' },
    env.token,
  );
  expect(yank.status).toBe(200);
  return env;
}

async function getJson(env: TestEnv, path: string, status = 200): Promise<unknown> {
  const response = await env.app.request(path);
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get('Content-Type')).toMatch(/^application\/json/);
  expect(response.headers.get('Access-Control-Allow-Origin')).toBe('*');
  return JSON.parse(text);
}

const refOf = (entry: ServerList['servers'][number]): string =>
  `${entry.server['name'] as string}@${entry.server['version'] as string}`;

const ALL = [
  `${ANALYTICS}@2.0.0`,
  `${WEATHER}@2.5.0`,
  `${WEATHER}@3.0.0`,
  `${WEATHER}@3.1.0`,
  `${EVERYTHING}@2026.8.31`,
];

describe('GET /v0.1/servers', () => {
  it('an empty registry answers an empty, valid list', async () => {
    const env = await createTestEnv();
    const body = await getJson(env, '/v0.1/servers');
    expectValid(validateServerList, body);
    expect(body).toEqual({ servers: [], metadata: { count: 0 } });
    await env.close();
  });

  it('pages through every server version to the end (limit=2), each page valid, no manifest without a server', async () => {
    const env = await setup();
    const seen: string[] = [];
    let path = '/v0.1/servers?limit=2';
    for (let pages = 0; pages < 10; pages++) {
      const body = (await getJson(env, path)) as ServerList;
      expectValid(validateServerList, body);
      for (const entry of body.servers) expectValid(validateServerResponse, entry);
      expect(body.metadata.count).toBe(body.servers.length);
      seen.push(...body.servers.map(refOf));
      if (body.metadata.nextCursor === undefined) break;
      path = `/v0.1/servers?limit=2&cursor=${encodeURIComponent(body.metadata.nextCursor)}`;
    }
    expect(seen).toEqual(ALL);
    const whole = (await getJson(env, '/v0.1/servers')) as ServerList;
    expect(whole.servers.map(refOf)).toEqual(ALL);
    expect(whole.metadata).toEqual({ count: 5 });
    await env.close();
  });

  it('version=latest, an exact version, search by name, updated_since', async () => {
    const env = await setup();
    const latest = (await getJson(env, '/v0.1/servers?version=latest')) as ServerList;
    expectValid(validateServerList, latest);
    expect(latest.servers.map(refOf)).toEqual([`${ANALYTICS}@2.0.0`, `${WEATHER}@3.1.0`, `${EVERYTHING}@2026.8.31`]);
    for (const entry of latest.servers) expect(entry._meta[OFFICIAL_META_KEY]!['isLatest']).toBe(true);
    const exact = (await getJson(env, '/v0.1/servers?version=2.5.0')) as ServerList;
    expect(exact.servers.map(refOf)).toEqual([`${WEATHER}@2.5.0`]);
    const search = (await getJson(env, '/v0.1/servers?search=WEATHER&version=latest')) as ServerList;
    expect(search.servers.map(refOf)).toEqual([`${WEATHER}@3.1.0`]);
    // The search matches names only: a word only in a description finds nothing.
    expect(((await getJson(env, '/v0.1/servers?search=reference')) as ServerList).servers).toEqual([]);
    const future = (await getJson(env, '/v0.1/servers?updated_since=2999-01-01T00:00:00Z')) as ServerList;
    expect(future).toEqual({ servers: [], metadata: { count: 0 } });
    const past = (await getJson(env, '/v0.1/servers?updated_since=2000-01-01T00:00:00.000Z')) as ServerList;
    expect(past.servers.map(refOf)).toEqual(ALL);
    await env.close();
  });

  it('refuses a bad limit, cursor, updated_since or include_deleted like the /v1 API (problem+json, CORS kept)', async () => {
    const env = await setup();
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=1e1',
      'limit=-1',
      'cursor=!!',
      `cursor=${Buffer.from('no-at-sign').toString('base64url')}`,
      'updated_since=yesterday',
      'updated_since=2025-01-01',
      'include_deleted=yes',
    ]) {
      const response = await env.app.request(`/v0.1/servers?${query}`);
      expect(response.headers.get('Access-Control-Allow-Origin'), query).toBe('*');
      await expectProblem(response, 'BAD_REQUEST');
    }
    await env.close();
  });
});

describe('include_deleted', () => {
  it('changes no answer: nothing is ever deleted here, and a yanked version is listed as deprecated either way', async () => {
    const env = await setup();
    for (const path of [
      '/v0.1/servers',
      '/v0.1/servers?limit=2',
      `/v0.1/servers?updated_since=${encodeURIComponent('2000-01-01T00:00:00Z')}`,
      `/v0.1/servers/${encodeURIComponent(WEATHER)}/versions`,
      officialVersionPath(WEATHER, '3.0.0'),
      officialVersionPath(WEATHER, 'latest'),
    ]) {
      const join = path.includes('?') ? '&' : '?';
      const plain = JSON.stringify(await getJson(env, path));
      expect(JSON.stringify(await getJson(env, `${path}${join}include_deleted=false`)), path).toBe(plain);
      expect(JSON.stringify(await getJson(env, `${path}${join}include_deleted=true`)), path).toBe(plain);
    }
    const yanked = (await getJson(env, `${officialVersionPath(WEATHER, '3.0.0')}?include_deleted=false`)) as {
      _meta: Record<string, Json>;
    };
    expect(yanked._meta[OFFICIAL_META_KEY]!['status']).toBe('deprecated');
    const list = (await getJson(env, '/v0.1/servers?include_deleted=false')) as ServerList;
    expect(list.servers.map((entry) => entry._meta[OFFICIAL_META_KEY]!['status'])).toContain('deprecated');
    await env.close();
  });
});

describe('GET /v0.1/servers/{serverName}/versions[/{version}]', () => {
  it('lists every version of a server, newest publication first, the yanked one deprecated', async () => {
    const env = await setup();
    const body = (await getJson(env, `/v0.1/servers/${encodeURIComponent(WEATHER)}/versions`)) as ServerList;
    expectValid(validateServerList, body);
    // Published 3.1.0, 2.5.0, then 3.0.0: newest publication first is not semver order.
    expect(body.servers.map(refOf)).toEqual([`${WEATHER}@3.0.0`, `${WEATHER}@2.5.0`, `${WEATHER}@3.1.0`]);
    expect(body.metadata).toEqual({ count: 3 });
    const statuses = body.servers.map((entry) => entry._meta[OFFICIAL_META_KEY]!['status']);
    expect(statuses).toEqual(['deprecated', 'active', 'active']);
    expect(body.servers[0]!._meta[TOOLSEAL_META_KEY]!['yankReason']).toBe('bad image');
    await env.close();
  });

  it('answers each version and latest, valid, with the digest of the stored bytes and absolute evidence URLs', async () => {
    const env = await setup();
    for (const [file, name, version] of [
      ['everything-npm.json', EVERYTHING, '2026.8.31'],
      ['weather-oci.json', WEATHER, '3.1.0'],
      ['analytics-remote.json', ANALYTICS, '2.0.0'],
    ] as const) {
      const digest = runPipeline(fixture(file)).digest;
      for (const asked of [version, 'latest']) {
        const body = (await getJson(env, officialVersionPath(name, asked))) as ServerList['servers'][number];
        expectValid(validateServerResponse, body);
        expect(refOf(body)).toBe(`${name}@${version}`);
        expect(body._meta[OFFICIAL_META_KEY]).toMatchObject({ status: 'active', isLatest: true });
        const ours = body._meta[TOOLSEAL_META_KEY]!;
        expect(ours['digest']).toBe(digest);
        expect(ours['bundleUrl']).toBe(`http://127.0.0.1:8787/v1/attestations/${digest}`);
        expect(ours['attestationUrl']).toBe(`http://127.0.0.1:8787/v1/manifests/${name}/${version}/attestation`);
        // The Sigstore bundle (issue 26) is linked too, and answers on this registry.
        const sigstoreBundleUrl = `http://127.0.0.1:8787/v1/manifests/${name}/${version}/bundle`;
        expect(ours['sigstoreBundleUrl']).toBe(sigstoreBundleUrl);
        const bundle = await env.app.request(new URL(sigstoreBundleUrl).pathname);
        expect(bundle.status).toBe(200);
        expect(bundle.headers.get('Content-Type')).toBe('application/vnd.dev.sigstore.bundle.v0.3+json');
        expect(JSON.parse(await bundle.text())).toMatchObject({
          mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
        });
      }
    }
    const yanked = (await getJson(env, officialVersionPath(WEATHER, '3.0.0'))) as ServerList['servers'][number];
    expectValid(validateServerResponse, yanked);
    expect(yanked._meta[OFFICIAL_META_KEY]).toMatchObject({ status: 'deprecated', isLatest: false });
    await env.close();
  });

  it('404 with the official body: unknown server, name not URL-encoded, unknown version, a manifest without a server', async () => {
    const env = await setup();
    const cases: [string, string][] = [
      [`/v0.1/servers/${encodeURIComponent('io.github.acme/nothing')}/versions`, 'Server not found'],
      ['/v0.1/servers/io.github.acme/weather/versions', 'Server not found'],
      ['/v0.1/servers/io.github.acme/weather/versions/3.1.0', 'Server not found'],
      ['/v0.1/servers/weather/versions/latest', 'Server not found'],
      [`/v0.1/servers/${encodeURIComponent('io.github.acme/widgets')}/versions`, 'Server not found'],
      [officialVersionPath('io.github.acme/widgets', '1.0.0'), 'Server not found'],
      [officialVersionPath(WEATHER, '9.9.9'), 'Server version not found'],
    ];
    for (const [path, error] of cases) {
      const body = await getJson(env, path, 404);
      expect(body, path).toEqual({ error });
      for (const pointer of notFoundPointers) expectValid(schemaAt(pointer), body);
    }
    await env.close();
  });

  it('never serves a version whose stored bytes fail their digest', async () => {
    const env = await setup();
    const digest = runPipeline(fixture('analytics-remote.json')).digest;
    const forged = Buffer.from(runPipeline(fixture('analytics-remote.json', '2.0.1')).canonicalBytes);
    corruptBlob(env, digest, forged);
    for (const path of [
      officialVersionPath(ANALYTICS, '2.0.0'),
      officialVersionPath(ANALYTICS, 'latest'),
      `/v0.1/servers/${encodeURIComponent(ANALYTICS)}/versions`,
      '/v0.1/servers',
    ]) {
      const response = await env.app.request(path);
      const raw = await response.clone().text();
      expect(raw, path).not.toContain('2.0.1');
      await expectProblem(response, 'INTEGRITY_ERROR');
    }
    await env.close();
  });
});

describe('CORS', () => {
  it('OPTIONS preflight on every route is 204 with the CORS headers; GET answers carry them', async () => {
    const env = await setup();
    for (const path of [
      '/v0.1/servers',
      `/v0.1/servers/${encodeURIComponent(WEATHER)}/versions`,
      officialVersionPath(WEATHER, 'latest'),
    ]) {
      const preflight = await env.app.request(path, {
        method: 'OPTIONS',
        headers: { Origin: 'https://vscode.dev', 'Access-Control-Request-Method': 'GET' },
      });
      expect(preflight.status, path).toBe(204);
      expect(preflight.headers.get('Access-Control-Allow-Origin')).toBe('*');
      expect(preflight.headers.get('Access-Control-Allow-Methods')).toBe('GET, OPTIONS');
      expect(preflight.headers.get('Access-Control-Allow-Headers')).toBe('Authorization, Content-Type');
      const get = await env.app.request(path, { headers: { Origin: 'https://vscode.dev' } });
      expect(get.status).toBe(200);
      expect(get.headers.get('Access-Control-Allow-Methods')).toBe('GET, OPTIONS');
    }
    // The /v1 API is not opened to browsers by this.
    expect((await env.app.request('/v1/manifests')).headers.get('Access-Control-Allow-Origin')).toBeNull();
    await env.close();
  });
});

describe('methods', () => {
  it('another method on a /v0.1 route is 405 METHOD_NOT_ALLOWED with Allow (RFC 9110 §15.5.6), never 404; HEAD answers', async () => {
    const env = await setup();
    for (const path of [
      '/v0.1/servers',
      `/v0.1/servers/${encodeURIComponent(WEATHER)}/versions`,
      officialVersionPath(WEATHER, '2.5.0'),
      officialVersionPath(WEATHER, 'latest'),
    ]) {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        const response = await env.app.request(path, { method, body: method === 'DELETE' ? null : '{}' });
        expect(response.status, `${method} ${path}`).toBe(405);
        expect(response.headers.get('Allow')).toBe('GET, HEAD, OPTIONS');
        expect(response.headers.get('Access-Control-Allow-Origin')).toBe('*');
        await expectProblem(response, 'METHOD_NOT_ALLOWED');
      }
      const head = await env.app.request(path, { method: 'HEAD' });
      expect(head.status, `HEAD ${path}`).toBe(200);
      expect(await head.text()).toBe('');
    }
    // Outside /v0.1/servers nothing is mounted: 404, not 405.
    expect((await env.app.request('/v0.1/publish', { method: 'POST', body: '{}' })).status).toBe(404);
    await env.close();
  });
});

// GET /openapi.json (issue 29 item 4): the document validates as OpenAPI 3.1 (@seriousme/openapi-schema-validator,
// the official 3.1 schema), names exactly the routes Hono has mounted, and a real registry's answers, each route's
// successes and refusals, match it: the status is documented for that operation, the media type is listed for it, and
// the body validates (ajv, JSON Schema 2020-12) against the document's schema for that status. (Every other test's
// answers through createTestEnv's app are checked the same way: test/helpers/openapi-conformance.ts.)

import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/core/errors.ts';
import { createApp } from '../../src/http/index.ts';
import { EVERY_ROUTE_CODES } from '../../src/http/operation-spec.ts';
import { OPERATIONS } from '../../src/http/operations.ts';
import { httpStatusByCode } from '../../src/http/problem.ts';
import { formatEntryBundlePath } from '../../src/log/index.ts';
import {
  approvalConsumePath,
  approvalDecisionPath,
  approvalPath,
  attestationPath,
  blobPath,
  bundleByDigestPath,
  bundlePath,
  attestationsByDigestPath,
  consistencyProofPath,
  inclusionProofPath,
  LOG_PREFIX,
  versionPath,
} from '../../src/protocol/routes.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { mountWebRoutes } from '../../src/web/index.ts';
import { PAGE_ROUTES } from '../../src/web/paths.ts';
import { buildEnvelope, decisionBody, REFUNDS_MANIFEST } from '../helpers/approval-helpers.ts';
import { DocumentChecker, type OpenApiDocument } from '../helpers/openapi-conformance.ts';
import { repoPath } from '../helpers/pipeline-helpers.ts';
import { cleanupTempDirs, makeTempDir, manifestBytes, utf8 } from '../helpers/registry-helpers.ts';

type Json = Record<string, unknown>;

const METHODS = ['get', 'post', 'options'];

let server: RunningRegistryServer;
let document: OpenApiDocument;
let checker: DocumentChecker;
let publisherToken: string;
let hostToken: string;
let operatorToken: string;
/** `operationId status` of every answer the suite checked against the document. */
const seen = new Set<string>();

beforeAll(async () => {
  server = await startRegistryServer({ dataDir: ':memory:', keysDir: makeTempDir(), port: 0 });
  publisherToken = (await server.registry.createPublisher('io.github.acme')).token;
  hostToken = (await server.registry.createPrincipal('host', 'host-a')).token;
  operatorToken = (await server.registry.createPrincipal('operator', 'alice')).token;
  const response = await fetch(`${server.url}/openapi.json`);
  expect(response.status).toBe(200);
  document = (await response.json()) as OpenApiDocument;
  checker = new DocumentChecker(document);
});

afterAll(async () => {
  await server?.close();
  cleanupTempDirs();
});

/** Send a request and check its answer against the document; the answer's body is returned as text. */
async function call(
  method: string,
  path: string,
  options: { token?: string; body?: Uint8Array | string; headers?: Record<string, string>; status: number },
): Promise<{ response: Response; text: string }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    redirect: 'manual',
    headers: {
      ...(options.token === undefined ? {} : { Authorization: `Bearer ${options.token}` }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: options.body as RequestInit['body'] }),
  });
  const text = await response.text();
  const what = `${method} ${path} → ${response.status} ${text.slice(0, 300)}`;
  expect(response.status, what).toBe(options.status);
  const url = new URL(path, server.url);
  const found = checker.findOperation(method, url.pathname);
  if (found === undefined) throw new Error(`no operation in the document for ${what}`);
  const { template, operation, values } = found;
  const at = (...tokens: string[]): string[] => ['paths', template, found.method, ...tokens];
  // What was sent: path and query parameters against their schemas, an accepted body against the request body's.
  for (const [index, parameter] of (operation.parameters ?? []).entries()) {
    const value =
      parameter.in === 'path' ? values[parameter.name] : (url.searchParams.get(parameter.name) ?? undefined);
    if (value === undefined) {
      if (parameter.required === true) expect(response.status, `${what}: without ${parameter.name}`).toBe(400);
      continue;
    }
    if (response.status < 400)
      checker.expectValidAt(at('parameters', String(index), 'schema'), value, `${what}: ${parameter.name}`);
  }
  for (const name of url.searchParams.keys()) {
    expect(
      operation.parameters?.some((parameter) => parameter.name === name),
      `${what}: query ${name}`,
    ).toBe(true);
  }
  if (options.body !== undefined && response.status < 300) {
    expect(operation.requestBody, `${what}: a body the document does not describe`).toBeDefined();
    const sent = typeof options.body === 'string' ? options.body : new TextDecoder().decode(options.body);
    checker.expectValidAt(
      at('requestBody', 'content', 'application/json', 'schema'),
      JSON.parse(sent),
      `${what}: body sent`,
    );
  }
  // What came back: the status documented for the operation, its headers, media type and body.
  checker.expectAnswer(found, method, response, text, what);
  seen.add(`${operation.operationId} ${response.status}`);
  return { response, text };
}

describe('the document', () => {
  it('is valid OpenAPI 3.1 (the official schema)', async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result, JSON.stringify(result.errors)).toEqual({ valid: true });
    expect(document['openapi']).toMatch(/^3\.1\./);
  });

  it('has one operationId per operation, and every problem status is the status of each code listed under it', () => {
    const ids: string[] = [];
    for (const item of Object.values(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (operation === undefined) continue;
        ids.push(operation.operationId);
        for (const [status, response] of Object.entries(operation.responses)) {
          const schema = response.content?.['application/problem+json']?.schema as { allOf?: Json[] } | undefined;
          if (schema === undefined) continue;
          const narrowed = schema.allOf?.[1] as { properties: { code: { enum: ErrorCode[] } } };
          for (const code of narrowed.properties.code.enum) expect(httpStatusByCode[code], code).toBe(Number(status));
        }
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('lists the HTTP parser refusals under every operation', () => {
    for (const item of Object.values(document.paths)) {
      for (const method of ['get', 'post']) {
        const operation = item[method];
        if (operation === undefined) continue;
        for (const code of EVERY_ROUTE_CODES) {
          const listed = operation.responses[String(httpStatusByCode[code])]?.content?.['application/problem+json'];
          const codes = (listed?.schema as { allOf: { properties: { code: { enum: string[] } } }[] } | undefined)
            ?.allOf[1]?.properties.code.enum;
          expect(codes, `${operation.operationId} ${code}`).toContain(code);
        }
      }
    }
  });

  it('declares each path template parameter on every operation of that path, and no other path parameter', () => {
    for (const [template, item] of Object.entries(document.paths)) {
      const names = [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).sort();
      for (const method of METHODS) {
        const operation = item[method];
        if (operation === undefined) continue;
        const declared = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path');
        expect(declared.map((parameter) => parameter.name).sort(), `${method} ${template}`).toEqual(names);
        for (const parameter of declared) expect(parameter.required, `${template} ${parameter.name}`).toBe(true);
      }
    }
  });

  it('describes the manifest body with the shipped manifest schema', () => {
    const shipped = JSON.parse(readFileSync(repoPath('schema', 'manifest-v1.schema.json'), 'utf8')) as Json;
    expect((document['components'] as { schemas: Json }).schemas['Manifest']).toEqual(shipped);
  });
});

describe('the document and the mounted routes', () => {
  /** A route pattern with each parameter (`:name`, `:name{regex}`, `{name}`, `*`) as `{}`. */
  function normalise(path: string): string {
    return path
      .split('/')
      .map((segment) => (segment.startsWith(':') || segment === '*' || /^\{[^}]*\}$/.test(segment) ? '{}' : segment))
      .join('/');
  }

  it('names exactly the routes Hono has mounted (pages aside), and the CORS middleware is the /v0.1 preflight', () => {
    const app = createApp({ registry: server.registry, mountPages: mountWebRoutes });
    const pages = new Set<string>(Object.values(PAGE_ROUTES));
    const mounted = app.routes
      .filter((route) => route.method !== 'ALL' && !pages.has(route.path))
      .map((route) => `${route.method} ${normalise(route.path)}`);
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      ['get', 'post']
        .filter((method) => item[method] !== undefined)
        .map((m) => `${m.toUpperCase()} ${normalise(path)}`),
    );
    // A route with middleware (publish: authenticate, then read) is one entry per handler: compare as sets.
    expect([...new Set(mounted)].sort()).toEqual([...documented].sort());
    // Middleware (method ALL): only the /v0.1 CORS handler, which answers OPTIONS on every documented /v0.1 path.
    expect(app.routes.filter((route) => route.method === 'ALL').map((route) => route.path)).toEqual(['/v0.1/*']);
    for (const [path, item] of Object.entries(document.paths)) {
      expect(item['options'] !== undefined, path).toBe(path.startsWith('/v0.1/'));
    }
  });

  it('has an entry per operation of the table', () => {
    const documented = Object.values(document.paths).flatMap((item) =>
      ['get', 'post'].flatMap((method) => (item[method] === undefined ? [] : [item[method].operationId])),
    );
    expect(documented.sort()).toEqual(
      Object.values(OPERATIONS)
        .map((operation) => operation.operationId)
        .sort(),
    );
  });
});

describe("a registry's answers match the document", () => {
  let digest = '';
  let size = 0;
  const widgets = 'io.github.acme/widgets';

  it('meta: /healthz, the JWKS, the document itself and its 304', async () => {
    await call('GET', '/healthz', { status: 200 });
    await call('GET', '/.well-known/jwks.json', { status: 200 });
    const { response } = await call('GET', '/openapi.json', { status: 200 });
    expect(response.headers.get('Cache-Control')).toMatch(/^public, max-age=\d+$/);
    const etag = response.headers.get('ETag') ?? '';
    await call('GET', '/openapi.json', { status: 304, headers: { 'If-None-Match': etag } });
    // Another method is 405 with Allow, as on every route (the document says so once, in info).
    const post = await fetch(`${server.url}/openapi.json`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('Allow')).toBe('GET, HEAD');
    const head = await fetch(`${server.url}/openapi.json`, { method: 'HEAD' });
    expect([head.status, head.headers.get('Content-Type')]).toEqual([200, 'application/json']);
  });

  it('publish: 201, 200 for the same bytes, and its refusals', async () => {
    const bytes = manifestBytes();
    const created = await call('POST', '/v1/manifests', { token: publisherToken, body: bytes, status: 201 });
    digest = (JSON.parse(created.text) as { digest: string }).digest;
    await call('POST', '/v1/manifests', { token: publisherToken, body: bytes, status: 200 });
    await call('POST', '/v1/manifests', { body: bytes, status: 401 });
    await call('POST', '/v1/manifests', { token: publisherToken, body: '{"name":"a","name":"b"}', status: 422 });
    const changed = manifestBytes({ description: 'other bytes, same version' });
    await call('POST', '/v1/manifests', { token: publisherToken, body: changed, status: 409 });
    const weather = readFileSync(repoPath('test', 'fixtures', 'server-manifests', 'weather-oci.json'));
    await call('POST', '/v1/manifests', { token: publisherToken, body: new Uint8Array(weather), status: 201 });
    await call('POST', '/v1/manifests', { token: publisherToken, body: new Uint8Array(2 * 1024 * 1024), status: 413 });
  });

  it('reads: listings, versions, bytes, attestations, blobs, bindings', async () => {
    await call('GET', '/v1/manifests?q=acme&limit=5', { status: 200 });
    await call('GET', '/v1/manifests?limit=0', { status: 400 });
    await call('GET', `/v1/manifests/${widgets}`, { status: 200 });
    await call('GET', '/v1/manifests/io.github.acme/nothing', { status: 404 });
    const version = await call('GET', versionPath(widgets, '1.0.0'), { status: 200 });
    const etag = version.response.headers.get('ETag') ?? '';
    await call('GET', versionPath(widgets, '1.0.0'), { status: 304, headers: { 'If-None-Match': etag } });
    await call('GET', versionPath(widgets, 'latest'), { status: 302 });
    await call('GET', versionPath(widgets, '9.9.9'), { status: 404 });
    const attestation = await call('GET', attestationPath(widgets, '1.0.0'), { status: 200 });
    const attestationEtag = attestation.response.headers.get('ETag') ?? '';
    await call('GET', attestationPath(widgets, '1.0.0'), {
      status: 304,
      headers: { 'If-None-Match': attestationEtag },
    });
    await call('GET', attestationPath(widgets, '9.9.9'), { status: 404 });
    await call('GET', blobPath(digest), { status: 200 });
    await call('GET', blobPath(digest), { status: 304, headers: { 'If-None-Match': `"${digest}"` } });
    await call('GET', blobPath(`sha256:${'0'.repeat(64)}`), { status: 404 });
    await call('GET', attestationsByDigestPath(digest), { status: 200 });
    await call('GET', attestationsByDigestPath(`sha256:${'0'.repeat(64)}`), { status: 404 });
    // The Sigstore bundle and the trusted root (issue 26).
    await call('GET', bundlePath(widgets, '1.0.0'), { status: 200 });
    await call('GET', bundlePath(widgets, '9.9.9'), { status: 404 });
    await call('GET', bundleByDigestPath(digest), { status: 200 });
    await call('GET', bundleByDigestPath(`sha256:${'0'.repeat(64)}`), { status: 404 });
    await call('GET', '/v1/sigstore/trusted-root.json', { status: 200 });
  });

  it('the log: checkpoint, key, tiles and proofs', async () => {
    const checkpoint = await call('GET', '/v1/log/checkpoint', { status: 200 });
    size = Number(checkpoint.text.split('\n')[1]);
    expect(size).toBeGreaterThan(1);
    await call('GET', '/v1/log/key', { status: 200 });
    await call('GET', `${LOG_PREFIX}${formatEntryBundlePath(0, size)}`, { status: 200 });
    await call('GET', `${LOG_PREFIX}${formatEntryBundlePath(0, 255)}`, { status: 404 });
    await call('GET', inclusionProofPath(0, size), { status: 200 });
    await call('GET', '/v1/log/proof/inclusion?index=x&size=1', { status: 400 });
    await call('GET', consistencyProofPath(1, size), { status: 200 });
    await call('GET', '/v1/log/proof/consistency?from=1&to=-1', { status: 400 });
  });

  it('yank: 200, and a body with another member is UNKNOWN_FIELD', async () => {
    const path = `${versionPath(widgets, '1.0.0')}/yank`;
    await call('POST', path, { token: publisherToken, body: '{"reason":"x","why":"y"}', status: 422 });
    await call('POST', path, { body: '{"reason":"x"}', status: 401 });
    await call('POST', path, { token: publisherToken, body: '{"reason":"superseded"}', status: 200 });
  });

  it('approvals: whoami, request, list, read, decide, consume', async () => {
    await call('GET', '/v1/whoami', { token: hostToken, status: 200 });
    await call('GET', '/v1/whoami', { status: 401 });
    const actions = await server.registry.createPublisher('io.example.actions');
    await server.registry.publish(REFUNDS_MANIFEST, actions.publisher);
    const envelope = await buildEnvelope(server.registry);
    const created = await call('POST', '/v1/approvals', { token: hostToken, body: envelope, status: 201 });
    const { id, digest: actionDigest } = JSON.parse(created.text) as { id: string; digest: string };
    await call('POST', '/v1/approvals', { token: hostToken, body: envelope, status: 200 });
    await call('POST', '/v1/approvals', { token: operatorToken, body: envelope, status: 403 });
    await call('GET', '/v1/approvals?status=pending', { token: operatorToken, status: 200 });
    await call('GET', '/v1/approvals?status=nope', { token: operatorToken, status: 400 });
    await call('GET', approvalPath(id), { token: hostToken, status: 200 });
    await call('GET', approvalPath(`apr_${'A'.repeat(22)}`), { token: hostToken, status: 404 });
    const wrong = decisionBody('approve', `sha256:${'1'.repeat(64)}`);
    await call('POST', approvalDecisionPath(id), { token: operatorToken, body: wrong, status: 409 });
    const approve = decisionBody('approve', actionDigest);
    await call('POST', approvalDecisionPath(id), { token: operatorToken, body: approve, status: 200 });
    await call('POST', approvalConsumePath(id), { token: hostToken, body: envelope, status: 200 });
    await call('POST', approvalConsumePath(id), { token: hostToken, body: envelope, status: 409 });
  });

  it('the MCP Registry read API: lists, versions, the official 404s and the preflight', async () => {
    await call('GET', '/v0.1/servers?limit=10', { status: 200 });
    await call('GET', '/v0.1/servers?limit=abc', { status: 400 });
    await call('GET', '/v0.1/servers/io.github.acme%2Fweather/versions', { status: 200 });
    await call('GET', '/v0.1/servers/io.github.acme%2Fweather/versions/latest', { status: 200 });
    await call('GET', '/v0.1/servers/io.github.acme%2Fnothing/versions', { status: 404 });
    await call('GET', '/v0.1/servers/io.github.acme%2Fweather/versions/9.9.9', { status: 404 });
    await call('GET', '/v0.1/servers/io.github.acme/weather/versions', { status: 404 });
    for (const path of [
      '/v0.1/servers',
      '/v0.1/servers/a%2Fb/versions',
      '/v0.1/servers/a%2Fb/versions/1.0.0',
      '/v0.1/servers/a',
    ])
      await call('OPTIONS', path, { status: 204 });
  });

  it('every non-problem answer the document lists was seen, and a problem answer of every operation', () => {
    for (const item of Object.values(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (operation === undefined) continue;
        const statuses = Object.entries(operation.responses);
        for (const [status, response] of statuses) {
          if (response.content?.['application/problem+json'] !== undefined) continue;
          expect(seen.has(`${operation.operationId} ${status}`), `${operation.operationId} ${status}`).toBe(true);
        }
      }
    }
    const refused = new Set(
      [...seen].filter((key) => Number(key.split(' ')[1]) >= 400).map((key) => key.split(' ')[0]),
    );
    const quiet = [
      'getHealth',
      'getJwks',
      'getOpenApiDocument',
      'getCheckpoint',
      'getLogKey',
      'getSigstoreTrustedRoot',
    ];
    for (const operation of Object.values(OPERATIONS)) {
      if (quiet.includes(operation.operationId)) continue;
      expect(refused.has(operation.operationId), `a refusal of ${operation.operationId}`).toBe(true);
    }
  });
});

describe('a document served behind another origin', () => {
  it('names that origin as its server', async () => {
    expect(document['servers']).toEqual([{ url: server.origin }]);
    expect(utf8(JSON.stringify(document)).byteLength).toBeGreaterThan(1000);
  });
});

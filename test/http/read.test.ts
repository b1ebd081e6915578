// The read path through app.request(): exact bytes and their headers, 304, latest, attestations, blobs, auditor query, listings.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectUsableKeys, verifyAttestation, computeKid, type Jwks } from '../../src/attest/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import {
  bodyBytes,
  cleanupTempDirs,
  createTestEnv,
  digestOfBytes,
  expectProblem,
  makeManifest,
  manifestBytes,
  postManifest,
  postYank,
  reprDigestOf,
  sampleTool,
  sha256Hex,
  utf8,
  type TestEnv,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

const IMMUTABLE = 'public, max-age=31536000, immutable';

async function publishOk(
  env: TestEnv,
  bytes: Uint8Array | string,
  token = env.token,
): Promise<{ digest: string; url: string; logIndex: number }> {
  const response = await postManifest(env.app, bytes, token);
  expect([200, 201], await response.clone().text()).toContain(response.status);
  return (await response.json()) as { digest: string; url: string; logIndex: number };
}

function expectContentHeaders(response: Response, bytes: Uint8Array): void {
  const hex = sha256Hex(bytes);
  expect(response.headers.get('Content-Type')).toBe('application/json');
  expect(response.headers.get('ETag')).toBe(`"sha256:${hex}"`);
  expect(response.headers.get('Repr-Digest')).toBe(reprDigestOf(bytes));
  expect(response.headers.get('Content-Length')).toBe(String(bytes.byteLength));
  expect(response.headers.get('Cache-Control')).toBe(IMMUTABLE);
  expect(response.headers.get('Content-Encoding')).toBeNull();
}

describe('GET /v1/manifests/{ns}/{name}/{version}', () => {
  let env: TestEnv;
  let uploaded: Uint8Array;
  let canonical: Uint8Array;
  beforeAll(async () => {
    env = await createTestEnv();
    // Pretty-printed, with refs, an NFD tool name and non-ASCII free text: what is served is the canonical form.
    uploaded = utf8(
      JSON.stringify(
        makeManifest({
          description: 'Caf\u00e9 \u{1F600} \u2028 "quoted" <tag> & \\ backslash',
          tools: [
            {
              name: 'cafe\u0301',
              inputSchema: {
                type: 'object',
                properties: { a: { $ref: '#/$defs/a' } },
                $defs: { a: { type: 'number', minimum: 1e2, description: 'z\u00e9' } },
              },
            },
          ],
        }),
        null,
        4,
      ),
    );
    canonical = runPipeline(uploaded).canonicalBytes;
    await publishOk(env, uploaded);
  });
  afterAll(async () => await env.close());

  it('serves exactly runPipeline(uploaded).canonicalBytes with ETag, Repr-Digest, Content-Length, Cache-Control and Link', async () => {
    for (let i = 0; i < 2; i++) {
      const response = await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0');
      expect(response.status).toBe(200);
      const bytes = await bodyBytes(response);
      expect(Buffer.from(bytes).equals(Buffer.from(canonical))).toBe(true);
      expect(Buffer.from(bytes).equals(Buffer.from(uploaded))).toBe(false);
      expectContentHeaders(response, canonical);
      expect(response.headers.get('Link')).toBe(
        '</v1/manifests/io.github.acme/widgets/1.0.0/attestation>; rel="attestation"; type="application/jose+json"',
      );
    }
  });

  it('sha256 of the bytes = ETag = Repr-Digest = the attestation subject digest, and the attestation verifies with the JWKS', async () => {
    const response = await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0');
    const bytes = await bodyBytes(response);
    const digest = digestOfBytes(bytes);
    expect(response.headers.get('ETag')).toBe(`"${digest}"`);
    expect(
      Buffer.from(response.headers.get('Repr-Digest')!.slice('sha-256=:'.length, -1), 'base64').toString('hex'),
    ).toBe(digest.slice(7));
    const attestation = await bodyBytes(
      await env.app.request(response.headers.get('Link')!.slice(1, response.headers.get('Link')!.indexOf('>'))),
    );
    const jwks = (await (await env.app.request('/.well-known/jwks.json')).json()) as Jwks;
    const verified = await verifyAttestation(attestation, jwks, {
      name: 'io.github.acme/widgets',
      version: '1.0.0',
      digest,
    });
    expect(verified.digest).toBe(digest);
    expect(verified.subjectName).toBe('io.github.acme/widgets@1.0.0');
  });

  it('If-None-Match with the ETag gives 304 without a body; another tag gives 200', async () => {
    const etag = `"${digestOfBytes(canonical)}"`;
    for (const header of [etag, `"sha256:${'0'.repeat(64)}", ${etag}`]) {
      const response = await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0', {
        headers: { 'If-None-Match': header },
      });
      expect(response.status).toBe(304);
      expect(response.headers.get('ETag')).toBe(etag);
      expect((await bodyBytes(response)).byteLength).toBe(0);
    }
    const other = await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0', {
      headers: { 'If-None-Match': `"sha256:${'0'.repeat(64)}"` },
    });
    expect(other.status).toBe(200);
    expect(Buffer.from(await bodyBytes(other)).equals(Buffer.from(canonical))).toBe(true);
  });

  it('If-None-Match compares weakly (RFC 9110 §13.1.2): W/"…" and * give 304 too', async () => {
    const etag = `"${digestOfBytes(canonical)}"`;
    for (const header of [`W/${etag}`, '*', `W/"sha256:${'1'.repeat(64)}", W/${etag}`]) {
      const response = await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0', {
        headers: { 'If-None-Match': header },
      });
      expect(response.status, header).toBe(304);
    }
  });

  it('a known path with another method is 405 METHOD_NOT_ALLOWED with Allow; a 401 names the Bearer scheme', async () => {
    const put = await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0', { method: 'PUT', body: '{}' });
    await expectProblem(put, 'METHOD_NOT_ALLOWED');
    expect(put.headers.get('Allow')).toBe('GET, HEAD');
    const deleteAll = await env.app.request('/v1/manifests', { method: 'DELETE' });
    await expectProblem(deleteAll, 'METHOD_NOT_ALLOWED');
    expect(deleteAll.headers.get('Allow')).toBe('GET, HEAD, POST');
    const unauthenticated = await env.app.request('/v1/manifests', { method: 'POST', body: '{}' });
    await expectProblem(unauthenticated, 'UNAUTHENTICATED');
    expect(unauthenticated.headers.get('WWW-Authenticate')).toBe('Bearer realm="toolseal"');
  });

  it('404 NOT_FOUND problems for an unknown version, an unknown name, and no route', async () => {
    await expectProblem(await env.app.request('/v1/manifests/io.github.acme/widgets/9.9.9'), 'NOT_FOUND');
    await expectProblem(await env.app.request('/v1/manifests/io.github.acme/nothing/1.0.0'), 'NOT_FOUND');
    await expectProblem(await env.app.request('/v1/manifests/io.github.acme/nothing'), 'NOT_FOUND');
    await expectProblem(
      await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0/attestation/extra'),
      'NOT_FOUND',
    );
    await expectProblem(await env.app.request('/v1/nowhere'), 'NOT_FOUND');
  });

  it('the attestation is served as stored, byte-identical across requests and across apps', async () => {
    const row = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
    const responses = [
      await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0/attestation'),
      await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0/attestation'),
      await env.newApp({ cacheBytes: 0 }).request('/v1/manifests/io.github.acme/widgets/1.0.0/attestation'),
    ];
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(response.headers.get('Content-Type')).toBe('application/jose+json');
      expect(response.headers.get('Cache-Control')).toBe(IMMUTABLE);
      const bytes = await bodyBytes(response);
      expect(Buffer.from(bytes).equals(row.attestation)).toBe(true);
      expect(response.headers.get('ETag')).toBe(`"sha256:${sha256Hex(bytes)}"`);
    }
    await expectProblem(await env.app.request('/v1/manifests/io.github.acme/widgets/2.0.0/attestation'), 'NOT_FOUND');
  });

  it('GET /v1/blobs/sha256:{hex} serves the same bytes with the same headers', async () => {
    const digest = digestOfBytes(canonical);
    const response = await env.app.request(`/v1/blobs/${digest}`);
    expect(response.status).toBe(200);
    expect(Buffer.from(await bodyBytes(response)).equals(Buffer.from(canonical))).toBe(true);
    expectContentHeaders(response, canonical);
    expect(response.headers.get('Link')).toBe(
      `</v1/attestations/${digest}>; rel="attestation"; type="application/json"`,
    );
    const notModified = await env.app.request(`/v1/blobs/${digest}`, { headers: { 'If-None-Match': `"${digest}"` } });
    expect(notModified.status).toBe(304);
  });

  it('blobs: an unknown digest is 404; malformed digests are 404 too', async () => {
    await expectProblem(await env.app.request(`/v1/blobs/sha256:${'ab'.repeat(32)}`), 'NOT_FOUND');
    const hex = sha256Hex(canonical);
    for (const malformed of [
      hex,
      `sha256:${hex.toUpperCase()}`,
      `sha256:${hex.slice(1)}`,
      `sha256:${hex}0`,
      `sha512:${hex}`,
      `SHA256:${hex}`,
      'sha256:',
      'sha256:..%2F..%2Fetc%2Fpasswd',
    ]) {
      await expectProblem(await env.app.request(`/v1/blobs/${malformed}`), 'NOT_FOUND');
    }
  });

  it('GET /healthz reports ok, the log size and the active kid', async () => {
    const response = await env.app.request('/healthz');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; logSize: number; activeKid: string };
    expect(body).toEqual({
      status: 'ok',
      logSize: (await env.store.latestCheckpoint())!.size,
      activeKid: await env.registry.activeKid(),
    });
    expect(body.logSize).toBe(3); // the first key, the one attestation and its bundle's hashedrekord
  });

  it('GET /.well-known/jwks.json lists the active Ed25519 key by its RFC 7638 thumbprint, with nbf and no exp, then the P-256 bundle key', async () => {
    const response = await env.app.request('/.well-known/jwks.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('Content-Type')).toMatch(/^application\/json/);
    const jwks = (await response.json()) as Jwks;
    expect(jwks.keys).toHaveLength(2);
    const [key, bundleKey] = jwks.keys;
    // The Sigstore bundle key (issue 26): ES256, named by its RFC 7638 thumbprint, valid from nbf, not retired.
    expect(bundleKey).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(Number.isInteger(bundleKey!.nbf)).toBe(true);
    expect(bundleKey!.exp).toBeUndefined();
    expect(key).toMatchObject({
      kty: 'OKP',
      crv: 'Ed25519',
      alg: 'EdDSA',
      use: 'sig',
      kid: await env.registry.activeKid(),
    });
    expect(key!.kid).toBe(computeKid({ crv: 'Ed25519', x: key!.x }));
    expect(Number.isInteger(key!.nbf)).toBe(true);
    expect(key!.exp).toBeUndefined();
    expect(JSON.stringify(jwks)).not.toMatch(/"d"/);
  });
});

describe('HEAD and versions with build metadata', () => {
  it('HEAD gives the same headers and no body', async () => {
    const env = await createTestEnv();
    const { digest, url } = await publishOk(env, manifestBytes());
    const canonical = runPipeline(manifestBytes()).canonicalBytes;
    for (const path of [url, `/v1/blobs/${digest}`]) {
      const response = await env.app.request(path, { method: 'HEAD' });
      expect(response.status).toBe(200);
      expectContentHeaders(response, canonical);
      expect((await bodyBytes(response)).byteLength).toBe(0);
    }
    await env.close();
  });

  it('a version with build metadata (1.0.0+build.1) is addressable encoded or not; its Location is percent-encoded', async () => {
    const env = await createTestEnv();
    const bytes = manifestBytes({ version: '1.0.0+build.1' });
    const response = await postManifest(env.app, bytes, env.token);
    expect(response.status).toBe(201);
    expect(response.headers.get('Location')).toBe('/v1/manifests/io.github.acme/widgets/1.0.0%2Bbuild.1');
    // Build metadata is part of the version string: 1.0.0+build.2 is another name@version.
    expect((await postManifest(env.app, manifestBytes({ version: '1.0.0+build.2' }), env.token)).status).toBe(201);
    const canonical = Buffer.from(runPipeline(bytes).canonicalBytes);
    for (const path of [
      '/v1/manifests/io.github.acme/widgets/1.0.0%2Bbuild.1',
      '/v1/manifests/io.github.acme/widgets/1.0.0+build.1',
    ]) {
      const fetched = await env.app.request(path);
      expect(fetched.status).toBe(200);
      expect(Buffer.from(await bodyBytes(fetched)).equals(canonical)).toBe(true);
    }
    const attestation = await bodyBytes(
      await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0%2Bbuild.1/attestation'),
    );
    await verifyAttestation(attestation, selectUsableKeys(await env.registry.jwks()).jwks, {
      name: 'io.github.acme/widgets',
      version: '1.0.0+build.1',
      digest: digestOfBytes(canonical),
    });
    const latest = await env.app.request('/v1/manifests/io.github.acme/widgets/latest');
    expect(latest.headers.get('Location')).toMatch(
      /^\/v1\/manifests\/io\.github\.acme\/widgets\/1\.0\.0%2Bbuild\.[12]$/,
    );
    await env.close();
  });
});

describe('latest', () => {
  it('302 to the highest non-yanked version by semver precedence (1.10.0 > 1.2.0; a release beats 2.0.0-rc.1)', async () => {
    const env = await createTestEnv();
    for (const version of ['1.2.0', '1.10.0', '2.0.0-rc.1', '1.9.0'])
      await publishOk(env, manifestBytes({ version, description: version }));
    const latest = async (): Promise<Response> => env.app.request('/v1/manifests/io.github.acme/widgets/latest');

    let response = await latest();
    expect(response.status).toBe(302);
    expect(response.headers.get('Location')).toBe('/v1/manifests/io.github.acme/widgets/1.10.0');
    expect(response.headers.get('Cache-Control')).toBe('no-cache');

    expect(
      (await postYank(env.app, '/v1/manifests/io.github.acme/widgets/1.10.0', { reason: 'broken' }, env.token)).status,
    ).toBe(200);
    response = await latest();
    expect(response.headers.get('Location')).toBe('/v1/manifests/io.github.acme/widgets/1.9.0');

    for (const version of ['1.9.0', '1.2.0'])
      await postYank(env.app, `/v1/manifests/io.github.acme/widgets/${version}`, { reason: 'broken' }, env.token);
    response = await latest();
    expect(response.headers.get('Location')).toBe('/v1/manifests/io.github.acme/widgets/2.0.0-rc.1');

    await postYank(env.app, '/v1/manifests/io.github.acme/widgets/2.0.0-rc.1', { reason: 'broken' }, env.token);
    await expectProblem(await latest(), 'NOT_FOUND');
    await expectProblem(await env.app.request('/v1/manifests/io.github.acme/nothing/latest'), 'NOT_FOUND');
    // The redirect target still serves its bytes (yanked bytes stay fetchable).
    expect((await env.app.request('/v1/manifests/io.github.acme/widgets/1.10.0')).status).toBe(200);
    await env.close();
  });
});

describe('GET /v1/attestations/sha256:{hex} (auditor query)', () => {
  it('lists the name@version bound to the digest with publisher, time, key, status, attestation and inclusion proof', async () => {
    const env = await createTestEnv();
    const bytes = manifestBytes();
    const { digest } = await publishOk(env, bytes);
    // Republishing the same manifest, even spelled differently, binds nothing new: one binding.
    await publishOk(env, manifestBytes({}, 2));
    await publishOk(env, manifestBytes({ version: '1.0.1' }));
    const response = await env.app.request(`/v1/attestations/${digest}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('Cache-Control')).toBe('no-cache');
    const body = (await response.json()) as { digest: string; bindings: Record<string, unknown>[] };
    expect(body.digest).toBe(digest);
    expect(body.bindings).toHaveLength(1);
    const row = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
    expect(body.bindings[0]).toMatchObject({
      name: 'io.github.acme/widgets',
      version: '1.0.0',
      publisher: 'io.github.acme',
      storedAt: row.storedAt,
      kid: await env.registry.activeKid(),
      status: 'active',
      logIndex: row.logIndex,
      attestation: JSON.parse(row.attestation.toString('utf8')) as unknown,
    });
    expect(body.bindings[0]!['yankReason']).toBeUndefined();
    expect(typeof body.bindings[0]!['tlogProof']).toBe('string');
    expect((body.bindings[0]!['inclusionProof'] as { index: number }).index).toBe(row.logIndex);
    // The version's Sigstore bundle (issue 26), by its path on this registry.
    expect(body.bindings[0]!['bundle']).toBe('/v1/manifests/io.github.acme/widgets/1.0.0/bundle');
    const bundle = await env.app.request(body.bindings[0]!['bundle'] as string);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('Content-Type')).toBe('application/vnd.dev.sigstore.bundle.v0.3+json');
    await env.close();
  });

  it('the name and version are inside the signed bytes, so one digest can only ever be bound to one name@version', async () => {
    const env = await createTestEnv();
    const a = runPipeline(manifestBytes({ name: 'io.github.acme/one' }));
    const b = runPipeline(manifestBytes({ name: 'io.github.acme/two' }));
    const c = runPipeline(manifestBytes({ name: 'io.github.acme/one', version: '1.0.1' }));
    expect(new Set([a.digest, b.digest, c.digest]).size).toBe(3);
    for (const result of [a, b, c]) await publishOk(env, result.canonicalBytes);
    for (const result of [a, b, c]) {
      const body = (await (await env.app.request(`/v1/attestations/${result.digest}`)).json()) as {
        bindings: { name: string; version: string }[];
      };
      expect(body.bindings.map((x) => `${x.name}@${x.version}`)).toEqual([`${result.name}@${result.version}`]);
    }
    await env.close();
  });

  it('unknown digest 404; malformed digest 404', async () => {
    const env = await createTestEnv();
    await expectProblem(await env.app.request(`/v1/attestations/sha256:${'cd'.repeat(32)}`), 'NOT_FOUND');
    await expectProblem(await env.app.request(`/v1/attestations/sha256:${'CD'.repeat(32)}`), 'NOT_FOUND');
    await expectProblem(await env.app.request('/v1/attestations/not-a-digest'), 'NOT_FOUND');
    await env.close();
  });
});

describe('listings', () => {
  let env: TestEnv;
  const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'payments', 'payroll'];
  beforeAll(async () => {
    env = await createTestEnv();
    for (const name of names) {
      for (const version of ['1.2.0', '1.10.0', '0.9.0'])
        await publishOk(env, manifestBytes({ name: `io.github.acme/${name}`, version }));
    }
    const otherToken = await env.addPublisher('io.example.other');
    await publishOk(env, manifestBytes({ name: 'io.example.other/zulu' }), otherToken);
    await publishOk(env, manifestBytes({ name: 'io.example.other/under_score' }), otherToken);
    await postYank(env.app, '/v1/manifests/io.github.acme/bravo/1.10.0', { reason: 'bad build' }, env.token);
  });
  afterAll(async () => await env.close());

  type Listing = {
    items: {
      name: string;
      latestVersion: string;
      digest: string;
      status: string;
      storedAt: string;
      publisher: string;
      url: string;
    }[];
    nextCursor: string | null;
  };

  it('GET /v1/manifests lists each manifest once with its latest non-yanked version, in name order', async () => {
    const response = await env.app.request('/v1/manifests');
    expect(response.status).toBe(200);
    const body = (await response.json()) as Listing;
    expect(body.nextCursor).toBeNull();
    expect(body.items.map((item) => item.name)).toEqual([
      'io.example.other/under_score',
      'io.example.other/zulu',
      ...names.map((name) => `io.github.acme/${name}`),
    ]);
    const alpha = body.items.find((item) => item.name === 'io.github.acme/alpha')!;
    expect(alpha).toMatchObject({
      latestVersion: '1.10.0',
      status: 'active',
      publisher: 'io.github.acme',
      url: '/v1/manifests/io.github.acme/alpha/1.10.0',
    });
    expect(alpha.digest).toBe((await env.store.getVersion('io.github.acme/alpha', '1.10.0'))!.digest);
    expect(body.items.find((item) => item.name === 'io.github.acme/bravo')!.latestVersion).toBe('1.2.0');
    expect(body.items.find((item) => item.name === 'io.example.other/zulu')!.publisher).toBe('io.example.other');
  });

  it('cursor pagination walks every manifest exactly once across pages', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${cursor}`;
      const response = await env.app.request(`/v1/manifests${query}`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as Listing;
      expect(body.items.length).toBeLessThanOrEqual(2);
      seen.push(...body.items.map((item) => item.name));
      cursor = body.nextCursor;
      pages++;
    } while (cursor !== null && pages < 20);
    expect(pages).toBe(5);
    expect(seen).toHaveLength(names.length + 2);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort());
  });

  it('q filters by substring of the name (LIKE wildcards are literal); q combines with the cursor', async () => {
    const pay = (await (await env.app.request('/v1/manifests?q=pay')).json()) as Listing;
    expect(pay.items.map((item) => item.name)).toEqual(['io.github.acme/payments', 'io.github.acme/payroll']);
    const first = (await (await env.app.request('/v1/manifests?q=pay&limit=1')).json()) as Listing;
    expect(first.items.map((item) => item.name)).toEqual(['io.github.acme/payments']);
    const second = (await (
      await env.app.request(`/v1/manifests?q=pay&limit=1&cursor=${first.nextCursor}`)
    ).json()) as Listing;
    expect(second.items.map((item) => item.name)).toEqual(['io.github.acme/payroll']);
    expect(second.nextCursor).toBeNull();
    expect(((await (await env.app.request('/v1/manifests?q=%25')).json()) as Listing).items).toEqual([]);
    expect(
      ((await (await env.app.request('/v1/manifests?q=_')).json()) as Listing).items.map((item) => item.name),
    ).toEqual(['io.example.other/under_score']);
    expect(((await (await env.app.request('/v1/manifests?q=nothing-like-this')).json()) as Listing).items).toEqual([]);
  });

  it('400 BAD_REQUEST for a bad limit or a cursor the registry did not issue', async () => {
    for (const limit of ['0', '201', '-1', '1.5', 'abc', '', '1e1x']) {
      await expectProblem(await env.app.request(`/v1/manifests?limit=${limit}`), 'BAD_REQUEST');
    }
    expect((await env.app.request('/v1/manifests?limit=200')).status).toBe(200);
    for (const cursor of ['!!!', 'abc', Buffer.from('no-slash').toString('base64url'), 'a+b/c=']) {
      await expectProblem(await env.app.request(`/v1/manifests?cursor=${encodeURIComponent(cursor)}`), 'BAD_REQUEST');
    }
  });

  it('GET /v1/manifests/{ns}/{name} lists every version in semver order with its status (and yank reason)', async () => {
    const response = await env.app.request('/v1/manifests/io.github.acme/bravo');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { name: string; versions: Record<string, unknown>[] };
    expect(body.name).toBe('io.github.acme/bravo');
    expect(body.versions.map((v) => [v['version'], v['status']])).toEqual([
      ['0.9.0', 'active'],
      ['1.2.0', 'active'],
      ['1.10.0', 'yanked'],
    ]);
    expect(body.versions[2]).toMatchObject({
      yankReason: 'bad build',
      digest: (await env.store.getVersion('io.github.acme/bravo', '1.10.0'))!.digest,
    });
    expect(typeof body.versions[2]!['yankedAt']).toBe('string');
    expect(body.versions[0]!['yankReason']).toBeUndefined();
  });
});

describe('byte-exactness (property)', () => {
  it('for generated manifests, the served bytes are runPipeline(uploaded).canonicalBytes and every digest agrees', async () => {
    const env = await createTestEnv();
    const { jwks } = selectUsableKeys(await env.registry.jwks());
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.array(
          fc.oneof(
            fc.integer(),
            fc.double({ noNaN: true, noDefaultInfinity: true }),
            fc.string({ unit: 'grapheme-ascii' }),
            fc.boolean(),
            fc.constant(null),
          ),
          { maxLength: 6 },
        ),
        fc.integer({ min: 0, max: 4 }),
        async (description, examples, indent) => {
          const version = `1.0.${n++}`;
          const uploaded = utf8(
            JSON.stringify(
              makeManifest({
                version,
                description,
                tools: [{ ...sampleTool(), inputSchema: { type: 'object', examples: [examples] } }],
              }),
              null,
              indent,
            ),
          );
          const expected = runPipeline(uploaded);
          const published = await postManifest(env.app, uploaded, env.token);
          expect(published.status).toBe(201);
          const response = await env.app.request(`/v1/manifests/io.github.acme/widgets/${version}`);
          const bytes = await bodyBytes(response);
          expect(Buffer.from(bytes).equals(Buffer.from(expected.canonicalBytes))).toBe(true);
          const digest = digestOfBytes(bytes);
          expect(digest).toBe(expected.digest);
          expect(response.headers.get('ETag')).toBe(`"${digest}"`);
          expect(response.headers.get('Repr-Digest')).toBe(reprDigestOf(bytes));
          const byDigest = await bodyBytes(await env.app.request(`/v1/blobs/${digest}`));
          expect(Buffer.from(byDigest).equals(Buffer.from(bytes))).toBe(true);
          const attestation = await bodyBytes(
            await env.app.request(`/v1/manifests/io.github.acme/widgets/${version}/attestation`),
          );
          await verifyAttestation(attestation, jwks, { name: 'io.github.acme/widgets', version, digest });
        },
      ),
      { numRuns: 40, seed: 20260101 },
    );
    await env.close();
  });
});

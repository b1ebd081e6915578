// POST /v1/manifests through app.request(): 201/200/409/401/403/413/422, problem+json, and "a refused publish stores nothing".

import { afterAll, describe, expect, it } from 'vitest';
import { canonicalizeToBytes, runPipeline, type JsonValue } from '../../src/pipeline/index.ts';
import { selectUsableKeys, verifyAttestation, type Jwks } from '../../src/attest/index.ts';
import {
  hashLeaf,
  parseCheckpoint,
  verifyCheckpoint,
  verifyInclusionProof,
  verifyTlogProof,
} from '../../src/log/index.ts';
import type { ErrorCode } from '../../src/core/errors.ts';
import {
  bodyBytes,
  cleanupTempDirs,
  createTestEnv,
  digestOfBytes,
  expectProblem,
  makeManifest,
  manifestBytes,
  postManifest,
  sampleTool,
  snapshotDb,
  utf8,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

interface PublishBody {
  name: string;
  version: string;
  digest: string;
  size: number;
  attestation: { payload: string; protected: string; signature: string };
  renamedTools: { index: number; from: string; to: string }[];
  status: string;
  storedAt: string;
  logIndex: number;
  inclusionProof: { index: number; size: number; hashes: string[]; checkpoint: string };
  tlogProof: string;
  url: string;
}

describe('POST /v1/manifests: created and idempotent', () => {
  it('201 with the publish body; the digest, size and attestation are those of runPipeline(uploaded)', async () => {
    const env = await createTestEnv();
    const uploaded = manifestBytes({ description: 'Widgets, caf\u00e9s and \u{1F600}.' }, 2);
    const expected = runPipeline(uploaded);
    const response = await postManifest(env.app, uploaded, env.token);
    expect(response.status).toBe(201);
    expect(response.headers.get('Content-Type')).toMatch(/^application\/json/);
    expect(response.headers.get('Location')).toBe('/v1/manifests/io.github.acme/widgets/1.0.0');
    const body = (await response.json()) as PublishBody;
    expect(body).toMatchObject({
      name: 'io.github.acme/widgets',
      version: '1.0.0',
      digest: expected.digest,
      size: expected.canonicalBytes.byteLength,
      renamedTools: [],
      status: 'active',
      url: '/v1/manifests/io.github.acme/widgets/1.0.0',
    });
    expect(Object.keys(body.attestation).sort()).toEqual(['payload', 'protected', 'signature']);
    expect(new Date(body.storedAt).toISOString()).toBe(body.storedAt);

    // The attestation in the body is the stored attestation (its JCS form is the stored bytes).
    const row = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
    expect(Buffer.from(canonicalizeToBytes(body.attestation as unknown as JsonValue)).equals(row.attestation)).toBe(
      true,
    );
    expect(row.digest).toBe(expected.digest);
    expect(Buffer.from(expected.canonicalBytes).equals((await env.store.getBlob(expected.digest))!.bytes)).toBe(true);

    const jwks = (await (await env.app.request('/.well-known/jwks.json')).json()) as Jwks;
    const verified = await verifyAttestation(JSON.stringify(body.attestation), jwks, {
      name: 'io.github.acme/widgets',
      version: '1.0.0',
      digest: digestOfBytes(expected.canonicalBytes),
    });
    expect(verified.kid).toBe(await env.registry.activeKid());
    expect(verified.statement.predicate).toMatchObject({
      registry: 'http://127.0.0.1:8787',
      publisher: 'io.github.acme',
      storedAt: body.storedAt,
      size: expected.size,
      previousDigest: null,
    });
    await env.close();
  });

  it('the inclusion proof leads from the attestation leaf to a checkpoint signed by the log key', async () => {
    const env = await createTestEnv();
    await postManifest(env.app, manifestBytes({ version: '0.9.0' }), env.token);
    const response = await postManifest(env.app, manifestBytes(), env.token);
    const body = (await response.json()) as PublishBody;
    const row = (await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!;
    const verifier = (await (await env.app.request('/v1/log/key')).text()).trim();
    const checkpoint = verifyCheckpoint(body.inclusionProof.checkpoint, verifier);
    expect(checkpoint.size).toBe(body.inclusionProof.size);
    expect(body.inclusionProof.index).toBe(body.logIndex);
    expect(body.logIndex).toBe(row.logIndex);
    verifyInclusionProof(
      hashLeaf(row.attestation),
      body.inclusionProof.index,
      body.inclusionProof.size,
      body.inclusionProof.hashes.map((hash) => new Uint8Array(Buffer.from(hash, 'base64'))),
      checkpoint.rootHash,
    );
    // The tlog-proof text form verifies offline too, and names the same leaf index.
    expect(verifyTlogProof(body.tlogProof, hashLeaf(row.attestation), verifier).index).toBe(row.logIndex);
    expect(
      parseCheckpoint(body.inclusionProof.checkpoint.slice(0, body.inclusionProof.checkpoint.indexOf('\n\n') + 1)).size,
    ).toBe(checkpoint.size);
    await env.close();
  });

  it('lists every NFC-renamed tool name in renamedTools; the stored bytes hold the NFC name', async () => {
    const env = await createTestEnv();
    const nfd = 'cafe\u0301_lookup';
    const response = await postManifest(
      env.app,
      manifestBytes({ tools: [sampleTool('plain'), sampleTool(nfd)] }),
      env.token,
    );
    expect(response.status).toBe(201);
    const body = (await response.json()) as PublishBody;
    expect(body.renamedTools).toEqual([{ index: 1, from: nfd, to: 'caf\u00e9_lookup' }]);
    const served = await bodyBytes(await env.app.request(body.url));
    const text = Buffer.from(served).toString('utf8');
    expect(text).toContain('"name":"caf\u00e9_lookup"');
    expect(text).not.toContain('e\u0301');
    await env.close();
  });

  it('200 for the same bytes again: same digest, same attestation, same log index, nothing new stored', async () => {
    const env = await createTestEnv();
    const bytes = manifestBytes();
    const first = (await (await postManifest(env.app, bytes, env.token)).json()) as PublishBody;
    const before = snapshotDb(env.store);
    const again = await postManifest(env.app, bytes, env.token);
    expect(again.status).toBe(200);
    const second = (await again.json()) as PublishBody;
    expect(second.digest).toBe(first.digest);
    expect(second.attestation).toEqual(first.attestation);
    expect(second.logIndex).toBe(first.logIndex);
    expect(second.storedAt).toBe(first.storedAt);
    expect(snapshotDb(env.store)).toEqual(before);
    await env.close();
  });

  it('200 for different raw bytes with the same canonical form (whitespace, key order, number spelling, $ref vs inlined)', async () => {
    const env = await createTestEnv();
    const schemaByHand = { type: 'object', properties: { amount: { type: 'integer', maximum: 100 } } };
    const first = await postManifest(
      env.app,
      JSON.stringify(makeManifest({ tools: [{ name: 't', inputSchema: schemaByHand }] })),
      env.token,
    );
    expect(first.status).toBe(201);
    const firstBody = (await first.json()) as PublishBody;
    const before = snapshotDb(env.store);

    const variants = [
      // pretty-printed, keys in another order, 100 written as 1e2 and 100.0
      `{\n  "tools": [ { "inputSchema": { "properties": { "amount": { "maximum": 1e2, "type": "integer" } }, "type": "object" }, "name": "t" } ],\n  "version": "1.0.0",\n  "name": "io.github.acme/widgets"\n}\n`,
      `{"version":"1.0.0","name":"io.github.acme/widgets","tools":[{"name":"t","inputSchema":{"type":"object","properties":{"amount":{"type":"integer","maximum":100.0}}}}]}`,
      // the same schema written with a $ref (2020-12: $ref siblings keep their meaning, so use a bare ref)
      JSON.stringify(
        makeManifest({
          tools: [
            {
              name: 't',
              inputSchema: {
                type: 'object',
                properties: { amount: { $ref: '#/$defs/amount' } },
                $defs: { amount: { type: 'integer', maximum: 100 } },
              },
            },
          ],
        }),
      ),
    ];
    for (const variant of variants) {
      expect(runPipeline(utf8(variant)).digest).toBe(firstBody.digest);
      const response = await postManifest(env.app, variant, env.token);
      expect(response.status, variant).toBe(200);
      const body = (await response.json()) as PublishBody;
      expect(body.digest).toBe(firstBody.digest);
      expect(body.attestation).toEqual(firstBody.attestation);
    }
    expect(snapshotDb(env.store)).toEqual(before);
    await env.close();
  });

  it('409 VERSION_EXISTS for other bytes under the same name@version; the database and the served bytes are unchanged', async () => {
    const env = await createTestEnv();
    const original = manifestBytes({ description: 'one' });
    await postManifest(env.app, original, env.token);
    const before = snapshotDb(env.store);
    const response = await postManifest(env.app, manifestBytes({ description: 'two' }), env.token);
    await expectProblem(response, 'VERSION_EXISTS', '/version');
    expect(snapshotDb(env.store)).toEqual(before);
    const served = await bodyBytes(await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0'));
    expect(Buffer.from(served).equals(Buffer.from(runPipeline(original).canonicalBytes))).toBe(true);
    await env.close();
  });

  it('a new version records the previous version digest in its attestation', async () => {
    const env = await createTestEnv();
    const v1 = (await (
      await postManifest(env.app, manifestBytes({ version: '1.0.0' }), env.token)
    ).json()) as PublishBody;
    const v2 = (await (
      await postManifest(env.app, manifestBytes({ version: '1.1.0', description: 'next' }), env.token)
    ).json()) as PublishBody;
    const { jwks } = selectUsableKeys(await env.registry.jwks());
    const verified = await verifyAttestation(JSON.stringify(v2.attestation), jwks, {
      name: v2.name,
      version: '1.1.0',
      digest: v2.digest as `sha256:${string}`,
    });
    expect(verified.statement.predicate.previousDigest).toBe(v1.digest);
    await env.close();
  });
});

describe('POST /v1/manifests: refusals store nothing', () => {
  it('401 UNAUTHENTICATED without a token, with another scheme, or with an unknown token; nothing stored', async () => {
    const env = await createTestEnv();
    const before = snapshotDb(env.store);
    const bytes = manifestBytes();
    await expectProblem(await postManifest(env.app, bytes), 'UNAUTHENTICATED');
    await expectProblem(
      await postManifest(env.app, bytes, undefined, {
        Authorization: `Basic ${Buffer.from('a:b').toString('base64')}`,
      }),
      'UNAUTHENTICATED',
    );
    await expectProblem(await postManifest(env.app, bytes, 'tsk_not-a-real-token'), 'UNAUTHENTICATED');
    await expectProblem(await postManifest(env.app, bytes, `${env.token}x`), 'UNAUTHENTICATED');
    await expectProblem(
      await postManifest(env.app, bytes, undefined, { Authorization: `Bearer ${env.token} extra` }),
      'UNAUTHENTICATED',
    );
    await expectProblem(
      await postManifest(env.app, bytes, undefined, { Authorization: `bearer${env.token}` }),
      'UNAUTHENTICATED',
    );
    expect(snapshotDb(env.store)).toEqual(before);
    await env.close();
  });

  it('401 comes before the body is judged: an oversized or malformed body without a token is still 401', async () => {
    const env = await createTestEnv({ app: { maxBodyBytes: 100 } });
    await expectProblem(await postManifest(env.app, 'x'.repeat(1000)), 'UNAUTHENTICATED');
    await expectProblem(await postManifest(env.app, '{"a":1,"a":2}'), 'UNAUTHENTICATED');
    await env.close();
  });

  it('403 FORBIDDEN when a publisher publishes into another namespace; nothing stored', async () => {
    const env = await createTestEnv();
    const otherToken = await env.addPublisher('io.github.other');
    const before = snapshotDb(env.store);
    await expectProblem(await postManifest(env.app, manifestBytes(), otherToken), 'FORBIDDEN', '/name');
    // A namespace that merely starts with the publisher's is another namespace.
    await expectProblem(
      await postManifest(env.app, manifestBytes({ name: 'io.github.acme2/widgets' }), env.token),
      'FORBIDDEN',
      '/name',
    );
    await expectProblem(
      await postManifest(env.app, manifestBytes({ name: 'io.github.acme.evil/widgets' }), env.token),
      'FORBIDDEN',
      '/name',
    );
    expect(snapshotDb(env.store)).toEqual(before);
    // The other publisher can publish in its own namespace.
    expect((await postManifest(env.app, manifestBytes({ name: 'io.github.other/widgets' }), otherToken)).status).toBe(
      201,
    );
    await env.close();
  });

  const refusals: { label: string; body: string | Uint8Array; code: ErrorCode; pointer?: string }[] = [
    {
      label: 'duplicate key',
      body: '{"name":"io.github.acme/a","name":"io.github.acme/b","version":"1.0.0","tools":[{"name":"t","inputSchema":{"type":"object"}}]}',
      code: 'DUPLICATE_KEY',
      pointer: '/name',
    },
    {
      label: '__proto__ twice',
      body: '{"name":"io.github.acme/a","version":"1.0.0","tools":[{"name":"t","inputSchema":{"type":"object","__proto__":{},"__proto__":{}}}]}',
      code: 'DUPLICATE_KEY',
      pointer: '/tools/0/inputSchema/__proto__',
    },
    {
      label: 'unknown tool field',
      body: JSON.stringify(makeManifest({ tools: [{ ...sampleTool(), foo: 1 }] })),
      code: 'UNKNOWN_FIELD',
      pointer: '/tools/0/foo',
    },
    {
      label: 'unknown top-level field',
      body: JSON.stringify({ ...makeManifest(), extra: true }),
      code: 'UNKNOWN_FIELD',
      pointer: '/extra',
    },
    {
      label: 'bad version',
      body: JSON.stringify(makeManifest({ version: 'latest' })),
      code: 'INVALID_MANIFEST',
      pointer: '/version',
    },
    {
      label: 'uppercase name',
      body: JSON.stringify(makeManifest({ name: 'io.github.ACME/widgets' })),
      code: 'INVALID_MANIFEST',
      pointer: '/name',
    },
    {
      label: 'external $ref',
      body: JSON.stringify(
        makeManifest({
          tools: [
            { name: 't', inputSchema: { type: 'object', properties: { a: { $ref: 'https://evil.example/s.json' } } } },
          ],
        }),
      ),
      code: 'EXTERNAL_REF',
      pointer: '/tools/0/inputSchema/properties/a/$ref',
    },
    {
      label: 'file $ref',
      body: JSON.stringify(
        makeManifest({
          tools: [{ name: 't', inputSchema: { type: 'object', properties: { a: { $ref: 'file:///etc/passwd' } } } }],
        }),
      ),
      code: 'EXTERNAL_REF',
      pointer: '/tools/0/inputSchema/properties/a/$ref',
    },
    {
      label: 'circular $ref',
      body: JSON.stringify(
        makeManifest({
          tools: [
            {
              name: 't',
              inputSchema: {
                type: 'object',
                $defs: { a: { $ref: '#/$defs/a' } },
                properties: { x: { $ref: '#/$defs/a' } },
              },
            },
          ],
        }),
      ),
      code: 'CIRCULAR_REF',
    },
    {
      label: 'unsafe integer',
      body: '{"name":"io.github.acme/a","version":"1.0.0","tools":[{"name":"t","inputSchema":{"type":"object","maximum":9007199254740993}}]}',
      code: 'UNSAFE_NUMBER',
      pointer: '/tools/0/inputSchema/maximum',
    },
    {
      label: 'not NFC enum',
      body: JSON.stringify(
        makeManifest({ tools: [{ name: 't', inputSchema: { type: 'object', enum: ['cafe\u0301'] } }] }),
      ),
      code: 'NOT_NFC',
      pointer: '/tools/0/inputSchema/enum/0',
    },
    {
      label: 'NFC tool name collision',
      body: JSON.stringify(makeManifest({ tools: [sampleTool('caf\u00e9'), sampleTool('cafe\u0301')] })),
      code: 'NAME_COLLISION',
    },
    {
      label: 'reserved _host_meta',
      body: JSON.stringify(makeManifest({ tools: [{ ...sampleTool(), _meta: { _host_meta: 1 } }] })),
      code: 'RESERVED_KEY',
      pointer: '/tools/0/_meta/_host_meta',
    },
    {
      label: 'byte order mark',
      body: new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(JSON.stringify(makeManifest()))]),
      code: 'INVALID_UTF8',
    },
    {
      label: 'invalid UTF-8',
      body: new Uint8Array([
        ...utf8('{"name":"io.github.acme/a","version":"1.0.0","description":"'),
        0xc3,
        0x28,
        ...utf8('","tools":[]}'),
      ]),
      code: 'INVALID_UTF8',
    },
    {
      label: 'lone surrogate escape',
      body: '{"name":"io.github.acme/a","version":"1.0.0","description":"\\ud800","tools":[{"name":"t","inputSchema":{"type":"object"}}]}',
      code: 'LONE_SURROGATE',
    },
    { label: 'not JSON', body: '{"name": ', code: 'INVALID_JSON' },
    { label: 'empty body', body: '', code: 'INVALID_JSON' },
    {
      label: 'too deep',
      body: `{"name":"io.github.acme/a","version":"1.0.0","tools":[{"name":"t","inputSchema":{"type":"object","default":${'['.repeat(100)}${']'.repeat(100)}}}]}`,
      code: 'DEPTH_LIMIT',
    },
    { label: 'array at the top', body: '[]', code: 'INVALID_MANIFEST', pointer: '' },
    {
      label: 'no tools',
      body: JSON.stringify(makeManifest({ tools: [] })),
      code: 'INVALID_MANIFEST',
      pointer: '/tools',
    },
  ];

  it.each(refusals)(
    '422 $code ($label): problem+json with its pointer, nothing stored',
    async ({ body, code, pointer }) => {
      const env = await createTestEnv();
      await postManifest(env.app, manifestBytes({ name: 'io.github.acme/existing' }), env.token);
      const before = snapshotDb(env.store);
      const problem = await expectProblem(await postManifest(env.app, body, env.token), code, pointer);
      expect(problem.status).toBe(422);
      expect(snapshotDb(env.store)).toEqual(before);
      await env.close();
    },
  );

  it('413 TOO_LARGE above the default 1 MiB limit, with or without Content-Length; nothing stored', async () => {
    const env = await createTestEnv();
    const before = snapshotDb(env.store);
    const manifest = JSON.stringify(makeManifest());
    const oversized = `${manifest.slice(0, -1) + ' '.repeat(1024 * 1024 + 1 - manifest.length)}}`;
    expect(oversized.length).toBe(1024 * 1024 + 1);
    await expectProblem(
      await postManifest(env.app, oversized, env.token, { 'Content-Length': String(oversized.length) }),
      'TOO_LARGE',
    );
    await expectProblem(await postManifest(env.app, oversized, env.token), 'TOO_LARGE');
    // A lying Content-Length does not let a large body through.
    await expectProblem(await postManifest(env.app, oversized, env.token, { 'Content-Length': '10' }), 'TOO_LARGE');
    expect(snapshotDb(env.store)).toEqual(before);
    await env.close();
  });

  it('413 is configurable: createApp maxBodyBytes N accepts exactly N bytes and refuses N+1', async () => {
    const manifest = JSON.stringify(makeManifest());
    const limit = manifest.length + 50;
    const env = await createTestEnv({ app: { maxBodyBytes: limit } });
    const atLimit = manifest + ' '.repeat(50);
    const overLimit = manifest + ' '.repeat(51);
    const before = snapshotDb(env.store);
    await expectProblem(await postManifest(env.app, overLimit, env.token), 'TOO_LARGE');
    expect(snapshotDb(env.store)).toEqual(before);
    expect((await postManifest(env.app, atLimit, env.token)).status).toBe(201);
    await env.close();
  });

  it("413 from the registry's own pipeline limit when it is smaller than the app's", async () => {
    const manifest = JSON.stringify(makeManifest());
    const env = await createTestEnv({ limits: { maxBytes: manifest.length } });
    const before = snapshotDb(env.store);
    await expectProblem(await postManifest(env.app, `${manifest} `, env.token), 'TOO_LARGE');
    expect(snapshotDb(env.store)).toEqual(before);
    expect((await postManifest(env.app, manifest, env.token)).status).toBe(201);
    await env.close();
  });
});

describe('POST /v1/manifests: concurrent publishes of one name@version', () => {
  it('20 in parallel with different bytes: exactly one 201, nineteen 409, one row, one attestation and one bundle leaf', async () => {
    const env = await createTestEnv();
    const before = snapshotDb(env.store);
    const bodies = Array.from({ length: 20 }, (_, i) => manifestBytes({ description: `variant ${i}` }));
    const responses = await Promise.all(bodies.map((body) => postManifest(env.app, body, env.token)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const winner = statuses.indexOf(201);
    const winnerBody = (await responses[winner]!.json()) as PublishBody;
    for (const [i, response] of responses.entries())
      if (i !== winner) await expectProblem(response, 'VERSION_EXISTS', '/version');
    const after = snapshotDb(env.store);
    expect(after.counts['manifest_versions']).toBe(before.counts['manifest_versions']! + 1);
    expect(after.counts['blobs']).toBe(before.counts['blobs']! + 1);
    expect(after.counts['log_entries']).toBe(before.counts['log_entries']! + 2); // the attestation and its bundle's hashedrekord
    expect(await env.store.listVersions('io.github.acme/widgets')).toHaveLength(1);
    const served = await bodyBytes(await env.app.request(winnerBody.url));
    expect(Buffer.from(served).equals(Buffer.from(runPipeline(bodies[winner]!).canonicalBytes))).toBe(true);
    await env.close();
  });

  it('20 in parallel with identical bytes: exactly one 201, nineteen 200 with the same attestation, one row', async () => {
    const env = await createTestEnv();
    const before = snapshotDb(env.store);
    const bytes = manifestBytes();
    const responses = await Promise.all(Array.from({ length: 20 }, () => postManifest(env.app, bytes, env.token)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(19);
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as PublishBody[];
    expect(new Set(bodies.map((b) => JSON.stringify(b.attestation))).size).toBe(1);
    expect(new Set(bodies.map((b) => b.logIndex)).size).toBe(1);
    const after = snapshotDb(env.store);
    expect(after.counts['manifest_versions']).toBe(before.counts['manifest_versions']! + 1);
    expect(after.counts['log_entries']).toBe(before.counts['log_entries']! + 2);
    await env.close();
  });
});

// End to end on a real port: `toolseal serve` as a child process, fetch over HTTP, `toolseal publish`,
// `toolseal publisher add` against a running server, and a graceful SIGTERM that lets an in-flight request finish.

import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAttestation, type Jwks } from '../../src/attest/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import {
  cleanupTempDirs,
  digestOfBytes,
  makeTempDir,
  manifestBytes,
  reprDigestOf,
  repoRoot,
  runCli,
  startServerProcess,
  type ServerProcess,
} from '../helpers/registry-helpers.ts';
import { openStore } from '../../src/store/sqlite/index.ts';

const examplesDir = join(repoRoot, 'manifests');

describe('toolseal serve on 127.0.0.1', () => {
  let server: ServerProcess;
  let root: string;
  let dataDir: string;
  let keysDir: string;
  let devToken: string;

  beforeAll(async () => {
    root = makeTempDir();
    dataDir = join(root, 'data');
    keysDir = join(root, 'keys');
    // Two pipeline workers whatever the machine has, so the pooled publish path is what these tests drive.
    server = await startServerProcess([
      '--port',
      '0',
      '--data',
      dataDir,
      '--keys',
      keysDir,
      '--dev',
      '--examples',
      examplesDir,
      '--pipeline-workers',
      '2',
    ]);
    devToken = readFileSync(join(dataDir, 'dev-token.txt'), 'utf8').trim();
  });
  afterAll(async () => {
    server?.kill();
    cleanupTempDirs();
  });

  it('prints its URL on the first line, listens on 127.0.0.1 and answers /healthz and the JWKS', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Number(new URL(server.url).port)).toBeGreaterThan(0);
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as { status: string; activeKid: string };
    expect(body.status).toBe('ok');
    const jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as Jwks;
    // The Ed25519 attestation key, then the P-256 Sigstore bundle key (issue 26).
    expect(jwks.keys.map((key) => key.kid)).toEqual([body.activeKid, expect.any(String)]);
    expect(jwks.keys.map((key) => key.kty as string)).toEqual(['OKP', 'EC']);
    expect(devToken).toMatch(/^tsk_/);
    expect(server.stdout()).toContain('pipeline workers: 2  writer thread: yes');
  });

  it('--dev published every example; over HTTP each serves exactly runPipeline(file).canonicalBytes, and its attestation verifies', async () => {
    const jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as Jwks;
    const files = readdirSync(examplesDir).filter((name) => name.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const expected = runPipeline(readFileSync(join(examplesDir, file)));
      const url = `${server.url}/v1/manifests/${expected.name}/${expected.version}`;
      const response = await fetch(url);
      expect(response.status, file).toBe(200);
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(Buffer.from(bytes).equals(Buffer.from(expected.canonicalBytes)), file).toBe(true);
      expect(response.headers.get('Content-Length')).toBe(String(bytes.byteLength));
      expect(response.headers.get('ETag')).toBe(`"${expected.digest}"`);
      expect(response.headers.get('Repr-Digest')).toBe(reprDigestOf(bytes));
      expect(response.headers.get('Content-Encoding')).toBeNull();
      const attestation = new Uint8Array(await (await fetch(`${url}/attestation`)).arrayBuffer());
      await verifyAttestation(attestation, jwks, {
        name: expected.name,
        version: expected.version,
        digest: digestOfBytes(bytes),
      });
      const latest = await fetch(`${server.url}/v1/manifests/${expected.name}/latest`, { redirect: 'manual' });
      expect(latest.status).toBe(302);
    }
    const listing = (await (await fetch(`${server.url}/v1/manifests?limit=200`)).json()) as { items: unknown[] };
    expect(listing.items).toHaveLength(files.length);
  });

  it('`toolseal publish FILE --registry URL --token T` prints one JSON object; the bytes it names are served; again is created:false', async () => {
    const file = join(makeTempDir(), 'manifest.json');
    const uploaded = manifestBytes(
      { name: 'io.github.acme/e2e', tools: [{ name: 'cafe\u0301', inputSchema: { type: 'object' } }] },
      2,
    );
    writeFileSync(file, uploaded);
    const expected = runPipeline(uploaded);

    const first = await runCli(['publish', file, '--registry', server.url, '--token', devToken]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const output = JSON.parse(first.stdout) as Record<string, unknown>;
    expect(output).toEqual({
      name: 'io.github.acme/e2e',
      version: '1.0.0',
      digest: expected.digest,
      size: expected.size,
      created: true,
      renamedTools: [{ index: 0, from: 'cafe\u0301', to: 'caf\u00e9' }],
      logIndex: expect.any(Number),
      url: `${server.url}/v1/manifests/io.github.acme/e2e/1.0.0`,
    });
    const served = new Uint8Array(await (await fetch(output['url'] as string)).arrayBuffer());
    expect(Buffer.from(served).equals(Buffer.from(expected.canonicalBytes))).toBe(true);

    const [again, wrongToken] = await Promise.all([
      runCli(['publish', file, '--registry', server.url, '--token', devToken]),
      runCli(['publish', file, '--registry', server.url, '--token', 'tsk_wrong']),
    ]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      created: false,
      digest: expected.digest,
      logIndex: output['logIndex'],
    });
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.stdout).toBe('');
    expect(JSON.parse(wrongToken.stderr)).toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('a publisher added by `publisher add` while the server runs can publish to it at once', async () => {
    const added = await runCli(['publisher', 'add', 'io.example.second', '--data', dataDir]);
    expect(added.code).toBe(0);
    const token = added.stdout.trim();
    const response = await fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      body: manifestBytes({ name: 'io.example.second/tool' }),
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(201);
    const forbidden = await fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      body: manifestBytes({ name: 'io.github.acme/not-yours' }),
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as { code: string }).code).toBe('FORBIDDEN');
  });

  it('20 concurrent publishes of one name@version over real HTTP: one 201, the rest 409', async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${server.url}/v1/manifests`, {
          method: 'POST',
          body: manifestBytes({ name: 'io.github.acme/race', description: `variant ${i}` }),
          headers: { Authorization: `Bearer ${devToken}` },
        }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, ...Array<number>(19).fill(409)]);
    await Promise.all(responses.map((r) => r.arrayBuffer()));
    const versions = (await (await fetch(`${server.url}/v1/manifests/io.github.acme/race`)).json()) as {
      versions: unknown[];
    };
    expect(versions.versions).toHaveLength(1);
  });

  it('413 above the 1 MiB default over real HTTP, and nothing is stored', async () => {
    const big = Buffer.alloc(1024 * 1024 + 10, 0x20);
    const response = await fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      body: big,
      headers: { Authorization: `Bearer ${devToken}` },
    });
    expect(response.status).toBe(413);
    expect(response.headers.get('Content-Type')).toBe('application/problem+json');
    expect(((await response.json()) as { code: string }).code).toBe('TOO_LARGE');
  });

  it('413 for a chunked body (no Content-Length) that passes 1 MiB: the Node request stream is counted as it arrives', async () => {
    const status = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.request(
        `${server.url}/v1/manifests`,
        { method: 'POST', headers: { Authorization: `Bearer ${devToken}`, 'Transfer-Encoding': 'chunked' } },
        (response) => {
          let body = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        },
      );
      request.on('error', reject);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      for (let i = 0; i < 17; i++) request.write(chunk);
      request.end();
    });
    expect(status.status).toBe(413);
    expect((JSON.parse(status.body) as { code: string }).code).toBe('TOO_LARGE');
  });

  it('SIGTERM: stops accepting, lets an in-flight publish on a keep-alive connection finish and close, then exits 0', async () => {
    const body = manifestBytes({ name: 'io.github.acme/inflight' });
    const half = Math.floor(body.byteLength / 2);
    // A keep-alive connection (what fetch and Node's global agent use), already accepted by the server.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const primed = await new Promise<string | undefined>((resolve, reject) => {
      http
        .get(`${server.url}/healthz`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers['connection']));
        })
        .on('error', reject);
    });
    expect(primed).toBe('keep-alive');

    const request = http.request(`${server.url}/v1/manifests`, {
      method: 'POST',
      agent,
      headers: {
        Authorization: `Bearer ${devToken}`,
        'Content-Type': 'application/json',
        'Content-Length': String(body.byteLength),
      },
    });
    let socketClosed!: Promise<void>;
    request.on('socket', (socket) => (socketClosed = new Promise((resolve) => socket.once('close', () => resolve()))));
    const response = new Promise<{ status: number; connection: string | undefined; text: string }>(
      (resolve, reject) => {
        request.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers['connection'], text }));
        });
        request.on('error', reject);
      },
    );
    request.write(body.subarray(0, half));
    // Let the server read the request head and start the handler (it is now waiting for the rest of the body).
    await new Promise((resolve) => setTimeout(resolve, 500));
    server.child.kill('SIGTERM');
    await server.waitForOutput(/SIGTERM received, finishing in-flight requests/);
    // No new connections once it is shutting down.
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    request.end(body.subarray(half));
    const finished = await response;
    expect(finished.status, finished.text).toBe(201);
    expect((JSON.parse(finished.text) as { name: string }).name).toBe('io.github.acme/inflight');
    // The server ends the kept-alive connection after the in-flight response instead of keeping it open.
    expect(finished.connection).toBe('close');
    await socketClosed;
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.stderr()).toBe('');
    agent.destroy();

    const store = openStore({ dataDir });
    expect((await store.getVersion('io.github.acme/inflight', '1.0.0'))?.digest).toBe(runPipeline(body).digest);
    await store.close();
  });
});

// `toolseal publish` refuses loudly when the registry's digest differs from the local pipeline's, and stores nothing locally.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from '../helpers/pipeline-helpers.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { cleanupTempDirs, makeTempDir, manifestBytes, runCli } from '../helpers/registry-helpers.ts';

describe('toolseal publish against a registry that lies about the digest', () => {
  let server: Server;
  let url: string;
  let posts = 0;
  let loose = false;
  const file = repoPath('manifests', 'payments.json');
  const local = runPipeline(readFileSync(file));
  const forged = `sha256:${'0'.repeat(64)}`;

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        if (request.method === 'POST' && request.url === '/v1/manifests') posts++;
        response.writeHead(201, { 'Content-Type': 'application/json' });
        // Every member a publish answer has, well formed: only the digest is not the one the bytes have.
        const answer = {
          name: local.name,
          version: local.version,
          digest: forged,
          size: local.size,
          attestation: { protected: 'e30', payload: 'e30', signature: 'AA' },
          renamedTools: [],
          status: 'active',
          storedAt: '2026-01-01T00:00:00.000Z',
          logIndex: 0,
          inclusionProof: { index: 0, size: 1, hashes: [], checkpoint: 'x' },
          tlogProof: 'x',
          url: '/x',
        };
        if (!loose) response.end(JSON.stringify(answer));
        else response.end(JSON.stringify({ ...answer, logIndex: undefined }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  it('exits 1 with DIGEST_MISMATCH naming both digests, and prints nothing on stdout', async () => {
    const result = await runCli(['publish', file, '--registry', url, '--token', 'tsk_whatever']);
    expect(posts).toBe(1);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const error = JSON.parse(result.stderr.trim()) as { code: string; message: string };
    expect(error.code).toBe('DIGEST_MISMATCH');
    expect(error.message).toContain(forged);
    expect(error.message).toContain(local.digest);
  });

  it('an answer that is not a whole publish answer is FETCH_FAILED (read strictly, shape-checked)', async () => {
    loose = true;
    try {
      const result = await runCli(['publish', file, '--registry', url, '--token', 'tsk_whatever']);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(JSON.parse(result.stderr.trim())).toMatchObject({
        code: 'FETCH_FAILED',
        message: "/v1/manifests: the registry's answer is not a publish answer",
      });
    } finally {
      loose = false;
    }
  });

  it('a local refusal never reaches the registry (exit 1, the pipeline code)', async () => {
    const before = posts;
    const result = await runCli(['publish', repoPath('package.json'), '--registry', url, '--token', 'tsk_whatever']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr.trim()).code).toBe('INVALID_MANIFEST');
    expect(posts).toBe(before);
  });
});

describe('toolseal publish against a busy registry', () => {
  let registry: RunningRegistryServer;
  let proxy: Server;
  let proxyUrl: string;
  let busyAnswers = 0;
  const posts: number[] = [];
  let token: string;

  beforeAll(async () => {
    const root = makeTempDir();
    registry = await startRegistryServer({ dataDir: join(root, 'data'), keysDir: join(root, 'keys'), port: 0 });
    token = (await registry.registry.createPublisher('io.github.acme')).token;
    // In front of the registry: the first `busyAnswers` publishes are refused as a loaded registry refuses them
    // (503, Retry-After, problem+json SERVER_BUSY, nothing written); everything else is passed on.
    proxy = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const isPublish = request.method === 'POST' && request.url === '/v1/manifests';
        if (isPublish) posts.push(posts.length);
        if (isPublish && busyAnswers > 0) {
          busyAnswers--;
          response.writeHead(503, { 'Content-Type': 'application/problem+json', 'Retry-After': '0' });
          response.end(JSON.stringify({ status: 503, code: 'SERVER_BUSY', detail: 'too many writes in flight' }));
          return;
        }
        const headers = Object.fromEntries(
          Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
        ) as Record<string, string>;
        fetch(`${registry.url}${request.url}`, {
          method: request.method,
          headers,
          ...(isPublish ? { body: Buffer.concat(chunks) } : {}),
        }).then(async (answer) => {
          response.writeHead(answer.status, { 'Content-Type': answer.headers.get('content-type') ?? 'text/plain' });
          response.end(Buffer.from(await answer.arrayBuffer()));
        });
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    await registry.close();
    cleanupTempDirs();
  });

  it('retries SERVER_BUSY with backoff, says so on stderr, and publishes once the registry takes it', async () => {
    busyAnswers = 2;
    const folder = makeTempDir();
    const manifest = join(folder, 'm.json');
    writeFileSync(manifest, manifestBytes({ version: '3.0.0' }));
    const result = await runCli(['publish', manifest, '--registry', proxyUrl, '--token', token]);
    expect(result.code, result.stderr).toBe(0);
    expect(posts).toHaveLength(3);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^toolseal publish: the registry is busy; retry 1 in \d+ ms$/),
      expect.stringMatching(/^toolseal publish: the registry is busy; retry 2 in \d+ ms$/),
    ]);
    const printed = JSON.parse(result.stdout) as { digest: string; created: boolean; logIndex: number };
    expect(printed.created).toBe(true);
    expect(printed.digest).toBe(runPipeline(manifestBytes({ version: '3.0.0' })).digest);
  });
});

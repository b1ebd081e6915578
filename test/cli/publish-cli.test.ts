// `toolseal publish` refuses loudly when the registry's digest differs from the local pipeline's, and stores nothing locally.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import { readFileSync } from 'node:fs';
import { repoPath } from '../helpers/pipeline-helpers.ts';
import { runCli } from '../helpers/registry-helpers.ts';

describe('toolseal publish against a registry that lies about the digest', () => {
  let server: Server;
  let url: string;
  let posts = 0;
  const file = repoPath('manifests', 'payments.json');
  const local = runPipeline(readFileSync(file));
  const forged = `sha256:${'0'.repeat(64)}`;

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        if (request.method === 'POST' && request.url === '/v1/manifests') posts++;
        response.writeHead(201, { 'Content-Type': 'application/json' });
        response.end(
          JSON.stringify({
            name: local.name,
            version: local.version,
            digest: forged,
            size: local.size,
            attestation: {},
            url: '/x',
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

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

  it('a local refusal never reaches the registry (exit 1, the pipeline code)', async () => {
    const before = posts;
    const result = await runCli(['publish', repoPath('package.json'), '--registry', url, '--token', 'tsk_whatever']);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr.trim()).code).toBe('INVALID_MANIFEST');
    expect(posts).toBe(before);
  });
});

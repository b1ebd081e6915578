// `toolseal yank NAME@VERSION --reason TEXT`: one JSON object on success (and on a second yank, which says so), the
// registry's refusal codes relayed, a code only a verifier may reach (or an answer about another version) FETCH_FAILED.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { cleanupTempDirs, makeTempDir, manifestBytes, runCli } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

const REF = 'io.github.acme/widgets@1.0.0';

describe('toolseal yank against a registry', () => {
  let server: RunningRegistryServer;
  let token: string;
  let otherToken: string;

  beforeAll(async () => {
    const root = makeTempDir();
    server = await startRegistryServer({ dataDir: join(root, 'data'), keysDir: join(root, 'keys'), port: 0 });
    token = (await server.registry.createPublisher('io.github.acme')).token;
    otherToken = (await server.registry.createPublisher('io.github.other')).token;
    for (const version of ['1.0.0', '1.1.0'])
      await server.registry.publish(manifestBytes({ version }), await server.registry.authenticate(token));
  });
  afterAll(async () => server.close());

  it('prints one JSON object; a second yank keeps the first reason and says so; the env may stand for the flags', async () => {
    const first = await runCli(['yank', REF, '--reason', 'leaks a token', '--registry', server.url, '--token', token]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const answer = JSON.parse(first.stdout) as Record<string, unknown>;
    expect(first.stdout.trim().split('\n')).toHaveLength(1);
    expect(answer).toEqual({
      name: 'io.github.acme/widgets',
      version: '1.0.0',
      digest: (await server.store.getVersion('io.github.acme/widgets', '1.0.0'))!.digest,
      status: 'yanked',
      yankReason: 'leaks a token',
      yankedAt: expect.any(String),
      yankLogIndex: expect.any(Number),
      alreadyYanked: false,
    });
    const again = await runCli(['yank', REF, '--reason', 'other'], {
      env: { TOOLSEAL_REGISTRY: server.url, TOOLSEAL_TOKEN: token },
    });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ ...answer, alreadyYanked: true, requestedReason: 'other' });
  });

  it("relays the registry's refusals (exit 1, nothing on stdout) with their pointer", async () => {
    const registry = ['--registry', server.url];
    const cases: [string[], string, string | undefined][] = [
      [['yank', 'io.github.acme/widgets@1.1.0', '--reason', 'x', '--token', 'tsk_wrong'], 'UNAUTHENTICATED', undefined],
      [['yank', 'io.github.acme/widgets@1.1.0', '--reason', 'x', '--token', otherToken], 'FORBIDDEN', undefined],
      [['yank', 'io.github.acme/widgets@9.9.9', '--reason', 'x', '--token', token], 'NOT_FOUND', undefined],
      [
        ['yank', 'io.github.acme/widgets@1.1.0', '--reason', 'bad\u202ereason', '--token', token],
        'BAD_REQUEST',
        '/reason',
      ],
      [['yank', 'io.github.acme/widgets@1.1.0', '--reason', '', '--token', token], 'BAD_REQUEST', '/reason'],
    ];
    const results = await Promise.all(cases.map(([args]) => runCli([...args, ...registry])));
    results.forEach((result, i) => {
      const [, code, pointer] = cases[i]!;
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).toBe('');
      const error = JSON.parse(result.stderr) as { code: string; message: string; pointer?: string };
      expect(error.code).toBe(code);
      expect(error.message).toMatch(/^\/v1\/manifests\/io\.github\.acme\/widgets\/[^/]+\/yank: /);
      expect(error.pointer).toBe(pointer);
    });
    expect((await server.store.getVersion('io.github.acme/widgets', '1.1.0'))!.status).toBe('active');
  });

  it('usage errors exit 2 before any request', async () => {
    const results = await Promise.all(
      [
        ['yank', REF, '--registry', server.url, '--token', token],
        ['yank', `sha256:${'0'.repeat(64)}`, '--reason', 'x', '--registry', server.url, '--token', token],
        ['yank', 'io.github.acme/widgets@latest', '--reason', 'x', '--registry', server.url, '--token', token],
        ['yank', REF, '--reason', 'x', '--token', token],
        ['yank', REF, '--reason', 'x', '--registry', server.url],
      ].map((args) => runCli(args)),
    );
    for (const result of results) {
      expect(result.code, result.stderr).toBe(2);
      expect(JSON.parse(result.stderr.split('\n')[0]!)).toMatchObject({ code: 'USAGE' });
    }
  });
});

describe('toolseal yank against a registry that lies', () => {
  let liar: Server;
  let url: string;
  let answer: { status: number; body: unknown } = { status: 200, body: {} };

  beforeAll(async () => {
    liar = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(answer.status, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise<void>((resolve) => liar.close(() => resolve())));

  it('a verification code it claims, or an answer about another version, is FETCH_FAILED', async () => {
    const yanked = {
      name: 'io.github.acme/widgets',
      version: '2.0.0',
      digest: `sha256:${'a'.repeat(64)}`,
      status: 'yanked',
      yankReason: 'x',
      yankedAt: '2030-01-01T00:00:00.000Z',
      yankLogIndex: 3,
    };
    for (const [status, body] of [
      [502, { code: 'SIGNATURE_INVALID', detail: 'trust me' }],
      [200, yanked],
      [200, { ...yanked, version: '1.0.0', status: 'active' }],
    ] as const) {
      answer = { status, body };
      const result = await runCli(['yank', REF, '--reason', 'x', '--registry', url, '--token', 'tsk_x']);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stdout).toBe('');
      expect(JSON.parse(result.stderr)).toMatchObject({ code: 'FETCH_FAILED' });
    }
  });
});

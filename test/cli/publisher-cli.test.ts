// `toolseal publisher list|revoke|rotate-token` beside a running `toolseal serve` (with its writer thread): the
// server refuses a rotated-out or revoked token at once; the list never shows a token or a token hash.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/registry/index.ts';
import {
  cleanupTempDirs,
  makeTempDir,
  manifestBytes,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '../helpers/registry-helpers.ts';

const servers: ServerProcess[] = [];
afterAll(() => {
  for (const server of servers) server.kill();
  cleanupTempDirs();
});

function publish(url: string, token: string, version: string): Promise<Response> {
  return fetch(`${url}/v1/manifests`, {
    method: 'POST',
    body: manifestBytes({ version }),
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
  });
}

describe('toolseal publisher list, revoke, rotate-token', () => {
  it('a running server refuses the rotated-out token, then the revoked publisher, at once; manifests stay served', async () => {
    const root = makeTempDir();
    const data = ['--data', join(root, 'data')];
    expect((await runCli(['migrate', ...data])).code).toBe(0);
    const added = await runCli(['publisher', 'add', 'io.github.acme', '--unverified-namespace', ...data]);
    expect(added.code, added.stderr).toBe(0);
    const oldToken = added.stdout.trim();
    const server = await startServerProcess([
      '--port',
      '0',
      ...data,
      '--keys',
      join(root, 'keys'),
      '--pipeline-workers',
      '1',
    ]);
    servers.push(server);
    expect((await publish(server.url, oldToken, '1.0.0')).status).toBe(201);

    const rotated = await runCli(['publisher', 'rotate-token', 'io.github.acme', ...data]);
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/^tsk_[A-Za-z0-9_-]{43}\n$/);
    const newToken = rotated.stdout.trim();
    expect((await publish(server.url, oldToken, '1.1.0')).status).toBe(401);
    expect((await publish(server.url, newToken, '1.1.0')).status).toBe(201);

    const revoked = await runCli(['publisher', 'revoke', 'io.github.acme', ...data]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const revocation = JSON.parse(revoked.stdout) as { namespace: string; revokedAt: string; alreadyRevoked: boolean };
    expect(revocation).toEqual({ namespace: 'io.github.acme', revokedAt: expect.any(String), alreadyRevoked: false });
    const refused = await publish(server.url, newToken, '1.2.0');
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe('UNAUTHENTICATED');
    const yank = await fetch(`${server.url}/v1/manifests/io.github.acme/widgets/1.0.0/yank`, {
      method: 'POST',
      body: JSON.stringify({ reason: 'x' }),
      headers: { Authorization: `Bearer ${newToken}` },
    });
    expect(yank.status).toBe(401);
    expect((await fetch(`${server.url}/v1/manifests/io.github.acme/widgets/1.1.0`)).status).toBe(200);

    const listed = await runCli(['publisher', 'list', ...data]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({
      publishers: [
        {
          namespace: 'io.github.acme',
          createdAt: expect.any(String),
          revoked: true,
          revokedAt: revocation.revokedAt,
        },
      ],
      trustRules: [],
    });
    for (const secret of [oldToken, newToken, hashToken(oldToken), hashToken(newToken)])
      expect(listed.stdout).not.toContain(secret);

    const again = await runCli(['publisher', 'revoke', 'io.github.acme', ...data]);
    expect(JSON.parse(again.stdout)).toEqual({ ...revocation, alreadyRevoked: true });
    const rotateRevoked = await runCli(['publisher', 'rotate-token', 'io.github.acme', ...data]);
    expect(rotateRevoked.code).toBe(1);
    expect(rotateRevoked.stdout).toBe('');
    expect(JSON.parse(rotateRevoked.stderr)).toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('NOT_FOUND for an unknown namespace or a folder without a database (nothing created); usage errors exit 2', async () => {
    const root = makeTempDir();
    const data = ['--data', join(root, 'data')];
    const missing = await Promise.all(
      [['list'], ['revoke', 'io.github.acme'], ['rotate-token', 'io.github.acme']].map((args) =>
        runCli(['publisher', ...args, ...data]),
      ),
    );
    for (const result of missing) {
      expect(result.code, result.stderr).toBe(1);
      expect(JSON.parse(result.stderr)).toEqual({
        code: 'NO_REGISTRY',
        message: `no registry in ${join(root, 'data')}: give the --data folder of a registry, or create one there with toolseal migrate`,
      });
    }
    expect(existsSync(join(root, 'data', 'toolseal.db'))).toBe(false);
    expect((await runCli(['migrate', ...data])).code).toBe(0);
    expect((await runCli(['publisher', 'add', 'io.github.acme', '--unverified-namespace', ...data])).code).toBe(0);
    const unknown = await Promise.all(
      ['revoke', 'rotate-token'].map((action) => runCli(['publisher', action, 'io.github.nobody', ...data])),
    );
    for (const result of unknown) {
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stderr)).toMatchObject({ code: 'NOT_FOUND' });
    }
    const usage = await Promise.all(
      [['list', 'io.github.acme'], ['revoke'], ['rotate-token', 'a.b', 'c.d']].map((args) =>
        runCli(['publisher', ...args, ...data]),
      ),
    );
    for (const result of usage) {
      expect(result.code, result.stderr).toBe(2);
      expect(JSON.parse(result.stderr.split('\n')[0]!)).toMatchObject({ code: 'USAGE' });
    }
  });
});

// `toolseal operator|host add|list|revoke` beside a running `toolseal serve --approval-ttl`: the token printed once
// (a warning on stderr, never the token again), the server honours it and the TTL, a revocation holds at once, the
// list shows no token; a TTL outside 1..86400 is a usage error.

import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { selectSignedTool } from '../../src/dispatch/action-digest.ts';
import { hashToken } from '../../src/registry/publishers.ts';
import { REFUND_4200, REFUNDS_MANIFEST, REFUNDS_REF } from '../helpers/approval-helpers.ts';
import {
  cleanupTempDirs,
  makeTempDir,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '../helpers/registry-helpers.ts';

const servers: ServerProcess[] = [];
afterAll(() => {
  for (const server of servers) server.kill();
  cleanupTempDirs();
});

function get(url: string, path: string, token: string): Promise<Response> {
  return fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
}

function post(url: string, path: string, token: string, body: Uint8Array | string): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    body: body as RequestInit['body'],
    headers: { Authorization: `Bearer ${token}` },
  });
}

describe('toolseal operator and host', () => {
  it('add prints the token once, a server takes it and the TTL, revoke holds at once, list shows no token', async () => {
    const root = makeTempDir();
    const data = ['--data', join(root, 'data')];
    expect((await runCli(['migrate', ...data])).code).toBe(0);
    const operator = await runCli(['operator', 'add', 'alice', ...data]);
    expect(operator.code, operator.stderr).toBe(0);
    const operatorToken = operator.stdout.trim();
    expect(operatorToken).toMatch(/^tso_[A-Za-z0-9_-]{43}$/);
    expect(operator.stderr).toMatch(/shown once; keep it/);
    expect(operator.stderr).not.toContain(operatorToken);
    const host = await runCli(['host', 'add', 'host-a', ...data]);
    const hostToken = host.stdout.trim();
    expect(hostToken).toMatch(/^tsh_/);
    const taken = await runCli(['host', 'add', 'host-a', ...data]);
    expect(taken.code).toBe(1);
    expect(JSON.parse(taken.stderr.trim())).toMatchObject({ code: 'NAMESPACE_TAKEN' });
    const bad = await runCli(['operator', 'add', 'Not Valid', ...data]);
    expect(JSON.parse(bad.stderr.trim())).toMatchObject({ code: 'BAD_REQUEST' });
    const publisher = (await runCli(['publisher', 'add', 'io.example.actions', ...data])).stdout.trim();

    const server = await startServerProcess([
      '--port',
      '0',
      ...data,
      '--keys',
      join(root, 'keys'),
      '--approval-ttl',
      '7',
    ]);
    servers.push(server);
    expect(await (await get(server.url, '/v1/whoami', operatorToken)).json()).toEqual({
      kind: 'operator',
      name: 'alice',
    });
    expect(await (await get(server.url, '/v1/whoami', hostToken)).json()).toEqual({ kind: 'host', name: 'host-a' });
    expect((await post(server.url, '/v1/manifests', publisher, REFUNDS_MANIFEST)).status).toBe(201);
    const signedBytes = new Uint8Array(
      await (await fetch(`${server.url}/v1/manifests/io.example.actions/refunds/1.0.0`)).arrayBuffer(),
    );
    const signed = selectSignedTool(signedBytes, 'refund', server.url);
    const head = JSON.stringify({
      type: 'toolseal.action/v1',
      registry: server.url,
      manifest: REFUNDS_REF,
      manifestDigest: signed.manifestDigest,
      tool: 'refund',
      toolDigest: signed.toolDigest,
      audience: 'host-a',
    });
    const created = await post(
      server.url,
      '/v1/approvals',
      hostToken,
      `${head.slice(0, -1)},"arguments":${REFUND_4200}}`,
    );
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const seen = (await (await get(server.url, `/v1/approvals/${id}`, operatorToken)).json()) as {
      createdAt: string;
      expiresAt: string;
    };
    expect(Date.parse(seen.expiresAt) - Date.parse(seen.createdAt)).toBe(7000);

    const revoked = await runCli(['host', 'revoke', 'host-a', ...data]);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ kind: 'host', name: 'host-a', alreadyRevoked: false });
    expect((await get(server.url, '/v1/whoami', hostToken)).status).toBe(401);
    expect((await get(server.url, `/v1/approvals/${id}`, hostToken)).status).toBe(401);
    expect((await get(server.url, `/v1/approvals/${id}`, operatorToken)).status).toBe(200);
    const again = await runCli(['host', 'revoke', 'host-a', ...data]);
    expect(JSON.parse(again.stdout)).toMatchObject({ alreadyRevoked: true });

    const listed = await runCli(['host', 'list', ...data]);
    expect(JSON.parse(listed.stdout)).toEqual({
      hosts: [{ name: 'host-a', createdAt: expect.any(String), revoked: true, revokedAt: expect.any(String) }],
    });
    const operators = await runCli(['operator', 'list', ...data]);
    expect(JSON.parse(operators.stdout)).toMatchObject({ operators: [{ name: 'alice', revoked: false }] });
    for (const output of [listed.stdout, operators.stdout, revoked.stdout]) {
      for (const token of [operatorToken, hostToken]) {
        expect(output).not.toContain(token);
        expect(output).not.toContain(hashToken(token));
      }
    }
    const missing = await runCli(['operator', 'revoke', 'bob', ...data]);
    expect(JSON.parse(missing.stderr.trim())).toMatchObject({ code: 'NOT_FOUND' });
    expect((await runCli(['host', 'frobnicate', 'x', ...data])).code).toBe(2);
  });

  it('serve refuses an approval TTL outside 1..86400 seconds, by flag or TOOLSEAL_APPROVAL_TTL', async () => {
    const root = makeTempDir();
    const args = ['serve', '--port', '0', '--data', join(root, 'data'), '--keys', join(root, 'keys')];
    for (const run of [
      runCli([...args, '--approval-ttl', '0']),
      runCli([...args, '--approval-ttl', '86401']),
      runCli([...args, '--approval-ttl', '1.5']),
      runCli(args, { env: { TOOLSEAL_APPROVAL_TTL: 'soon' } }),
    ]) {
      const result = await run;
      expect(result.code, result.stderr).toBe(2);
      expect(JSON.parse(result.stderr.trim())).toMatchObject({ code: 'USAGE' });
    }
  });
});

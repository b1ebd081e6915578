// The approval routes (src/http/routes/approvals.ts, issue 13 §3) and GET /v1/whoami: tokens by kind, 201 with Location
// and 200 for an identical open request, every code as problem+json with its status, answers never cached, the salt
// only in GET /v1/approvals/{id}, and of 16 concurrent consumes over a real socket exactly one wins.

import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseLogEntry } from '../../src/log/entries.ts';
import {
  approvalConsumePath,
  approvalDecisionPath,
  approvalPath,
  approvalsListPath,
} from '../../src/protocol/routes.ts';
import type { ApprovalCreatedResponse, ApprovalResponse } from '../../src/protocol/wire.ts';
import { runFsck } from '../../src/registry/index.ts';
import { startRegistryServer } from '../../src/server/index.ts';
import {
  type ApprovalEnv,
  buildEnvelope,
  createApprovalEnv,
  REFUND_4200,
  REFUNDS_MANIFEST,
} from '../helpers/approval-helpers.ts';
import { cleanupTempDirs, expectProblem, makeTempDir, snapshotDb } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

let t: ApprovalEnv;
afterEach(async () => t?.close());

function call(method: string, path: string, token?: string, body?: Uint8Array | string): Promise<Response> {
  return Promise.resolve(
    t.app.request(path, {
      method,
      ...(body === undefined ? {} : { body: body as RequestInit['body'] }),
      headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
    }),
  );
}

async function requested(bytes = t.envelope()): Promise<ApprovalCreatedResponse> {
  const response = await call('POST', '/v1/approvals', t.hostToken, bytes);
  expect(response.status).toBe(201);
  return (await response.json()) as ApprovalCreatedResponse;
}

const decision = (verdict: string, digest: string): string => JSON.stringify({ decision: verdict, digest });

describe('GET /v1/whoami', () => {
  it('names the principal of any kind of token; none or an unknown one is 401', async () => {
    t = await createApprovalEnv();
    for (const [token, expected] of [
      [t.token, { kind: 'publisher', name: 'io.example.actions' }],
      [t.operatorToken, { kind: 'operator', name: 'alice' }],
      [t.hostToken, { kind: 'host', name: 'host-a' }],
    ] as const) {
      const response = await call('GET', '/v1/whoami', token);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual(expected);
    }
    const none = await call('GET', '/v1/whoami');
    expect(none.headers.get('WWW-Authenticate')).toBe('Bearer realm="toolseal"');
    await expectProblem(none, 'UNAUTHENTICATED');
    await expectProblem(await call('GET', '/v1/whoami', 'tsh_nope'), 'UNAUTHENTICATED');
    await t.store.revokePrincipal(t.host.id, new Date().toISOString());
    await expectProblem(await call('GET', '/v1/whoami', t.hostToken), 'UNAUTHENTICATED');
  });
});

describe('POST /v1/approvals', () => {
  it('201 with Location and an absolute url, 200 with the same id for an identical open request; never cached', async () => {
    t = await createApprovalEnv();
    const response = await call('POST', '/v1/approvals', t.hostToken, t.envelope());
    expect(response.status).toBe(201);
    const created = (await response.json()) as ApprovalCreatedResponse;
    expect(created.url).toBe(`${t.registry.origin}${approvalPath(created.id)}`);
    expect(response.headers.get('Location')).toBe(created.url);
    expect(response.headers.get('Cache-Control')).toBe('no-store');
    expect(Object.keys(created).sort()).toEqual(['digest', 'expiresAt', 'id', 'status', 'url']);
    const again = await call('POST', '/v1/approvals', t.hostToken, t.envelope());
    expect(again.status).toBe(200);
    expect(again.headers.get('Location')).toBeNull();
    expect(await again.json()).toEqual(created);
  });

  it('needs a host token: none 401, an operator or publisher token 403; errors keep their codes; nothing stored', async () => {
    t = await createApprovalEnv();
    const before = snapshotDb(t.store);
    await expectProblem(await call('POST', '/v1/approvals', undefined, t.envelope()), 'UNAUTHENTICATED');
    await expectProblem(await call('POST', '/v1/approvals', t.operatorToken, t.envelope()), 'FORBIDDEN');
    await expectProblem(await call('POST', '/v1/approvals', t.token, t.envelope()), 'FORBIDDEN');
    await expectProblem(
      await call('POST', '/v1/approvals', t.hostToken, t.envelope(undefined, { audience: 'host-b' })),
      'FORBIDDEN',
      '/audience',
    );
    await expectProblem(
      await call('POST', '/v1/approvals', t.hostToken, t.envelope(REFUND_4200.replace('4200', '4200.0'))),
      'MONEY_INVALID',
    );
    await expectProblem(
      await call('POST', '/v1/approvals', t.hostToken, t.envelope(REFUND_4200.replace('4200', '90000'))),
      'MONEY_CEILING_EXCEEDED',
    );
    await expectProblem(await call('POST', '/v1/approvals', t.hostToken, '{"type":'), 'INVALID_JSON');
    await expectProblem(await call('POST', '/v1/approvals', t.hostToken, 'x'.repeat(64 * 1024 + 1)), 'TOO_LARGE');
    expect(snapshotDb(t.store)).toEqual(before);
  });
});

describe('GET /v1/approvals and /v1/approvals/{id}', () => {
  it('shows one request to its host and operators (salt included), 404 to another host, 403 to a publisher', async () => {
    t = await createApprovalEnv();
    const { id, digest } = await requested();
    const asHost = await call('GET', approvalPath(id), t.hostToken);
    expect(asHost.status).toBe(200);
    expect(asHost.headers.get('Cache-Control')).toBe('no-store');
    const body = (await asHost.json()) as ApprovalResponse;
    expect(body).toMatchObject({ id, digest, status: 'pending', tool: { name: 'refund' } });
    expect(Buffer.from(body.commitmentSalt, 'base64url').equals((await t.store.getApproval(id))!.salt)).toBe(true);
    expect(await (await call('GET', approvalPath(id), t.operatorToken)).json()).toEqual(body);
    const otherHost = (await t.registry.createPrincipal('host', 'host-b')).token;
    await expectProblem(await call('GET', approvalPath(id), otherHost), 'NOT_FOUND');
    await expectProblem(await call('GET', approvalPath(id), t.token), 'FORBIDDEN');
    await expectProblem(await call('GET', approvalPath(`apr_${'x'.repeat(22)}`), t.operatorToken), 'NOT_FOUND');
    const head = await call('HEAD', approvalPath(id), t.operatorToken);
    expect(head.status).toBe(200);
    const wrongMethod = await call('POST', approvalPath(id), t.operatorToken, '{}');
    expect(wrongMethod.headers.get('Allow')).toBe('GET, HEAD');
    await expectProblem(wrongMethod, 'METHOD_NOT_ALLOWED');
  });

  it('lists for operators only, by status and limit, without salts, envelopes or arguments', async () => {
    t = await createApprovalEnv();
    const first = await requested();
    const second = await requested(t.envelope(REFUND_4200.replace('4200', '17')));
    const response = await call('GET', approvalsListPath('pending'), t.operatorToken);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text).items.map((item: { id: string }) => item.id)).toEqual([second.id, first.id]);
    const salt = (await t.store.getApproval(first.id))!.salt.toString('base64url');
    for (const hidden of [salt, 'commitmentSalt', 'cust_A', 'envelope', 'material']) expect(text).not.toContain(hidden);
    const limited = await call('GET', '/v1/approvals?limit=1', t.operatorToken);
    expect(((await limited.json()) as { items: unknown[] }).items).toHaveLength(1);
    await expectProblem(await call('GET', approvalsListPath('pending'), t.hostToken), 'FORBIDDEN');
    await expectProblem(await call('GET', approvalsListPath('pending')), 'UNAUTHENTICATED');
    await expectProblem(await call('GET', approvalsListPath('nope'), t.operatorToken), 'BAD_REQUEST');
    for (const limit of ['0', '501', '01', '1e2', '-1'])
      await expectProblem(await call('GET', `/v1/approvals?limit=${limit}`, t.operatorToken), 'BAD_REQUEST');
  });
});

describe('decisions and consumption', () => {
  it('walks every code: pending, mismatch, approve, consume, consumed, decided, denied, expired', async () => {
    t = await createApprovalEnv({ approvalTtlSeconds: 120 });
    const { id, digest } = await requested();
    const consume = (bytes = t.envelope(), token = t.hostToken) => call('POST', approvalConsumePath(id), token, bytes);
    const decide = (body: string, which = id, token = t.operatorToken) =>
      call('POST', approvalDecisionPath(which), token, body);
    await expectProblem(await consume(), 'APPROVAL_PENDING');
    await expectProblem(await decide(decision('approve', digest), id, t.hostToken), 'FORBIDDEN');
    const other = await requested(t.envelope(REFUND_4200.replace('4200', '4201')));
    await expectProblem(await decide(decision('approve', other.digest)), 'APPROVAL_DIGEST_MISMATCH', '/digest');
    await expectProblem(
      await decide(JSON.stringify({ decision: 'approve', digest, by: 'me' })),
      'UNKNOWN_FIELD',
      '/by',
    );
    const approved = await decide(decision('approve', digest));
    expect(approved.status).toBe(200);
    expect(await approved.json()).toMatchObject({ id, digest, status: 'approved' });
    await expectProblem(await decide(decision('deny', digest)), 'APPROVAL_DECIDED');
    await expectProblem(await consume(t.envelope(REFUND_4200.replace('4200', '4201'))), 'APPROVAL_DIGEST_MISMATCH');
    await expectProblem(await consume(undefined, t.operatorToken), 'FORBIDDEN');
    const consumed = await consume();
    expect(consumed.status).toBe(200);
    expect(await consumed.json()).toMatchObject({ id, digest, status: 'consumed' });
    await expectProblem(await consume(), 'APPROVAL_CONSUMED');
    expect((await decide(decision('deny', other.digest), other.id)).status).toBe(200);
    await expectProblem(
      await call('POST', approvalConsumePath(other.id), t.hostToken, t.envelope(REFUND_4200.replace('4200', '4201'))),
      'APPROVAL_DENIED',
    );
    const late = await requested(t.envelope(REFUND_4200.replace('4200', '99')));
    t.advance(120);
    await expectProblem(await decide(decision('approve', late.digest), late.id), 'APPROVAL_EXPIRED');
    expect(((await (await call('GET', approvalPath(late.id), t.hostToken)).json()) as ApprovalResponse).status).toBe(
      'expired',
    );
  });
});

describe('16 concurrent consumes over HTTP', () => {
  it.each([0, 1])('exactly one wins, one leaf is logged, fsck stays clean (pipeline workers: %i)', async (workers) => {
    const root = makeTempDir();
    const server = await startRegistryServer({
      dataDir: `${root}/data`,
      keysDir: `${root}/keys`,
      port: 0,
      pipelineWorkers: workers,
    });
    try {
      const { registry } = server;
      const publisher = await registry.createPublisher('io.example.actions');
      await registry.publish(REFUNDS_MANIFEST, publisher.publisher);
      const host = (await registry.createPrincipal('host', 'host-a')).token;
      const operator = (await registry.createPrincipal('operator', 'alice')).token;
      const envelope = await buildEnvelope(registry);
      const post = (path: string, token: string, body: Uint8Array | string) =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          body: body as RequestInit['body'],
          headers: { Authorization: `Bearer ${token}` },
        });
      const created = (await (await post('/v1/approvals', host, envelope)).json()) as ApprovalCreatedResponse;
      expect((await post(approvalDecisionPath(created.id), operator, decision('approve', created.digest))).status).toBe(
        200,
      );
      const answers = await Promise.all(
        Array.from({ length: 16 }, () => post(approvalConsumePath(created.id), host, envelope)),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([200, ...Array(15).fill(409)]);
      for (const answer of answers) {
        const body = (await answer.json()) as { code?: string };
        if (answer.status === 409) expect(body.code).toBe('APPROVAL_CONSUMED');
      }
      const kinds = (await server.store.readLogEntries(0, await server.store.getLogSize()))
        .map((entry) => parseLogEntry(entry.data))
        .map((parsed) => (parsed.ok ? parsed.kind : 'bad'));
      expect(kinds.filter((kind) => kind === 'approval-consumption')).toHaveLength(1);
      expect(kinds.filter((kind) => kind === 'approval-decision')).toHaveLength(1);
      // Publishing (on the writer thread when there is one) goes on over the same log.
      const next = new TextDecoder().decode(REFUNDS_MANIFEST).replace('"1.0.0"', '"1.0.1"');
      expect((await post('/v1/manifests', publisher.token, next)).status).toBe(201);
      const report = await runFsck(server.store, registry.log.verifierString);
      expect(report.problems).toEqual([]);
      expect(report.checked.approvals).toBe(1);
    } finally {
      await server.close();
    }
  });
});

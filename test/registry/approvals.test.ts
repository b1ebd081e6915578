// The approval service (src/registry/approvals.ts, issue 13 §3): the registry recomputes every digest itself, an
// identical open request is reused, states move one way (expired computed at read time), every code is refused with
// nothing stored, each transition is one leaf under a signed checkpoint, and the salt never reaches the log.

import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { computeAction } from '../../src/dispatch/action-digest.ts';
import { readActionRequest } from '../../src/dispatch/action-request.ts';
import { ToolsealError, type ErrorCode } from '../../src/core/errors.ts';
import { computeApprovalCommitment, parseLogEntry } from '../../src/log/entries.ts';
import { DEFAULT_APPROVAL_TTL_SECONDS } from '../../src/protocol/wire.ts';
import {
  type ApprovalEnv,
  createApprovalEnv,
  decisionBody,
  REFUND_4200,
  REFUNDS_NAME,
} from '../helpers/approval-helpers.ts';
import { cleanupTempDirs, snapshotDb, utf8 } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

let t: ApprovalEnv;
afterEach(async () => t?.close());

/** The refusal `run` throws, or its promise rejects with (requestApproval is synchronous; decide and consume are not). */
async function refusal(run: () => unknown, code: ErrorCode, pointer?: string): Promise<ToolsealError> {
  let caught: unknown;
  try {
    await run();
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${code}`).toBeInstanceOf(ToolsealError);
  expect((caught as ToolsealError).code, (caught as ToolsealError).message).toBe(code);
  if (pointer !== undefined) expect((caught as ToolsealError).pointer).toBe(pointer);
  return caught as ToolsealError;
}

/** A refusal that leaves every table as it was. */
async function refusedWithNothingStored(run: () => unknown, code: ErrorCode, pointer?: string): Promise<void> {
  const before = snapshotDb(t.store);
  await refusal(run, code, pointer);
  expect(snapshotDb(t.store)).toEqual(before);
}

function expectedDigest(argumentsText = REFUND_4200, audience = 'host-a'): string {
  return computeAction(t.signed, readActionRequest(t.envelope(argumentsText)).arguments, audience).digest;
}

describe('requesting an approval', () => {
  it('stores the envelope exactly as sent with the digest the registry recomputed, pending for the TTL', async () => {
    t = await createApprovalEnv();
    const envelope = t.envelope();
    const created = await t.registry.requestApproval(t.host, envelope);
    expect(created).toMatchObject({ created: true, status: 'pending', digest: expectedDigest() });
    expect(created.id).toMatch(/^apr_[A-Za-z0-9_-]{22}$/);
    const row = (await t.store.getApproval(created.id))!;
    expect(Buffer.compare(row.envelope, Buffer.from(envelope))).toBe(0);
    expect(row.salt.byteLength).toBe(32);
    expect(Date.parse(row.expiresAt) - Date.parse(row.createdAt)).toBe(DEFAULT_APPROVAL_TTL_SECONDS * 1000);
    expect(row).toMatchObject({
      audience: 'host-a',
      manifestName: REFUNDS_NAME,
      manifestVersion: '1.0.0',
      tool: 'refund',
    });
  });

  it('returns the open request for an identical call (an informational change is identical), a new one otherwise', async () => {
    t = await createApprovalEnv();
    const first = await t.registry.requestApproval(t.host, t.envelope());
    const again = await t.registry.requestApproval(
      t.host,
      t.envelope(REFUND_4200.replace('late delivery', 'other note')),
    );
    expect(again).toMatchObject({ created: false, id: first.id, digest: first.digest, status: 'pending' });
    const other = await t.registry.requestApproval(t.host, t.envelope(REFUND_4200.replace('4200', '4201')));
    expect(other.created).toBe(true);
    expect(other.digest).not.toBe(first.digest);
    // Once decided (approved) it is still open; once consumed a new request is needed.
    await t.registry.decideApproval(t.operator, first.id, decisionBody('approve', first.digest));
    expect(await t.registry.requestApproval(t.host, t.envelope())).toMatchObject({
      created: false,
      status: 'approved',
    });
    await t.registry.consumeApproval(t.host, first.id, t.envelope());
    const fresh = await t.registry.requestApproval(t.host, t.envelope());
    expect(fresh.created).toBe(true);
    expect(fresh.id).not.toBe(first.id);
  });

  it('a denial is sticky: the identical request gets the denied one back until it expires; another amount is new', async () => {
    t = await createApprovalEnv({ approvalTtlSeconds: 60 });
    const first = await t.registry.requestApproval(t.host, t.envelope());
    await t.registry.decideApproval(t.operator, first.id, decisionBody('deny', first.digest, 'no'));
    expect(await t.registry.requestApproval(t.host, t.envelope())).toMatchObject({
      created: false,
      id: first.id,
      status: 'denied',
    });
    expect((await t.registry.requestApproval(t.host, t.envelope(REFUND_4200.replace('4200', '4201')))).created).toBe(
      true,
    );
    t.advance(60);
    const after = await t.registry.requestApproval(t.host, t.envelope());
    expect(after.created).toBe(true);
    expect(after.id).not.toBe(first.id);
  });

  it('a new request once the open one has expired', async () => {
    t = await createApprovalEnv({ approvalTtlSeconds: 60 });
    const first = await t.registry.requestApproval(t.host, t.envelope());
    t.advance(60);
    const second = await t.registry.requestApproval(t.host, t.envelope());
    expect(second.created).toBe(true);
    expect(second.id).not.toBe(first.id);
  });

  it('refuses, storing nothing: other audience, unknown or yanked version, wrong tool or digests, bad arguments', async () => {
    t = await createApprovalEnv();
    const r = (bytes: Uint8Array) => () => t.registry.requestApproval(t.host, bytes);
    await refusedWithNothingStored(r(t.envelope(undefined, { audience: 'host-b' })), 'FORBIDDEN', '/audience');
    await refusedWithNothingStored(
      r(t.envelope(undefined, { manifest: `${REFUNDS_NAME}@9.9.9` })),
      'NOT_FOUND',
      '/manifest',
    );
    await refusedWithNothingStored(r(t.envelope(undefined, { manifest: 'latest' })), 'BAD_REQUEST', '/manifest');
    await refusedWithNothingStored(
      r(t.envelope(undefined, { registry: 'https://elsewhere.test' })),
      'BAD_REQUEST',
      '/registry',
    );
    await refusedWithNothingStored(r(t.envelope(undefined, { tool: 'nope' })), 'NOT_FOUND');
    await refusedWithNothingStored(
      r(t.envelope(undefined, { toolDigest: `sha256:${'0'.repeat(64)}` })),
      'DIGEST_MISMATCH',
      '/toolDigest',
    );
    await refusedWithNothingStored(
      r(t.envelope(undefined, { manifestDigest: `sha256:${'0'.repeat(64)}` })),
      'DIGEST_MISMATCH',
      '/manifestDigest',
    );
    await refusedWithNothingStored(r(t.envelope(REFUND_4200.replace('4200', '4200.0'))), 'MONEY_INVALID');
    await refusedWithNothingStored(r(t.envelope(REFUND_4200.replace('4200', '"4200"'))), 'ARGUMENTS_INVALID');
    await refusedWithNothingStored(r(t.envelope(REFUND_4200.replace('4200', '50001'))), 'MONEY_CEILING_EXCEEDED');
    await refusedWithNothingStored(r(t.envelope(undefined, { digest: expectedDigest() })), 'UNKNOWN_FIELD', '/digest');
    await refusedWithNothingStored(r(utf8('{"type":"toolseal.action/v1","type":1}')), 'DUPLICATE_KEY');
    await t.registry.yank(t.publisher, REFUNDS_NAME, '1.0.0', 'withdrawn');
    await refusedWithNothingStored(r(t.envelope()), 'VERSION_YANKED', '/manifest');
  });

  it('refuses a revoked host inside the write', async () => {
    t = await createApprovalEnv();
    await t.store.revokePrincipal(t.host.id, new Date().toISOString());
    await refusedWithNothingStored(() => t.registry.requestApproval(t.host, t.envelope()), 'UNAUTHENTICATED');
  });
});

describe('reading approvals', () => {
  it('shows the host and operators the envelope, the signed tool, the material view and the salt', async () => {
    t = await createApprovalEnv();
    const sent = REFUND_4200.replace('["vip", "late"]', '["late", "vip"]');
    const { id, digest } = await t.registry.requestApproval(t.host, t.envelope(sent));
    const seen = await t.registry.getApproval(t.host, id);
    expect(seen).toMatchObject({ id, digest, status: 'pending' });
    expect(seen.envelope).toEqual(JSON.parse(new TextDecoder().decode(t.envelope(sent))));
    expect(seen.tool).toEqual(t.signed.tool);
    expect(seen.material).toEqual({
      amount: 4200,
      currency: 'USD',
      recipient: 'cust_A',
      tags: ['late', 'vip'],
      steps: ['credit', 'notify'],
    });
    const salt = Buffer.from(seen.commitmentSalt, 'base64url');
    expect(salt.equals((await t.store.getApproval(id))!.salt)).toBe(true);
    expect(await t.registry.getApproval(t.operator, id)).toEqual(seen);
  });

  it("hides another host's request (NOT_FOUND), and reads expired at read time without storing it", async () => {
    t = await createApprovalEnv({ approvalTtlSeconds: 30 });
    const { id } = await t.registry.requestApproval(t.host, t.envelope());
    const other = (await t.registry.createPrincipal('host', 'host-b')).principal;
    await refusal(() => t.registry.getApproval(other, id), 'NOT_FOUND');
    t.advance(30);
    expect((await t.registry.getApproval(t.host, id)).status).toBe('expired');
    expect((await t.store.getApproval(id))!.status).toBe('pending');
  });

  it('lists newest first, filtered by status (expired computed), bounded by limit', async () => {
    t = await createApprovalEnv({ approvalTtlSeconds: 100 });
    const a = await t.registry.requestApproval(t.host, t.envelope(REFUND_4200.replace('4200', '1')));
    t.advance(1);
    const b = await t.registry.requestApproval(t.host, t.envelope(REFUND_4200.replace('4200', '2')));
    t.advance(1);
    const c = await t.registry.requestApproval(t.host, t.envelope(REFUND_4200.replace('4200', '3')));
    await t.registry.decideApproval(t.operator, b.id, decisionBody('deny', b.digest, 'no'));
    expect((await t.registry.listApprovals(undefined, 500)).items.map((i) => i.id)).toEqual([c.id, b.id, a.id]);
    expect((await t.registry.listApprovals('pending', 500)).items.map((i) => i.id)).toEqual([c.id, a.id]);
    expect((await t.registry.listApprovals('denied', 500)).items).toMatchObject([
      { id: b.id, decidedBy: 'alice', reason: 'no' },
    ]);
    expect((await t.registry.listApprovals(undefined, 1)).items.map((i) => i.id)).toEqual([c.id]);
    t.advance(101);
    expect((await t.registry.listApprovals('expired', 500)).items.map((i) => i.id)).toEqual([c.id, a.id]);
    expect((await t.registry.listApprovals('pending', 500)).items).toEqual([]);
    const item = (await t.registry.listApprovals(undefined, 500)).items[0]!;
    expect(Object.keys(item)).not.toContain('commitmentSalt');
    expect(Object.keys(item)).not.toContain('envelope');
  });
});

describe('deciding', () => {
  it('approves in one transaction with its leaf under a signed checkpoint; the leaf commits with the salt', async () => {
    t = await createApprovalEnv();
    const { id, digest } = await t.registry.requestApproval(t.host, t.envelope());
    const size = await t.store.getLogSize();
    const decided = await t.registry.decideApproval(t.operator, id, decisionBody('approve', digest, 'ok for cust_A'));
    expect(decided).toEqual({ id, digest, status: 'approved', logIndex: size });
    expect((await t.store.latestCheckpoint())!.size).toBe(size + 1);
    const row = (await t.store.getApproval(id))!;
    expect(row).toMatchObject({
      status: 'approved',
      decidedBy: 'alice',
      reason: 'ok for cust_A',
      decisionLogIndex: size,
    });
    const [entry] = await t.store.readLogEntries(size, size + 1);
    expect(entry!.kind).toBe('approval-decision');
    const parsed = parseLogEntry(entry!.data);
    expect(parsed).toEqual({
      ok: true,
      kind: 'approval-decision',
      entry: {
        type: 'toolseal.approval-decision/v1',
        approval: id,
        commitment: computeApprovalCommitment(row.salt, digest),
        decision: 'approve',
        operator: 'alice',
        audience: 'host-a',
        manifest: `${REFUNDS_NAME}@1.0.0`,
        tool: 'refund',
        decidedAt: row.decidedAt,
      },
    });
    const text = entry!.data.toString('utf8');
    for (const secret of [
      digest,
      row.salt.toString('base64url'),
      row.salt.toString('hex'),
      'cust_A',
      '4200',
      'ok for',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(await t.registry.getApproval(t.host, id)).toMatchObject({
      status: 'approved',
      decidedBy: 'alice',
      decisionLogIndex: size,
    });
  });

  it('refuses with nothing stored: unknown id, other digest, expired, decided twice, bad bodies', async () => {
    t = await createApprovalEnv({ approvalTtlSeconds: 60 });
    const { id, digest } = await t.registry.requestApproval(t.host, t.envelope());
    const d =
      (body: Uint8Array, which = id) =>
      () =>
        t.registry.decideApproval(t.operator, which, body);
    await refusedWithNothingStored(d(decisionBody('approve', digest), `apr_${'A'.repeat(22)}`), 'NOT_FOUND');
    await refusedWithNothingStored(
      d(decisionBody('approve', expectedDigest(REFUND_4200.replace('4200', '4201')))),
      'APPROVAL_DIGEST_MISMATCH',
      '/digest',
    );
    await refusedWithNothingStored(d(decisionBody('maybe', digest)), 'BAD_REQUEST', '/decision');
    await refusedWithNothingStored(d(utf8(JSON.stringify({ decision: 'approve' }))), 'BAD_REQUEST', '/digest');
    await refusedWithNothingStored(
      d(utf8(JSON.stringify({ decision: 'approve', digest, extra: 1 }))),
      'UNKNOWN_FIELD',
      '/extra',
    );
    await refusedWithNothingStored(d(decisionBody('approve', digest, 'line\nbreak')), 'BAD_REQUEST', '/reason');
    await refusedWithNothingStored(d(decisionBody('approve', digest, 'x'.repeat(1001))), 'BAD_REQUEST', '/reason');
    await refusedWithNothingStored(
      d(utf8(JSON.stringify({ decision: 'approve', digest, reason: 5 }))),
      'BAD_REQUEST',
      '/reason',
    );
    await refusedWithNothingStored(d(utf8('{"decision":"approve","decision":"deny"}')), 'DUPLICATE_KEY');
    await t.registry.decideApproval(t.operator, id, decisionBody('deny', digest));
    await refusedWithNothingStored(d(decisionBody('approve', digest)), 'APPROVAL_DECIDED');
    const late = await t.registry.requestApproval(t.host, t.envelope(REFUND_4200.replace('4200', '7')));
    t.advance(60);
    await refusedWithNothingStored(d(decisionBody('approve', late.digest), late.id), 'APPROVAL_EXPIRED');
  });

  it('refuses an operator revoked after it authenticated', async () => {
    t = await createApprovalEnv();
    const { id, digest } = await t.registry.requestApproval(t.host, t.envelope());
    await t.store.revokePrincipal(t.operator.id, new Date().toISOString());
    await refusedWithNothingStored(
      () => t.registry.decideApproval(t.operator, id, decisionBody('approve', digest)),
      'UNAUTHENTICATED',
    );
  });
});

describe('consuming', () => {
  it('consumes an approved request once, with its leaf; every later state is refused with its code', async () => {
    t = await createApprovalEnv();
    const { id, digest } = await t.registry.requestApproval(t.host, t.envelope());
    const consume =
      (bytes = t.envelope()) =>
      () =>
        t.registry.consumeApproval(t.host, id, bytes);
    await refusedWithNothingStored(consume(), 'APPROVAL_PENDING');
    await t.registry.decideApproval(t.operator, id, decisionBody('approve', digest));
    await refusedWithNothingStored(
      consume(t.envelope(REFUND_4200.replace('4200', '4201'))),
      'APPROVAL_DIGEST_MISMATCH',
    );
    await refusedWithNothingStored(
      consume(t.envelope(REFUND_4200.replace('["credit", "notify"]', '["notify", "credit"]'))),
      'APPROVAL_DIGEST_MISMATCH',
    );
    await refusedWithNothingStored(consume(t.envelope(REFUND_4200.replace('4200', '4200.0'))), 'MONEY_INVALID');
    await refusedWithNothingStored(consume(t.envelope(undefined, { audience: 'host-b' })), 'FORBIDDEN', '/audience');
    const size = await t.store.getLogSize();
    // An informational change after approval still matches.
    const consumed = await t.registry.consumeApproval(t.host, id, t.envelope(REFUND_4200.replace('t-1', 't-2')));
    expect(consumed).toEqual({ id, digest, status: 'consumed', logIndex: size });
    expect((await t.store.latestCheckpoint())!.size).toBe(size + 1);
    const row = (await t.store.getApproval(id))!;
    expect(row).toMatchObject({ status: 'consumed', consumptionLogIndex: size });
    expect(parseLogEntry((await t.store.readLogEntries(size, size + 1))[0]!.data)).toEqual({
      ok: true,
      kind: 'approval-consumption',
      entry: {
        type: 'toolseal.approval-consumption/v1',
        approval: id,
        commitment: computeApprovalCommitment(row.salt, digest),
        consumedAt: row.consumedAt,
      },
    });
    await refusedWithNothingStored(consume(), 'APPROVAL_CONSUMED');
    expect((await t.registry.getApproval(t.operator, id)).status).toBe('consumed');
  });

  it('refuses denied and expired requests, and hides another host', async () => {
    t = await createApprovalEnv({ approvalTtlSeconds: 60 });
    const denied = await t.registry.requestApproval(t.host, t.envelope());
    await t.registry.decideApproval(t.operator, denied.id, decisionBody('deny', denied.digest));
    await refusedWithNothingStored(
      () => t.registry.consumeApproval(t.host, denied.id, t.envelope()),
      'APPROVAL_DENIED',
    );
    const approved = await t.registry.requestApproval(t.host, t.envelope(REFUND_4200.replace('4200', '5')));
    await t.registry.decideApproval(t.operator, approved.id, decisionBody('approve', approved.digest));
    const other = (await t.registry.createPrincipal('host', 'host-b')).principal;
    const bytes = t.envelope(REFUND_4200.replace('4200', '5'));
    await refusedWithNothingStored(() => t.registry.consumeApproval(other, approved.id, bytes), 'NOT_FOUND');
    t.advance(60);
    await refusedWithNothingStored(() => t.registry.consumeApproval(t.host, approved.id, bytes), 'APPROVAL_EXPIRED');
    expect((await t.registry.getApproval(t.host, approved.id)).status).toBe('expired');
  });
});

describe('the database keeps approvals immutable', () => {
  it('refuses to change what was asked, to delete, to move a state backwards or to rewrite a log index', async () => {
    t = await createApprovalEnv();
    const { id, digest } = await t.registry.requestApproval(t.host, t.envelope());
    const { sqliteDatabaseOf } = await import('../../src/store/sqlite/index.ts');
    const db = sqliteDatabaseOf(t.store);
    const refused = (statement: string, ...params: unknown[]) =>
      expect(() => db.prepare(statement).run(...params)).toThrow(/immutable|kept forever|moves only|stays revoked/);
    refused('UPDATE approvals SET envelope = ? WHERE id = ?', Buffer.from('{}'), id);
    refused('UPDATE approvals SET digest = ? WHERE id = ?', `sha256:${'0'.repeat(64)}`, id);
    refused('UPDATE approvals SET salt = ? WHERE id = ?', Buffer.alloc(32), id);
    refused('UPDATE approvals SET expires_at = ? WHERE id = ?', '2999-01-01T00:00:00.000Z', id);
    refused('DELETE FROM approvals WHERE id = ?', id);
    refused("UPDATE approvals SET status = 'consumed', consumed_at = 'x', consumption_log_index = 99 WHERE id = ?", id);
    await t.registry.decideApproval(t.operator, id, decisionBody('approve', digest));
    refused("UPDATE approvals SET status = 'pending' WHERE id = ?", id);
    refused('UPDATE approvals SET decision_log_index = 99 WHERE id = ?', id);
    refused("UPDATE approvals SET status = 'denied' WHERE id = ?", id);
    await t.registry.consumeApproval(t.host, id, t.envelope());
    refused('UPDATE approvals SET consumption_log_index = 99 WHERE id = ?', id);
    refused("UPDATE approvals SET status = 'approved' WHERE id = ?", id);
    refused("UPDATE principals SET name = 'mallory' WHERE id = ?", t.host.id);
    refused('DELETE FROM principals WHERE id = ?', t.host.id);
    expect(() => db.prepare('INSERT INTO approvals SELECT * FROM approvals').run()).toThrow();
  });
});

// fsck of approvals (src/registry/fsck-approvals.ts): an intact registry with requests in every state passes; a
// rewritten envelope, digest or salt, a state without its leaf, and an approval leaf without its row are each found.

import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { formatApprovalDecisionEntry } from '../../src/log/entries.ts';
import { runFsck } from '../../src/registry/index.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';
import { type ApprovalEnv, createApprovalEnv, decisionBody, REFUND_4200 } from '../helpers/approval-helpers.ts';
import { cleanupTempDirs } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

let t: ApprovalEnv;
afterEach(async () => t?.close());

/** Requests pending, approved, denied and consumed; returns their ids in that order. */
async function populated(): Promise<string[]> {
  t = await createApprovalEnv();
  const ask = async (amount: number) =>
    await t.registry.requestApproval(t.host, t.envelope(REFUND_4200.replace('4200', String(amount))));
  const pending = await ask(1);
  const approved = await ask(2);
  const denied = await ask(3);
  const consumed = await ask(4);
  await t.registry.decideApproval(t.operator, approved.id, decisionBody('approve', approved.digest));
  await t.registry.decideApproval(t.operator, denied.id, decisionBody('deny', denied.digest, 'no'));
  await t.registry.decideApproval(t.operator, consumed.id, decisionBody('approve', consumed.digest));
  await t.registry.consumeApproval(t.host, consumed.id, t.envelope(REFUND_4200.replace('4200', '4')));
  return [pending.id, approved.id, denied.id, consumed.id];
}

function tamper(statement: string, ...params: unknown[]): void {
  const db = sqliteDatabaseOf(t.store);
  db.exec('DROP TRIGGER IF EXISTS approvals_immutable_columns; DROP TRIGGER IF EXISTS approvals_transitions');
  db.prepare(statement).run(...params);
}

async function problemsOf(): Promise<{ code: string; where: string; message: string }[]> {
  return (await runFsck(t.store, t.registry.log.verifierString)).problems;
}

describe('fsck of approvals', () => {
  it('passes an intact registry with requests in every state', async () => {
    await populated();
    const report = await runFsck(t.store, t.registry.log.verifierString);
    expect(report.problems).toEqual([]);
    expect(report.checked.approvals).toBe(4);
  });

  it('finds a rewritten envelope: it no longer recomputes to the digest', async () => {
    const [pending] = await populated();
    const envelope = (await t.store.getApproval(pending!))!.envelope
      .toString('utf8')
      .replace('"amount": 1', '"amount": 9');
    tamper('UPDATE approvals SET envelope = ? WHERE id = ?', Buffer.from(envelope), pending);
    expect(await problemsOf()).toMatchObject([
      { code: 'INTEGRITY_ERROR', where: `approval ${pending}`, message: expect.stringMatching(/recomputes to/) },
    ]);
  });

  it('finds a rewritten digest or salt of a decided request: the leaf no longer commits to it', async () => {
    const [, approved, denied] = await populated();
    tamper('UPDATE approvals SET salt = ? WHERE id = ?', Buffer.alloc(32, 7), approved);
    tamper('UPDATE approvals SET digest = ? WHERE id = ?', `sha256:${'1'.repeat(64)}`, denied);
    const problems = await problemsOf();
    expect(problems).toContainEqual({
      code: 'NOT_IN_LOG',
      where: `approval ${approved}`,
      message: 'its decision leaf differs in commitment',
    });
    expect(
      problems
        .filter((p) => p.where === `approval ${denied}`)
        .map((p) => p.code)
        .sort(),
    ).toEqual(['INTEGRITY_ERROR', 'NOT_IN_LOG']);
  });

  it('finds a salt of the wrong length, and a state without its leaf', async () => {
    const [pending, approved] = await populated();
    const db = sqliteDatabaseOf(t.store);
    db.pragma('ignore_check_constraints = ON');
    tamper('UPDATE approvals SET salt = ? WHERE id = ?', Buffer.alloc(31), pending);
    tamper("UPDATE approvals SET status = 'consumed' WHERE id = ?", approved);
    const problems = await problemsOf();
    expect(problems).toContainEqual({
      code: 'INTEGRITY_ERROR',
      where: `approval ${pending}`,
      message: 'salt is 31 bytes, not 32',
    });
    expect(problems).toContainEqual({
      code: 'INTEGRITY_ERROR',
      where: `approval ${approved}`,
      message: 'status consumed with its consumption index',
    });
  });

  it('finds an approval leaf that no row records', async () => {
    await populated();
    const index = await t.store.transaction(
      async () =>
        await t.registry.log.appendLeaf(
          'approval-decision',
          formatApprovalDecisionEntry({
            approval: `apr_${'Z'.repeat(22)}`,
            commitment: `sha256:${'2'.repeat(64)}`,
            decision: 'approve',
            operator: 'alice',
            audience: 'host-a',
            manifest: 'io.example.actions/refunds@1.0.0',
            tool: 'refund',
            decidedAt: new Date().toISOString(),
          }),
        ),
    );
    await t.registry.log.signLatestCheckpoint();
    expect(await problemsOf()).toEqual([
      {
        code: 'INTEGRITY_ERROR',
        where: `log entry ${index}`,
        message: `no approval row records this approval-decision of apr_${'Z'.repeat(22)}`,
      },
    ]);
  });
});

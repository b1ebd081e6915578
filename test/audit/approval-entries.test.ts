// The auditor's approval rules (src/audit/entries.ts, issue 13 §3): approval leaves are counted by kind, malformed ones
// reported; at most one decision and one consumption per approval, a consumption only after an approve decision with
// the same commitment (required when the walk starts at the first entry), nothing after a deny. Also end to end: an
// audit of a registry that decided and consumed approvals passes and counts them.

import { afterAll, describe, expect, it } from 'vitest';
import { checkEntry, createEntryContext, type EntryContext } from '../../src/audit/entries.ts';
import type { AuditProblemCode } from '../../src/audit/report.ts';
import { runAudit } from '../../src/audit/index.ts';
import { canonicalizeToBytes } from '../../src/pipeline/canonical.ts';
import { formatApprovalConsumptionEntry, formatApprovalDecisionEntry } from '../../src/log/entries.ts';
import { startRegistryServer } from '../../src/server/index.ts';
import { buildEnvelope, decisionBody, REFUNDS_MANIFEST } from '../helpers/approval-helpers.ts';
import { cleanupTempDirs, makeTempDir } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

const ID = `apr_${'A'.repeat(22)}`;
const C1 = `sha256:${'1'.repeat(64)}` as const;
const C2 = `sha256:${'2'.repeat(64)}` as const;

function decided(decision: 'approve' | 'deny', commitment = C1, approval = ID): Uint8Array {
  return formatApprovalDecisionEntry({
    approval,
    commitment,
    decision,
    operator: 'alice',
    audience: 'host-a',
    manifest: 'io.example.actions/refunds@1.0.0',
    tool: 'refund',
    decidedAt: '2026-12-01T12:00:00.000Z',
  });
}

function consumed(commitment = C1, approval = ID): Uint8Array {
  return formatApprovalConsumptionEntry({ approval, commitment, consumedAt: '2026-12-01T12:01:00.000Z' });
}

/** Walk `leaves` in order with one context; every problem as [index, code, message]. */
async function walk(leaves: Uint8Array[], context: EntryContext = createEntryContext([], undefined, true)) {
  const problems: [number, AuditProblemCode, string][] = [];
  const kinds: string[] = [];
  for (const [index, data] of leaves.entries()) {
    kinds.push(
      await checkEntry(
        index,
        data,
        context,
        (code, message) => problems.push([index, code, message]),
        async () => {},
      ),
    );
  }
  return { kinds, problems };
}

describe('approval entries in the audit', () => {
  it('an approve then its consumption with the same commitment is clean, and counted by kind', async () => {
    expect(await walk([decided('approve'), consumed()])).toEqual({
      kinds: ['approval-decision', 'approval-consumption'],
      problems: [],
    });
    expect(await walk([decided('deny')])).toEqual({ kinds: ['approval-decision'], problems: [] });
  });

  it('refuses a second decision, a second consumption, a consumption after a deny or with another commitment', async () => {
    const codes = async (leaves: Uint8Array[]) => (await walk(leaves)).problems.map(([i, code, m]) => [i, code, m]);
    expect(await codes([decided('approve'), decided('deny')])).toEqual([
      [1, 'APPROVAL_ENTRY_INVALID', `approval entry 1: approval ${ID} was already decided`],
    ]);
    expect(await codes([decided('approve'), consumed(), consumed()])).toEqual([
      [2, 'APPROVAL_ENTRY_INVALID', `approval entry 2: approval ${ID} was already consumed`],
    ]);
    expect(await codes([decided('deny'), consumed()])).toEqual([
      [1, 'APPROVAL_ENTRY_INVALID', `approval entry 1: approval ${ID} is consumed after it was denied`],
    ]);
    expect(await codes([decided('approve'), consumed(C2)])).toEqual([
      [
        1,
        'APPROVAL_ENTRY_INVALID',
        `approval entry 1: approval ${ID} is consumed with another commitment than it was decided with`,
      ],
    ]);
    expect(await codes([decided('approve'), consumed(), decided('approve')])).toHaveLength(1);
  });

  it('a consumption without a decision is a problem on a walk from the start, not on an incremental one', async () => {
    expect((await walk([consumed()])).problems).toEqual([
      [0, 'APPROVAL_ENTRY_INVALID', `approval entry 0: approval ${ID} is consumed without an earlier decision`],
    ]);
    const incremental = createEntryContext([], undefined, false);
    expect((await walk([consumed()], incremental)).problems).toEqual([]);
    // Still at most one consumption within the walk.
    expect((await walk([consumed(), consumed()], createEntryContext([], undefined, false))).problems).toHaveLength(1);
  });

  it('reports a malformed approval leaf with its rule', async () => {
    const leaf = canonicalizeToBytes({
      type: 'toolseal.approval-consumption/v1',
      approval: ID,
      commitment: C1,
      consumedAt: 'later',
    });
    expect(await walk([leaf])).toEqual({
      kinds: ['malformed'],
      problems: [[0, 'APPROVAL_ENTRY_INVALID', 'approval entry 0: consumedAt must be an RFC 3339 time']],
    });
  });

  it('an audit of a registry that decided and consumed approvals passes and counts the leaves', async () => {
    const root = makeTempDir();
    const server = await startRegistryServer({ dataDir: `${root}/data`, keysDir: `${root}/keys`, port: 0 });
    try {
      const { registry } = server;
      const { publisher } = await registry.createPublisher('io.example.actions');
      await registry.publish(REFUNDS_MANIFEST, publisher);
      const host = (await registry.createPrincipal('host', 'host-a')).principal;
      const operator = (await registry.createPrincipal('operator', 'alice')).principal;
      const approve = await registry.requestApproval(host, await buildEnvelope(registry));
      await registry.decideApproval(operator, approve.id, decisionBody('approve', approve.digest));
      await registry.consumeApproval(host, approve.id, await buildEnvelope(registry));
      const other = await buildEnvelope(registry, '{"amount": 1, "currency": "EUR", "recipient": "x"}');
      const deny = await registry.requestApproval(host, other);
      await registry.decideApproval(operator, deny.id, decisionBody('deny', deny.digest));
      const { report } = await runAudit({ registry: server.url });
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.entries).toMatchObject({ 'approval-decision': 2, 'approval-consumption': 1, attestation: 1 });
    } finally {
      await server.close();
    }
  });
});

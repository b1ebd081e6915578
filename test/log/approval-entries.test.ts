// The approval leaves of the transparency log (src/log/entries.ts, issue 13 §3): formatted as JCS, parsed back
// exactly, every member checked, and the salted commitment recomputed here from its definition.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalizeToBytes } from '../../src/pipeline/canonical.ts';
import type { JsonObject } from '../../src/core/json.ts';
import {
  computeApprovalCommitment,
  formatApprovalConsumptionEntry,
  formatApprovalDecisionEntry,
  parseLogEntry,
} from '../../src/log/entries.ts';

const text = new TextDecoder();
const salt = Uint8Array.from({ length: 32 }, (_, i) => i * 7 + 1);
const actionDigest = `sha256:${'ab'.repeat(32)}`;
const commitment = computeApprovalCommitment(salt, actionDigest);
const decision = {
  approval: 'apr_AAAAAAAAAAAAAAAAAAAAAA',
  commitment,
  decision: 'approve' as const,
  operator: 'alice',
  audience: 'host-a',
  manifest: 'io.example.actions/refunds@1.0.0',
  tool: 'refund',
  decidedAt: '2026-12-01T12:00:00.000Z',
};
const consumption = { approval: decision.approval, commitment, consumedAt: '2026-12-01T12:01:00.000Z' };

describe('the approval commitment', () => {
  it('is sha256 over the domain, the 32 salt bytes and the digest text', () => {
    const expected = createHash('sha256')
      .update('toolseal/v1/approval-commitment:')
      .update(salt)
      .update(actionDigest, 'utf8')
      .digest('hex');
    expect(commitment).toBe(`sha256:${expected}`);
    const otherSalt = Uint8Array.from(salt, (byte) => byte ^ 1);
    expect(computeApprovalCommitment(otherSalt, actionDigest)).not.toBe(commitment);
    expect(computeApprovalCommitment(salt, `sha256:${'ac'.repeat(32)}`)).not.toBe(commitment);
  });
});

describe('approval leaves', () => {
  it('are JCS with the type first-class, and parse back to the same entry', () => {
    const decided = formatApprovalDecisionEntry(decision);
    expect(text.decode(decided)).toBe(
      text.decode(canonicalizeToBytes({ type: 'toolseal.approval-decision/v1', ...decision } as JsonObject)),
    );
    expect(parseLogEntry(decided)).toEqual({
      ok: true,
      kind: 'approval-decision',
      entry: { type: 'toolseal.approval-decision/v1', ...decision },
    });
    const consumed = formatApprovalConsumptionEntry(consumption);
    expect(text.decode(consumed)).toBe(
      '{"approval":"apr_AAAAAAAAAAAAAAAAAAAAAA","commitment":"' +
        commitment +
        '","consumedAt":"2026-12-01T12:01:00.000Z","type":"toolseal.approval-consumption/v1"}',
    );
    expect(parseLogEntry(consumed)).toEqual({
      ok: true,
      kind: 'approval-consumption',
      entry: { type: 'toolseal.approval-consumption/v1', ...consumption },
    });
    expect(parseLogEntry(formatApprovalDecisionEntry({ ...decision, decision: 'deny' }))).toMatchObject({ ok: true });
  });

  it('refuse a wrong member of any kind with APPROVAL_ENTRY_INVALID', () => {
    const bad = (entry: Record<string, unknown>) => parseLogEntry(canonicalizeToBytes(entry as JsonObject));
    const decisionType = { type: 'toolseal.approval-decision/v1', ...decision };
    for (const change of [
      { approval: 'apr_short' },
      { commitment: 'sha256:00' },
      { decision: 'maybe' },
      { operator: 'Alice' },
      { audience: '' },
      { manifest: 'refunds' },
      { tool: '' },
      { decidedAt: 'yesterday' },
      { extra: 1 },
      { digest: actionDigest },
    ]) {
      expect(bad({ ...decisionType, ...change }), JSON.stringify(change)).toMatchObject({
        ok: false,
        code: 'APPROVAL_ENTRY_INVALID',
      });
    }
    const { operator: _operator, ...missing } = decisionType;
    expect(bad(missing)).toMatchObject({ ok: false, code: 'APPROVAL_ENTRY_INVALID' });
    const consumptionType = { type: 'toolseal.approval-consumption/v1', ...consumption };
    for (const change of [{ consumedAt: 1 }, { commitment: actionDigest.toUpperCase() }, { salt: 'AAAA' }]) {
      expect(bad({ ...consumptionType, ...change })).toMatchObject({ ok: false, code: 'APPROVAL_ENTRY_INVALID' });
    }
    // Not JCS (members out of order) is malformed, as for every kind.
    const unordered = new TextEncoder().encode(JSON.stringify(consumptionType));
    expect(parseLogEntry(unordered)).toMatchObject({ ok: false, code: 'ENTRY_MALFORMED' });
  });
});

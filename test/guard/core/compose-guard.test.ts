// composeGuard (issue 23 §4, §8): the one way every transport builds its guard. A money rule gates every tool that
// declares money capabilities; one without money.amountArgument needs approval for every call (fail closed), and the
// start lines say so.

import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../../src/core/errors.ts';
import { type ApprovalsPort, composeGuard, type VerifiedForGuard } from '../../../src/guard/index.ts';
import { runPipeline } from '../../../src/pipeline/index.ts';
import { refundManifest } from '../../fixtures/refund-tools.ts';
import { refundArguments, toolsCallText } from '../approval-helpers.ts';

const ORIGIN = 'https://registry.example';

/** The refund manifest, its money declaration without amountArgument when `unmeasured`, signed locally. */
function verifiedRefund(unmeasured: boolean): VerifiedForGuard {
  const manifest = refundManifest() as { tools: { capabilities: { money?: Record<string, unknown> } }[] };
  if (unmeasured) {
    const money = manifest.tools[0]!.capabilities.money!;
    delete money['amountArgument'];
    delete money['currencyArgument'];
  }
  const signed = runPipeline(Buffer.from(JSON.stringify(manifest)));
  return {
    bytes: signed.canonicalBytes,
    digest: signed.digest,
    kid: 'test-kid',
    logIndex: 0,
    statement: { predicate: { registry: ORIGIN } },
  };
}

/** A registry that knows the host and refuses to be asked anything else (the calls below must not need it). */
const hostOnly: ApprovalsPort = {
  whoami: async () => ({ kind: 'host', name: 'laptop' }),
  request: async () => {
    throw new ToolsealError('APPROVAL_DENIED', 'asked');
  },
  consume: async () => {
    throw new ToolsealError('APPROVAL_DENIED', 'asked');
  },
  get: async () => {
    throw new ToolsealError('NOT_FOUND', 'asked');
  },
};

const moneyPolicy = { version: 1 as const, requireApproval: [{ money: { atLeastMinor: 10_000 } }] };

describe('composeGuard', () => {
  it('the verified line; a fresh ToolGuard per session, one gate for all', async () => {
    const composed = await composeGuard(verifiedRefund(false), { strict: true, locked: true });
    expect(composed.startLines).toEqual([
      expect.objectContaining({ event: 'verified', tools: ['refund', 'lookup_charge'], strict: true, locked: true }),
    ]);
    const [a, b] = [composed.createSession(), composed.createSession()];
    expect(a.guard).not.toBe(b.guard);
    expect(a.gate).toBe(b.gate);
    expect(a.guard.strict).toBe(true);
  });

  it('a measured money tool under the rule: a small amount runs without approval, no warning at start', async () => {
    const composed = await composeGuard(verifiedRefund(false), { policy: moneyPolicy, approvals: hostOnly });
    expect(composed.startLines.map((line) => line['event'])).toEqual(['verified']);
    const outcome = await composed.gate.decideCall(
      'refund',
      1,
      Buffer.from(toolsCallText(1, 'refund', refundArguments(5))),
    );
    expect(outcome.forward).toBe(true);
  });

  it('a money tool without amountArgument: every call needs approval (fail closed), and guard says so at start', async () => {
    const composed = await composeGuard(verifiedRefund(true), { policy: moneyPolicy, approvals: hostOnly });
    expect(composed.startLines[1]).toMatchObject({ event: 'money-unmeasured', tools: ['refund'] });
    const outcome = await composed.gate.decideCall(
      'refund',
      1,
      Buffer.from(toolsCallText(1, 'refund', refundArguments(5))),
    );
    // Not forwarded: guard asked the registry for an approval (which this registry refuses).
    expect(outcome.forward).toBe(false);
    expect(outcome.events.map((event) => event.code)).toEqual(['APPROVAL_DENIED']);
    const other = await composed.gate.decideCall(
      'lookup_charge',
      2,
      Buffer.from(toolsCallText(2, 'lookup_charge', '{"charge":"ch_1"}')),
    );
    expect(other.forward).toBe(true);
  });
});

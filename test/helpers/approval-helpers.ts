// Test helpers for the approval service (issue 13 §3): a registry with the refunds manifest of test/vectors/actions/
// published, an operator and a host, a clock the test moves, and travelling envelopes built from arguments as text.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { selectSignedTool, type SignedTool } from '../../src/dispatch/action-digest.ts';
import type { Registry } from '../../src/registry/index.ts';
import type { PrincipalRecord } from '../../src/registry/principals.ts';
import { createTestEnv, repoRoot, type TestEnv, type TestEnvOptions, utf8 } from './registry-helpers.ts';

export const REFUNDS_MANIFEST: Uint8Array = readFileSync(join(repoRoot, 'test/vectors/actions/refunds-manifest.json'));
export const REFUNDS_NAME = 'io.example.actions/refunds';
export const REFUNDS_REF = `${REFUNDS_NAME}@1.0.0`;
/** Arguments of a 4200 USD minor-unit refund, as a call sends them. */
export const REFUND_4200 =
  '{"amount": 4200, "currency": "USD", "recipient": "cust_A", "note": "late delivery", "traceId": "t-1", "tags": ["vip", "late"], "steps": ["credit", "notify"]}';

export interface ApprovalEnv extends TestEnv {
  operator: PrincipalRecord;
  operatorToken: string;
  host: PrincipalRecord;
  hostToken: string;
  signed: SignedTool;
  /** Move the registry's clock forward. */
  advance(seconds: number): void;
  /** A travelling envelope for `argumentsText` (exact bytes), with members overridden or added by `change`. */
  envelope(argumentsText?: string, change?: Record<string, unknown>, tool?: string): Uint8Array;
}

/** A registry (its clock frozen, moved by `advance`) with the refunds manifest, operator `alice` and host `host-a`. */
export async function createApprovalEnv(options: TestEnvOptions = {}): Promise<ApprovalEnv> {
  // Time moves only when the test says, so expiry boundaries are exact.
  const start = Date.now();
  let offsetMs = 0;
  const t = await createTestEnv({
    namespace: 'io.example.actions',
    clock: () => new Date(start + offsetMs),
    ...options,
  });
  await t.registry.publish(REFUNDS_MANIFEST, t.publisher);
  const operator = await t.registry.createPrincipal('operator', 'alice');
  const host = await t.registry.createPrincipal('host', 'host-a');
  const stored = (await t.registry.getManifest(REFUNDS_NAME, '1.0.0')).bytes;
  const signed = selectSignedTool(stored, 'refund', t.registry.origin);
  const envelope = (argumentsText = REFUND_4200, change: Record<string, unknown> = {}, tool = 'refund'): Uint8Array =>
    envelopeOf(stored, t.registry.origin, argumentsText, change, tool);
  return {
    ...t,
    operator: operator.principal,
    operatorToken: operator.token,
    host: host.principal,
    hostToken: host.token,
    signed,
    advance: (seconds) => {
      offsetMs += seconds * 1000;
    },
    envelope,
  };
}

/**
 * A travelling envelope for the refunds manifest on `registry`: `argumentsText` spliced in as exact bytes, the other
 * members those of the signed tool (audience host-a) unless `change` overrides or adds them.
 */
export async function buildEnvelope(
  registry: Registry,
  argumentsText = REFUND_4200,
  change: Record<string, unknown> = {},
  tool = 'refund',
): Promise<Uint8Array> {
  const stored = (await registry.getManifest(REFUNDS_NAME, '1.0.0')).bytes;
  return envelopeOf(stored, registry.origin, argumentsText, change, tool);
}

/** The envelope of buildEnvelope, from the stored manifest bytes and the registry's origin. */
function envelopeOf(
  stored: Uint8Array,
  origin: string,
  argumentsText: string,
  change: Record<string, unknown>,
  tool: string,
): Uint8Array {
  const signed = selectSignedTool(stored, tool, origin);
  const head = JSON.stringify({
    type: 'toolseal.action/v1',
    registry: origin,
    manifest: REFUNDS_REF,
    manifestDigest: signed.manifestDigest,
    tool,
    toolDigest: signed.toolDigest,
    audience: 'host-a',
    ...change,
  });
  return utf8(`${head.slice(0, -1)},"arguments":${argumentsText}}`);
}

/** `{decision, digest, reason?}` as bytes. */
export function decisionBody(decision: string, digest: string, reason?: string): Uint8Array {
  return utf8(JSON.stringify(reason === undefined ? { decision, digest } : { decision, digest, reason }));
}

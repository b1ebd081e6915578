// Shared by the approval tests and the approvals bench: a real registry (HTTP on 127.0.0.1, in-memory store) with the
// refund fixture published, a host and an operator, a clock the test can move, and tools/call texts.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApprovalsClient } from '../../src/client/approvals.ts';
import { CallGate } from '../../src/guard/core/call-gate.ts';
import type { GuardPolicy } from '../../src/guard/core/policy.ts';
import type { Registry } from '../../src/registry/index.ts';
import { startRegistryServer } from '../../src/server/index.ts';
import {
  REFUND_MANIFEST_NAME,
  REFUND_NAMESPACE,
  REFUND_VERSION,
  refundManifestBytes,
} from '../fixtures/refund-tools.ts';

export const HOST_NAME = 'host-a';
export const OPERATOR_NAME = 'alice';

export interface ApprovalRegistry {
  url: string;
  registry: Registry;
  /** The origin the registry records in its attestations (the envelope's `registry`). */
  origin: string;
  /** The canonical signed bytes of the refund fixture manifest. */
  signedBytes: Uint8Array;
  hostToken: string;
  operatorToken: string;
  host: ApprovalsClient;
  operator: ApprovalsClient;
  /** Move the registry's clock forward. */
  advance(ms: number): void;
  close(): Promise<void>;
}

/**
 * A registry on a random port with the refund manifest published, host `host-a` and operator `alice`; in memory unless
 * `dataDir` names a data folder (the bench's durable store).
 */
export async function startApprovalRegistry(
  options: { ttlSeconds?: number; dataDir?: string } = {},
): Promise<ApprovalRegistry> {
  const keysDir = await mkdtemp(join(tmpdir(), 'toolseal-approvals-keys-'));
  let offsetMs = 0;
  const server = await startRegistryServer({
    dataDir: options.dataDir ?? ':memory:',
    keysDir,
    port: 0,
    clock: () => new Date(Date.now() + offsetMs),
    ...(options.ttlSeconds === undefined ? {} : { approvalTtlSeconds: options.ttlSeconds }),
  });
  const { registry } = server;
  const { publisher } = await registry.createPublisher(REFUND_NAMESPACE);
  await registry.publish(refundManifestBytes(), publisher);
  const hostToken = (await registry.createPrincipal('host', HOST_NAME)).token;
  const operatorToken = (await registry.createPrincipal('operator', OPERATOR_NAME)).token;
  return {
    url: server.url,
    registry,
    origin: registry.origin,
    signedBytes: (await registry.getManifest(REFUND_MANIFEST_NAME, REFUND_VERSION)).bytes,
    hostToken,
    operatorToken,
    host: new ApprovalsClient({ registry: server.url, token: hostToken }),
    operator: new ApprovalsClient({ registry: server.url, token: operatorToken }),
    advance: (ms) => {
      offsetMs += ms;
    },
    close: async () => {
      await server.close();
      await rm(keysDir, { recursive: true, force: true });
    },
  };
}

/** A gate over the real registry's approvals API, as the host. */
export function openGate(reg: ApprovalRegistry, policy?: GuardPolicy): Promise<CallGate> {
  return CallGate.open({
    signedBytes: reg.signedBytes,
    registry: reg.origin,
    ...(policy === undefined ? {} : { policy, approvals: reg.host }),
  });
}

/** The JSON text of a tools/call request (`argumentsText` is spliced in as written). */
export function toolsCallText(
  id: number | string,
  name: string,
  argumentsText: string,
  meta?: Record<string, unknown>,
): string {
  const metaText = meta === undefined ? '' : `,"_meta":${JSON.stringify(meta)}`;
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":${JSON.stringify(name)},"arguments":${argumentsText}${metaText}}}`;
}

/** A refund of `amount` (its literal as written) USD minor units. */
export function refundArguments(amount: string | number, extra = ''): string {
  return `{"charge":"ch_1","amount_minor":${amount},"currency":"USD"${extra}}`;
}

export const MONEY_POLICY: GuardPolicy = { version: 1, requireApproval: [{ money: { atLeastMinor: 1000 } }] };

/**
 * The refusal in a tools/call answer: guard answers a call it does not run (arguments, money, approvals) with a tool
 * result with isError, a text and `_meta["io.toolseal/refusal"]` (MCP 2025-11-25 "Tools" §Error Handling); throws
 * for anything else (a JSON-RPC error, a result that is no refusal).
 */
export function refusalOf(response: unknown): { code: string; text: string; meta: Record<string, unknown> } {
  const message = response as { error?: unknown; result?: Record<string, unknown> };
  if (message.error !== undefined || message.result?.['isError'] !== true)
    throw new Error(`not a refusal result: ${JSON.stringify(response)}`);
  const meta = (message.result['_meta'] as Record<string, Record<string, unknown>> | undefined)?.[
    'io.toolseal/refusal'
  ];
  const content = message.result['content'] as { type: string; text: string }[];
  if (meta === undefined || content[0]?.type !== 'text') throw new Error(`no refusal: ${JSON.stringify(response)}`);
  return { code: String(meta['code']), text: content[0].text, meta };
}

// guardClient with a policy and a host token (issue 13 §4): inside a host process, a call that needs approval comes
// back as a tool result naming the approval, the approved retry reaches the server once, and refused arguments throw
// a ToolsealError with their code before anything is sent. A real registry; an in-process SDK server.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type ApprovalEvent, guardClient } from '../../../src/guard/index.ts';
import { APPROVAL_META_KEY } from '../../../src/protocol/wire.ts';
import { REFUND_REF, refundPresentedTools } from '../../fixtures/refund-tools.ts';
import { type ApprovalRegistry, MONEY_POLICY, refusalOf, startApprovalRegistry } from '../approval-helpers.ts';

let reg: ApprovalRegistry;
beforeAll(async () => {
  reg = await startApprovalRegistry();
});
afterAll(async () => {
  await reg?.close();
});

async function startRefundServer(received: string[]): Promise<InMemoryTransport> {
  const server = new Server({ name: 'refunds', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: refundPresentedTools }) as never);
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    received.push(JSON.stringify(request.params.arguments));
    return { content: [{ type: 'text', text: 'refunded' }] };
  });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  return clientTransport;
}

describe('guardClient with a policy', () => {
  it('needs approval, then forwards the approved call once; refused arguments throw with their code', async () => {
    const received: string[] = [];
    const events: ApprovalEvent[] = [];
    const guarded = await guardClient(new Client({ name: 'host', version: '1.0.0' }), {
      manifest: REFUND_REF,
      registry: reg.url,
      policy: MONEY_POLICY,
      hostToken: reg.hostToken,
      onEvent: (event) => events.push(event),
    });
    await guarded.connect(await startRefundServer(received));
    try {
      const args = { charge: 'ch_1', amount_minor: 4200, currency: 'USD' };
      const first = await guarded.callTool({ name: 'refund', arguments: args });
      expect(first.isError).toBe(true);
      const meta = (first._meta as Record<string, Record<string, string>>)[APPROVAL_META_KEY]!;
      expect(meta).toMatchObject({ code: 'APPROVAL_REQUIRED', status: 'pending' });
      expect(received).toEqual([]);
      await reg.operator.decide(meta['id']!, { decision: 'approve', digest: meta['digest']! });
      const second = await guarded.callTool({ name: 'refund', arguments: args });
      expect(second.content).toEqual([{ type: 'text', text: 'refunded' }]);
      expect(received).toEqual([JSON.stringify(args)]);

      // Refused arguments come back as the tool result the model reads (isError, the code in _meta).
      const refused = await guarded.callTool({ name: 'refund', arguments: { ...args, amount_minor: 60000 } });
      expect(refusalOf({ result: refused }).meta).toMatchObject({
        code: 'MONEY_CEILING_EXCEEDED',
        pointer: '/amount_minor',
      });
      expect(received).toHaveLength(1);
      expect(events.map((event) => event.event)).toEqual([
        'approval-requested',
        'approval-consumed',
        'arguments-refused',
      ]);
    } finally {
      await guarded.close();
    }
  });

  it('a policy without a host token is refused before anything is verified or sent', async () => {
    await expect(
      guardClient(new Client({ name: 'host', version: '1.0.0' }), {
        manifest: REFUND_REF,
        registry: reg.url,
        policy: MONEY_POLICY,
      }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});

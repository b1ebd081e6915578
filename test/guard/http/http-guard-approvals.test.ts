// The HTTP guard enforces the same call gate as the stdio guard (issue 14: "the remote and in-process guards enforce
// the same policy and approvals"; issue 13 §4): a real SDK server on StreamableHTTPServerTransport, a real SDK Client
// on StreamableHTTPClientTransport, a real registry. A call needing approval is answered by the guard; the approved
// retry reaches the server once; refused arguments never reach it.

import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { type ApprovalEvent, GuardSession, ToolGuard } from '../../../src/guard/index.ts';
import { startHttpGuard, type HttpGuard } from '../../../src/guard/http/http-guard.ts';
import { APPROVAL_META_KEY } from '../../../src/protocol/wire.ts';
import { refundPresentedTools } from '../../fixtures/refund-tools.ts';
import {
  type ApprovalRegistry,
  MONEY_POLICY,
  openGate,
  refusalOf,
  startApprovalRegistry,
} from '../approval-helpers.ts';

let reg: ApprovalRegistry;
let upstream: HttpServer;
let upstreamUrl: string;
let guard: HttpGuard;
const received: string[] = [];
const events: ApprovalEvent[] = [];

/** An SDK server presenting the refund tools over Streamable HTTP (stateful sessions, SSE answers). */
function startRefundHttpServer(): HttpServer {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return createServer((req, res) => {
    const sessionId = req.headers['mcp-session-id'];
    const run = async (): Promise<void> => {
      let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
      if (transport === undefined) {
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void transports.set(id, created),
        });
        const server = new Server({ name: 'refunds', version: '1.0.0' }, { capabilities: { tools: {} } });
        server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: refundPresentedTools }) as never);
        server.setRequestHandler(CallToolRequestSchema, async (request) => {
          received.push(JSON.stringify(request.params.arguments));
          return { content: [{ type: 'text', text: 'refunded' }] };
        });
        await server.connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    };
    run().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
}

beforeAll(async () => {
  reg = await startApprovalRegistry();
  upstream = startRefundHttpServer();
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
  const gate = await openGate(reg, MONEY_POLICY);
  guard = await startHttpGuard({
    createPolicy: () => new GuardSession(new ToolGuard(reg.signedBytes, { requireListed: true }), gate),
    upstream: upstreamUrl,
    onFinding: () => undefined,
    onEvent: (event) => events.push(event),
  });
});

afterAll(async () => {
  await guard?.close();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
  await reg?.close();
});

describe('the HTTP guard with a policy', () => {
  it('answers a call needing approval itself, forwards the approved retry once, refuses bad arguments', async () => {
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(guard.url)));
    try {
      const args = { charge: 'ch_1', amount_minor: 4200, currency: 'USD' };
      const first = await client.callTool({ name: 'refund', arguments: args });
      expect(first.isError).toBe(true);
      const meta = (first._meta as Record<string, Record<string, string>>)[APPROVAL_META_KEY]!;
      expect(meta).toMatchObject({ code: 'APPROVAL_REQUIRED', status: 'pending' });
      expect(received).toEqual([]);

      await reg.operator.decide(meta['id']!, { decision: 'approve', digest: meta['digest']! });
      const second = await client.callTool({ name: 'refund', arguments: args });
      expect(second.content).toEqual([{ type: 'text', text: 'refunded' }]);
      expect(received).toEqual([JSON.stringify(args)]);
      expect((await reg.host.get(meta['id']!)).status).toBe('consumed');

      // The same call again needs a new approval: an approval lets exactly one call through.
      const third = await client.callTool({ name: 'refund', arguments: args });
      const again = (third._meta as Record<string, Record<string, string>>)[APPROVAL_META_KEY]!;
      expect(third.isError).toBe(true);
      expect(again['id']).not.toBe(meta['id']);
      expect(received).toHaveLength(1);

      // A refused argument is a tool result with isError the model reads (MCP 2025-11-25), not a protocol error.
      const refused = await client.callTool({ name: 'refund', arguments: { ...args, amount_minor: 60000 } });
      expect(refusalOf({ result: refused }).meta).toMatchObject({
        code: 'MONEY_CEILING_EXCEEDED',
        pointer: '/amount_minor',
      });
      expect(received).toHaveLength(1);
      expect(events.map((event) => event.event)).toEqual([
        'approval-requested',
        'approval-consumed',
        'approval-requested',
        'arguments-refused',
      ]);
    } finally {
      await client.close();
    }
  });

  it('pending and denied approvals are tool results (isError, the code in _meta); nothing reaches the server', async () => {
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(guard.url)));
    try {
      const before = received.length;
      const args = { charge: 'ch_denied', amount_minor: 7700, currency: 'USD' };
      const first = refusalOf({ result: await client.callTool({ name: 'refund', arguments: args }) });
      expect(first.code).toBe('APPROVAL_REQUIRED');
      expect(first.text).toContain('/ui/approvals/');
      const pending = refusalOf({ result: await client.callTool({ name: 'refund', arguments: args }) });
      expect(pending).toMatchObject({ code: 'APPROVAL_PENDING', meta: { id: first.meta['id'] } });
      await reg.operator.decide(String(first.meta['id']), { decision: 'deny', digest: String(first.meta['digest']) });
      const denied = refusalOf({ result: await client.callTool({ name: 'refund', arguments: args }) });
      expect(denied.code).toBe('APPROVAL_DENIED');
      expect(denied.text).toContain('do not retry');
      expect(received.length).toBe(before);
    } finally {
      await client.close();
    }
  });
});

// The message-level ToolGuard, message by message: pass-through, the tools/list rewrite, refused calls, batches, strict.

import { describe, expect, it } from 'vitest';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ToolsealError } from '../../src/core/errors.ts';
import {
  GUARD_CALL_REFUSED_CODE,
  GUARD_LIST_REFUSED_CODE,
  GUARD_PARSE_ERROR_CODE,
  GUARD_SESSION_REFUSED_CODE,
  ToolGuard,
} from '../../src/guard/index.ts';
import { canonicalizeToText, type JsonObject } from '../../src/pipeline/index.ts';
import { RUGPULL_DESCRIPTION, extraTool, fixtureTools } from '../fixtures/mcp-tools.ts';
import { localSigned } from './guard-helpers.ts';

describe('ToolGuard (message level)', () => {
  const request = (id: string | number, method: string, params?: unknown): Record<string, unknown> => ({
    jsonrpc: '2.0',
    id,
    method,
    ...(params === undefined ? {} : { params }),
  });
  const listResponse = (
    id: string | number,
    tools: unknown[],
    extra: Record<string, unknown> = {},
  ): Record<string, unknown> => ({ jsonrpc: '2.0', id, result: { ...extra, tools } });
  const faithful = (): unknown[] => JSON.parse(JSON.stringify(fixtureTools)) as unknown[];

  it('replaces the presented tools with the exact signed bytes (capabilities dropped), keeping nextCursor and order', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    expect(guard.fromClient(request(1, 'tools/list')).forward).toBe('original');
    const decision = guard.fromServer(listResponse(1, faithful().reverse(), { nextCursor: 'c2' }));
    expect(decision.findings).toEqual([]);
    expect(decision.forward).not.toBe('original');
    const text = (decision.forward as { text: string }).text;
    const signedText = Buffer.from(localSigned.canonicalBytes).toString('utf8');
    const tools = (JSON.parse(text) as { result: { tools: JsonObject[]; nextCursor: string } }).result;
    expect(tools.nextCursor).toBe('c2');
    expect(tools.tools.map((tool) => tool['name'])).toEqual(['ship_parcel', 'delete_note', 'add', 'echo']);
    for (const tool of tools.tools) {
      expect(tool).not.toHaveProperty('capabilities');
      const canonical = canonicalizeToText(tool);
      expect(text).toContain(canonical);
      // A tool declaring no capabilities is a verbatim slice of the signed bytes.
      if (tool['name'] === 'add' || tool['name'] === 'ship_parcel') expect(signedText).toContain(canonical);
    }
  });

  it('passes every other message through untouched', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    for (const message of [
      request(1, 'initialize', { protocolVersion: '2025-06-18' }),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      request(2, 'resources/list'),
    ]) {
      expect(guard.fromClient(message)).toEqual({
        forward: 'original',
        reply: undefined,
        findings: [],
        terminate: false,
      });
    }
    expect(guard.fromServer({ jsonrpc: '2.0', id: 2, result: { resources: [] } }).forward).toBe('original');
    expect(guard.fromServer({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }).forward).toBe('original');
    expect(guard.fromServer(request(7, 'sampling/createMessage', {})).forward).toBe('original');
  });

  it('a tools/list answer that also carries a `method` member is still checked (a lenient client would take it)', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    guard.fromClient(request(1, 'tools/list'));
    const decision = guard.fromServer({ ...listResponse(1, [extraTool]), method: 'notifications/message' });
    expect(decision.forward).not.toBe('original');
    expect(decision.findings).toMatchObject([
      { event: 'tool-withheld', tool: 'export_all_notes', reason: 'unknown-tool', pointer: '/name' },
    ]);
  });

  it('tracks ids by type: a response to request "1" is not the answer to tools/list 1', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    guard.fromClient(request(1, 'tools/list'));
    guard.fromClient(request('1', 'prompts/list'));
    expect(guard.fromServer(listResponse('1', [extraTool])).forward).toBe('original');
    const decision = guard.fromServer(listResponse(1, [extraTool]));
    expect(decision.findings).toMatchObject([
      { event: 'tool-withheld', tool: 'export_all_notes', reason: 'unknown-tool', pointer: '/name' },
    ]);
    // A second response with the same id is no longer a tools/list answer.
    expect(guard.fromServer(listResponse(1, [extraTool])).forward).toBe('original');
  });

  it('withholds a differing tool for the rest of the session and refuses calls to it', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    const tools = faithful() as Record<string, unknown>[];
    tools[2] = { ...tools[2], description: RUGPULL_DESCRIPTION };
    guard.fromClient(request(1, 'tools/list'));
    const decision = guard.fromServer(listResponse(1, tools));
    expect(decision.findings).toMatchObject([
      { event: 'tool-withheld', tool: 'delete_note', reason: 'differs', pointer: '/description', index: 2 },
    ]);
    expect(guard.withheldTools).toEqual(['delete_note']);
    const refused = guard.fromClient(request(2, 'tools/call', { name: 'delete_note', arguments: { id: 'n-1' } }));
    expect(refused.forward).toBeUndefined();
    expect(refused.reply?.message).toMatchObject({
      id: 2,
      error: { code: GUARD_CALL_REFUSED_CODE, data: { reason: 'withheld', tool: 'delete_note' } },
    });
    // Presented faithfully again later: still withheld.
    guard.fromClient(request(3, 'tools/list'));
    const again = guard.fromServer(listResponse(3, faithful()));
    expect(
      (
        JSON.parse((again.forward as { text: string }).text) as { result: { tools: { name: string }[] } }
      ).result.tools.map((t) => t.name),
    ).toEqual(['echo', 'add', 'ship_parcel']);
    expect(again.findings).toMatchObject([{ event: 'tool-withheld', tool: 'delete_note', reason: 'withheld' }]);
  });

  it('refuses tools/call for unknown tools, nameless calls, and drops such a call sent as a notification', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    expect(guard.fromClient(request(1, 'tools/call', { name: 'echo', arguments: { text: 'hi' } })).forward).toBe(
      'original',
    );
    expect(guard.fromClient(request(2, 'tools/call', { name: 'export_all_notes' })).reply?.message).toMatchObject({
      id: 2,
      error: { code: GUARD_CALL_REFUSED_CODE, data: { reason: 'unknown-tool' } },
    });
    expect(guard.fromClient(request(3, 'tools/call', {})).reply?.message).toMatchObject({
      id: 3,
      error: { data: { reason: 'malformed' } },
    });
    // Names match exactly: the NFD spelling of a signed name is another name.
    expect(guard.fromClient(request(4, 'tools/call', { name: 'e\u0301cho' })).reply).toBeDefined();
    const notification = guard.fromClient({
      jsonrpc: '2.0',
      method: 'tools/call',
      params: { name: 'export_all_notes' },
    });
    expect(notification).toMatchObject({ forward: undefined, reply: undefined, findings: [{ event: 'call-refused' }] });
  });

  it('handles batches: refused members answered as a batch, the rest forwarded; tools/list members rewritten', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    const fromClient = guard.fromClient([
      request(1, 'tools/list'),
      request(2, 'tools/call', { name: 'export_all_notes' }),
      request(3, 'ping'),
    ]);
    expect(fromClient.forward).not.toBe('original');
    expect((fromClient.forward as { message: unknown[] }).message.map((m) => (m as { id: number }).id)).toEqual([1, 3]);
    expect((fromClient.reply as { message: unknown[] }).message).toMatchObject([
      { id: 2, error: { code: GUARD_CALL_REFUSED_CODE } },
    ]);
    expect(JSON.parse((fromClient.reply as { text: string }).text)).toHaveLength(1);
    const unchanged = guard.fromClient([
      request(4, 'ping'),
      request(5, 'tools/call', { name: 'echo', arguments: { text: 'x' } }),
    ]);
    expect(unchanged.forward).toBe('original');
    const fromServer = guard.fromServer([
      { jsonrpc: '2.0', id: 3, result: {} },
      listResponse(1, [...faithful(), extraTool]),
    ]);
    const batch = JSON.parse((fromServer.forward as { text: string }).text) as [
      unknown,
      { result: { tools: unknown[] } },
    ];
    expect(batch[0]).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    expect(batch[1].result.tools).toHaveLength(4);
    expect(fromServer.findings).toMatchObject([{ tool: 'export_all_notes', reason: 'unknown-tool' }]);
  });

  it('strict: the first finding refuses the session and every later message is dropped', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes, { strict: true });
    guard.fromClient(request(1, 'tools/list'));
    const ok = guard.fromServer(listResponse(1, faithful()));
    expect(ok.terminate).toBe(false);
    guard.fromClient(request(2, 'tools/list'));
    const tools = faithful() as Record<string, unknown>[];
    tools[0] = { ...tools[0], _meta: { injected: true } };
    const refused = guard.fromServer(listResponse(2, tools));
    expect(refused.terminate).toBe(true);
    expect(refused.forward).toMatchObject({
      message: {
        id: 2,
        error: { code: GUARD_SESSION_REFUSED_CODE, data: { findings: [{ tool: 'echo', pointer: '/_meta' }] } },
      },
    });
    expect(refused.findings).toMatchObject([{ event: 'session-refused', tool: 'echo', pointer: '/_meta' }]);
    expect(guard.isRefused).toBe(true);
    expect(guard.fromClient(request(3, 'ping'))).toMatchObject({ forward: undefined, terminate: true });
  });

  it('answers a tools/list result that is not a list of tools with an error, and passes error responses', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    guard.fromClient(request(1, 'tools/list'));
    expect(guard.fromServer({ jsonrpc: '2.0', id: 1, result: { tools: { echo: {} } } }).forward).toMatchObject({
      message: { id: 1, error: { code: GUARD_LIST_REFUSED_CODE } },
    });
    guard.fromClient(request(2, 'tools/list'));
    expect(guard.fromServer({ jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'boom' } }).forward).toBe(
      'original',
    );
  });

  it('a server that presents a tool with refs or in another key order passes; a changed schema keyword does not', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    const ship = JSON.parse(JSON.stringify(fixtureTools[3])) as {
      inputSchema: Record<string, unknown> & { properties: Record<string, unknown> };
    };
    const withRefs = {
      inputSchema: {
        required: ship.inputSchema['required'],
        $defs: { a: ship.inputSchema.properties['from'] },
        properties: {
          weightGrams: ship.inputSchema.properties['weightGrams'],
          to: { $ref: '#/$defs/a' },
          from: { $ref: '#/$defs/a' },
        },
        type: 'object',
      },
      description: fixtureTools[3].description,
      name: 'ship_parcel',
    };
    guard.fromClient(request(1, 'tools/list'));
    expect(guard.fromServer(listResponse(1, [withRefs])).findings).toEqual([]);
    const looser = JSON.parse(JSON.stringify(fixtureTools[0])) as { inputSchema: Record<string, unknown> };
    looser.inputSchema['additionalProperties'] = true;
    guard.fromClient(request(2, 'tools/list'));
    expect(guard.fromServer(listResponse(2, [looser])).findings).toMatchObject([
      { tool: 'echo', pointer: '/inputSchema/additionalProperties' },
    ]);
  });

  it('uses the MCP / JSON-RPC codes of the SDK', () => {
    expect(GUARD_CALL_REFUSED_CODE).toBe(ErrorCode.InvalidParams);
    expect(GUARD_PARSE_ERROR_CODE).toBe(ErrorCode.ParseError);
  });

  it('refuses signed bytes that are not canonical or not the expected digest', () => {
    const pretty = Buffer.from(
      JSON.stringify(JSON.parse(Buffer.from(localSigned.canonicalBytes).toString('utf8')), null, 2),
    );
    expect(() => new ToolGuard(pretty)).toThrow(ToolsealError);
    expect(() => new ToolGuard(localSigned.canonicalBytes, { expectedDigest: `sha256:${'0'.repeat(64)}` })).toThrow(
      /hash to/,
    );
    expect(new ToolGuard(localSigned.canonicalBytes, { expectedDigest: localSigned.digest }).toolNames).toEqual([
      'echo',
      'add',
      'delete_note',
      'ship_parcel',
    ]);
  });
});

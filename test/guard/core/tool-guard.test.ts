// The message-level ToolGuard, message by message: pass-through, the tools/list rewrite, refused calls, batches, strict.

import { describe, expect, it } from 'vitest';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ToolsealError } from '../../../src/core/errors.ts';
import {
  GUARD_CALL_REFUSED_CODE,
  GUARD_LIST_REFUSED_CODE,
  GUARD_PARSE_ERROR_CODE,
  GUARD_SESSION_REFUSED_CODE,
  ToolGuard,
  type GuardFinding,
} from '../../../src/guard/index.ts';
import { canonicalizeToText, type JsonObject } from '../../../src/pipeline/index.ts';
import { NFD_TOOL_NAME, RUGPULL_DESCRIPTION, extraTool, fixtureTools, nfdTool } from '../../fixtures/mcp-tools.ts';
import { NFC_TOOL_NAME, localSigned, localSignedNfd } from '../guard-helpers.ts';

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
  /** The findings without the `info` ones (a list of fewer tools than signed is also reported as a subset). */
  const withoutInfo = (findings: GuardFinding[]): GuardFinding[] => findings.filter((f) => f.level !== 'info');

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
    expect(withoutInfo(decision.findings)).toMatchObject([
      { event: 'tool-withheld', tool: 'export_all_notes', reason: 'unknown-tool', pointer: '/name' },
    ]);
  });

  it('tracks ids by type: a response to request "1" is not the answer to tools/list 1', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    guard.fromClient(request(1, 'tools/list'));
    guard.fromClient(request('1', 'prompts/list'));
    expect(guard.fromServer(listResponse('1', [extraTool])).forward).toBe('original');
    const decision = guard.fromServer(listResponse(1, [extraTool]));
    expect(withoutInfo(decision.findings)).toMatchObject([
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
    expect(withoutInfo(guard.fromServer(listResponse(1, [withRefs])).findings)).toEqual([]);
    const looser = JSON.parse(JSON.stringify(fixtureTools[0])) as { inputSchema: Record<string, unknown> };
    looser.inputSchema['additionalProperties'] = true;
    guard.fromClient(request(2, 'tools/list'));
    expect(withoutInfo(guard.fromServer(listResponse(2, [looser])).findings)).toMatchObject([
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

  describe('a tool whose server-side name is not NFC', () => {
    const presented = (): unknown[] => [...faithful(), JSON.parse(JSON.stringify(nfdTool)) as unknown];
    /** A guard that has seen the server list the NFD-named tool. */
    const listedGuard = (): ToolGuard => {
      const guard = new ToolGuard(localSignedNfd.canonicalBytes);
      guard.fromClient(request(1, 'tools/list'));
      const listed = guard.fromServer(listResponse(1, presented()));
      expect(listed.findings).toEqual([]);
      const names = (JSON.parse((listed.forward as { text: string }).text) as { result: { tools: JsonObject[] } })
        .result.tools;
      expect(names.map((tool) => tool['name'])).toContain(NFC_TOOL_NAME);
      return guard;
    };
    const call = (id: number, name: string): Record<string, unknown> =>
      request(id, 'tools/call', { name, arguments: { size: 'small' } });

    it('signs the NFC name, and forwards a tools/call under the spelling of the server (JCS without the text)', () => {
      expect(NFD_TOOL_NAME).not.toBe(NFC_TOOL_NAME);
      expect(NFD_TOOL_NAME.normalize('NFC')).toBe(NFC_TOOL_NAME);
      const guard = listedGuard();
      const decision = guard.fromClient(call(2, NFC_TOOL_NAME));
      expect(decision.findings).toEqual([]);
      expect(decision.reply).toBeUndefined();
      const forward = decision.forward as { text: string; message: unknown };
      expect(forward.message).toEqual(call(2, NFD_TOOL_NAME));
      expect(forward.text).toBe(canonicalizeToText(call(2, NFD_TOOL_NAME) as JsonObject));
      // Other tools, whose names the server spells as signed, pass untouched.
      expect(guard.fromClient(request(3, 'tools/call', { name: 'echo', arguments: { text: 'x' } })).forward).toBe(
        'original',
      );
    });

    it('keeps every other byte of the message when given its text (spacing, escapes, big numbers, duplicate keys)', () => {
      const guard = listedGuard();
      const text = ` { "id" : 2,"jsonrpc":"2.0", "method":"tools/call","params":{"name":"x","arguments":{"n":12345678901234567890,"s":"\\u00e9\\n"},"na\\u006de" : "caf\\u00e9" } }\r`;
      const decision = guard.fromClient(JSON.parse(text) as unknown, text);
      const expected = text.replace('"caf\\u00e9"', JSON.stringify(NFD_TOOL_NAME));
      expect((decision.forward as { text: string }).text).toBe(expected);
      expect((decision.forward as { message: unknown }).message).toMatchObject({ params: { name: NFD_TOOL_NAME } });
    });

    it('batches: renamed members keep their bytes; with a refused member, the others are forwarded as they came', () => {
      const guard = listedGuard();
      const allForwarded = `[ {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"caf\u00e9","arguments":{"n":1.50}}} , {"jsonrpc":"2.0","id":3,"method":"ping"} ]`;
      const renamed = guard.fromClient(JSON.parse(allForwarded) as unknown, allForwarded);
      expect((renamed.forward as { text: string }).text).toBe(
        allForwarded.replace('"caf\u00e9"', JSON.stringify(NFD_TOOL_NAME)),
      );
      const withRefusal = `[{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":1.0}}, {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"export_all_notes"}},{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{},"name":"caf\u00e9"}}]`;
      const decision = guard.fromClient(JSON.parse(withRefusal) as unknown, withRefusal);
      expect((decision.forward as { text: string }).text).toBe(
        `[{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":1.0}},{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{},"name":${JSON.stringify(NFD_TOOL_NAME)}}}]`,
      );
      expect((decision.reply as { message: unknown[] }).message).toMatchObject([{ id: 5, error: {} }]);
      // An empty batch is still not forwarded.
      expect(guard.fromClient([], ' [ ] ').forward).toBeUndefined();
      // Without the text (an SDK transport), the batch is built from the messages.
      const built = guard.fromClient([call(7, NFC_TOOL_NAME), request(8, 'ping')]);
      expect((built.forward as { message: unknown }).message).toEqual([call(7, NFD_TOOL_NAME), request(8, 'ping')]);
    });

    it("keeps today's behaviour before any tools/list, for a withheld tool and for the NFD spelling from the client", () => {
      const fresh = new ToolGuard(localSignedNfd.canonicalBytes);
      expect(fresh.fromClient(call(1, NFC_TOOL_NAME)).forward).toBe('original');
      const guard = listedGuard();
      expect(guard.fromClient(call(2, NFD_TOOL_NAME)).reply?.message).toMatchObject({
        error: { data: { reason: 'unknown-tool' } },
      });
      // A server that lists it under the NFC name later: calls are forwarded as they are again.
      guard.fromClient(request(3, 'tools/list'));
      guard.fromServer(listResponse(3, [{ ...nfdTool, name: NFC_TOOL_NAME }]));
      expect(guard.fromClient(call(4, NFC_TOOL_NAME)).forward).toBe('original');
      // Withheld after a change: refused, not renamed.
      guard.fromClient(request(5, 'tools/list'));
      guard.fromServer(listResponse(5, [{ ...nfdTool, description: 'changed' }]));
      expect(guard.fromClient(call(6, NFC_TOOL_NAME)).reply?.message).toMatchObject({
        error: { data: { reason: 'withheld' } },
      });
    });
  });
});

describe('ToolGuard: subsets and calls before the check', () => {
  const call = (id: number, name: string): Record<string, unknown> => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: {} },
  });
  const list = (id: number, cursor?: string): Record<string, unknown> => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/list',
    ...(cursor === undefined ? {} : { params: { cursor } }),
  });
  const answer = (id: number, tools: readonly unknown[], nextCursor?: string): Record<string, unknown> => ({
    jsonrpc: '2.0',
    id,
    result: {
      tools: JSON.parse(JSON.stringify(tools)) as unknown[],
      ...(nextCursor === undefined ? {} : { nextCursor }),
    },
  });
  const listed = (
    guard: ToolGuard,
    id: number,
    tools: readonly unknown[],
    nextCursor?: string,
    cursor?: string,
  ): GuardFinding[] => {
    guard.fromClient(list(id, cursor));
    return guard.fromServer(answer(id, tools, nextCursor)).findings;
  };

  it('a complete list of fewer tools than signed is reported once at info level, per distinct subset, across pages', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes, { strict: true });
    const three = fixtureTools.slice(0, 3);
    expect(listed(guard, 1, three.slice(0, 2), '2')).toEqual([]);
    const subset = listed(guard, 2, three.slice(2), undefined, '2');
    expect(subset).toEqual([
      {
        event: 'tools-subset',
        level: 'info',
        manifest: guard.subject,
        tool: null,
        reason: 'subset',
        pointer: '/result/tools',
        message: 'the server presented 3 of the 4 signed tools; not presented: "ship_parcel"',
        missing: ['ship_parcel'],
      },
    ]);
    // Strict: a subset refuses nothing.
    expect(guard.isRefused).toBe(false);
    expect(listed(guard, 3, three)).toEqual([]);
    expect(listed(guard, 4, fixtureTools.slice(0, 2))).toMatchObject([
      { event: 'tools-subset', missing: ['delete_note', 'ship_parcel'] },
    ]);
    expect(listed(guard, 5, fixtureTools)).toEqual([]);
    expect(listed(guard, 6, three)).toMatchObject([{ event: 'tools-subset', missing: ['ship_parcel'] }]);
  });

  it('pages are followed by their cursors: interleaved listings are told apart; one begun at an unknown cursor says nothing', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    const send = (id: number, cursor?: string): void => void guard.fromClient(list(id, cursor));
    const receive = (id: number, from: number, to: number, next?: string): GuardFinding[] =>
      guard.fromServer(answer(id, fixtureTools.slice(from, to), next)).findings;
    send(1);
    send(2);
    expect(receive(1, 0, 2, 'a')).toEqual([]);
    expect(receive(2, 0, 2, 'b')).toEqual([]);
    send(3, 'a');
    send(4, 'b');
    expect(receive(3, 2, 4)).toEqual([]);
    expect(receive(4, 2, 4)).toEqual([]);
    expect(guard.hasCheckedList).toBe(true);
    const fresh = new ToolGuard(localSigned.canonicalBytes);
    fresh.fromClient(list(1, 'from-an-earlier-session'));
    expect(fresh.fromServer(answer(1, fixtureTools.slice(3))).findings).toEqual([]);
    expect(fresh.hasCheckedList).toBe(false);
  });

  it('a withheld tool was presented: it is not part of a subset', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    const tools = JSON.parse(JSON.stringify(fixtureTools)) as Record<string, unknown>[];
    tools[0] = { ...tools[0], description: 'changed' };
    expect(listed(guard, 1, tools)).toMatchObject([{ event: 'tool-withheld', tool: 'echo' }]);
  });

  it('without requireListed (the stdio proxy), a call before any list is forwarded as before', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes);
    expect(guard.fromClient(call(1, 'echo')).forward).toBe('original');
    expect(guard.checkCall('echo')).toBeUndefined();
  });

  it('requireListed: a call is refused until a list showed the tool, and again after list_changed', () => {
    const guard = new ToolGuard(localSigned.canonicalBytes, { requireListed: true });
    expect(guard.hasCheckedList).toBe(false);
    const before = guard.fromClient(call(1, 'echo'));
    expect(before.forward).toBeUndefined();
    expect(before.findings).toMatchObject([{ event: 'call-refused', tool: 'echo', reason: 'not-checked' }]);
    expect(before.reply?.message).toMatchObject({
      id: 1,
      error: { code: GUARD_CALL_REFUSED_CODE, data: { code: 'DISPATCH_MISMATCH', reason: 'not-checked' } },
    });
    expect(listed(guard, 2, fixtureTools.slice(0, 2), '2')).toEqual([]);
    // Shown on a first page: checked, though the listing is not complete.
    expect(guard.hasCheckedList).toBe(false);
    expect(guard.fromClient(call(3, 'echo')).forward).toBe('original');
    expect(guard.checkCall('ship_parcel')).toMatchObject({ reason: 'not-checked', pointer: '/params/name' });
    guard.fromClient(list(4, '2'));
    guard.fromServer(answer(4, fixtureTools.slice(2)));
    expect(guard.hasCheckedList).toBe(true);
    expect(guard.checkCall('ship_parcel')).toBeUndefined();
    expect(guard.fromServer({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }).forward).toBe('original');
    expect(guard.hasCheckedList).toBe(false);
    expect(guard.checkCall('echo')).toMatchObject({ reason: 'not-checked' });
    expect(guard.checkCall('export_all_notes')).toMatchObject({ reason: 'unknown-tool' });
  });
});

// toolseal guard: the message-level ToolGuard, then end to end — a real registry, `manifest capture`, `toolseal guard`
// between an SDK Client and the SDK fixture server in each of its modes, the raw stdio contract, and GuardedTransport.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { ToolsealError } from '../../src/core/errors.ts';
import {
  GUARD_CALL_REFUSED_CODE,
  GUARD_LIST_REFUSED_CODE,
  GUARD_PARSE_ERROR_CODE,
  GUARD_SESSION_REFUSED_CODE,
  GuardedTransport,
  ToolGuard,
  type GuardFinding,
} from '../../src/guard/guard.ts';
import { emptyLockfile, setLockEntry, writeLockfile } from '../../src/host/index.ts';
import { canonicalizeToText, runPipeline, type JsonObject } from '../../src/pipeline/index.ts';
import {
  fixtureCommand,
  jsonLines,
  repoRoot,
  runToolseal,
  startTestRegistry,
  toolsealBin,
  type TestRegistry,
} from '../fixtures/guard-env.ts';
import type { FixtureMode } from '../fixtures/mcp-server.ts';
import { FIXTURE_MANIFEST_NAME, RUGPULL_DESCRIPTION, extraTool, fixtureTools } from '../fixtures/mcp-tools.ts';

const VERSION = '1.0.0';
const REF = `${FIXTURE_MANIFEST_NAME}@${VERSION}`;

/** The fixture's tools with capability declarations, as a vendor would publish them. */
function manifestWithCapabilities(tools: readonly unknown[]): Record<string, unknown> {
  const withCapabilities = (tools as Record<string, unknown>[]).map((tool) => {
    if (tool['name'] === 'delete_note')
      return { ...tool, capabilities: { filesystem: { write: ['/var/lib/notes/**'] } } };
    if (tool['name'] === 'echo') return { ...tool, capabilities: { network: { hosts: [] } } };
    return tool;
  });
  return { name: FIXTURE_MANIFEST_NAME, version: VERSION, tools: withCapabilities };
}

const localSigned = runPipeline(Buffer.from(JSON.stringify(manifestWithCapabilities(fixtureTools))));

/** The tools a client must see: the signed ones without the registry-only capabilities, in JCS order. */
function presentable(bytes: Uint8Array): JsonObject[] {
  const manifest = JSON.parse(Buffer.from(bytes).toString('utf8')) as { tools: JsonObject[] };
  return manifest.tools.map(({ capabilities: _capabilities, ...tool }) => tool);
}

// ── ToolGuard, message by message ──────────────────────────────────────────

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

// ── end to end ─────────────────────────────────────────────────────────────

let registry: TestRegistry;
let signedBytes: Buffer;
let signedTools: JsonObject[];
let published: { digest: string; kid: string; logIndex: number };

beforeAll(async () => {
  registry = await startTestRegistry();
  const captured = await runToolseal([
    'manifest',
    'capture',
    '--name',
    FIXTURE_MANIFEST_NAME,
    '--version',
    VERSION,
    '--',
    ...fixtureCommand('faithful'),
  ]);
  expect(captured.code, captured.stderr).toBe(0);
  const draft = JSON.parse(captured.stdout) as { tools: unknown[] };
  const outcome = await registry.publish(Buffer.from(JSON.stringify(manifestWithCapabilities(draft.tools))));
  signedBytes = registry.registry.getManifest(FIXTURE_MANIFEST_NAME, VERSION).bytes;
  expect(outcome.record.digest).toBe(localSigned.digest);
  signedTools = presentable(signedBytes);
  published = { digest: outcome.record.digest, kid: outcome.record.kid, logIndex: outcome.record.logIndex };
});

afterAll(async () => {
  await registry?.close();
});

interface GuardedSession {
  client: Client;
  stderr(): string;
  findings(event?: string): Record<string, unknown>[];
  closed(): boolean;
}

const open: Client[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.close().catch(() => undefined);
});

function guardArgs(
  mode: FixtureMode,
  options: { strict?: boolean; fixtureArgs?: string[]; ref?: string } = {},
): string[] {
  return [
    toolsealBin,
    'guard',
    '--manifest',
    options.ref ?? REF,
    '--registry',
    registry.url,
    ...(options.strict ? ['--strict'] : []),
    '--',
    ...fixtureCommand(mode, options.fixtureArgs),
  ];
}

async function openGuarded(
  mode: FixtureMode,
  options: { strict?: boolean; fixtureArgs?: string[] } = {},
): Promise<GuardedSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: guardArgs(mode, options),
    cwd: repoRoot,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'guard-test', version: '1.0.0' });
  let closed = false;
  client.onclose = () => (closed = true);
  await client.connect(transport);
  open.push(client);
  return {
    client,
    stderr: () => stderr,
    findings: (event) => jsonLines(stderr).filter((line) => event === undefined || line['event'] === event),
    closed: () => closed,
  };
}

async function listAll(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function expectRefusedCall(client: Client, name: string, args: Record<string, unknown>): Promise<McpError> {
  const error = await client.callTool({ name, arguments: args }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(McpError);
  expect((error as McpError).code).toBe(GUARD_CALL_REFUSED_CODE);
  return error as McpError;
}

const toolNames = (tools: { name: string }[]): string[] => tools.map((tool) => tool.name);

describe('toolseal guard (end to end)', () => {
  it('faithful: the client sees exactly the signed tools, and calls work', async () => {
    const session = await openGuarded('faithful');
    const tools = await listAll(session.client);
    expect(tools).toEqual(signedTools);
    // Byte level: the raw result holds each signed tool's canonical text.
    const raw = await session.client.request(
      { method: 'tools/list', params: {} },
      z.looseObject({ tools: z.array(z.looseObject({})) }),
    );
    expect(raw.tools.map((tool) => JSON.stringify(tool))).toEqual(signedTools.map((tool) => canonicalizeToText(tool)));
    const echoed = await session.client.callTool({ name: 'echo', arguments: { text: 'hello' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'hello' }]);
    const added = await session.client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
    expect(added.structuredContent).toEqual({ sum: 5 });
    expect(session.findings('verified')).toMatchObject([
      {
        manifest: REF,
        digest: localSigned.digest,
        tools: ['echo', 'add', 'delete_note', 'ship_parcel'],
        strict: false,
      },
    ]);
    expect(session.findings('tool-withheld')).toEqual([]);
  });

  it('faithful, paginated: every page is checked and carries its nextCursor', async () => {
    const session = await openGuarded('faithful', { fixtureArgs: ['--page-size', '3'] });
    const first = await session.client.listTools();
    expect(first.nextCursor).toBe('3');
    expect(toolNames(first.tools)).toEqual(['echo', 'add', 'delete_note']);
    expect(await listAll(session.client)).toEqual(signedTools);
  });

  it('rugpull: the changed tool is withheld on the next tools/list, its calls refused, the pointer reported', async () => {
    const session = await openGuarded('rugpull');
    let changed = false;
    session.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed = true;
    });
    expect(await listAll(session.client)).toEqual(signedTools);
    await waitFor(() => changed, 'notifications/tools/list_changed to pass through');
    const second = await listAll(session.client);
    expect(toolNames(second)).toEqual(['echo', 'add', 'ship_parcel']);
    expect(second).toEqual(signedTools.filter((tool) => tool['name'] !== 'delete_note'));
    await waitFor(() => session.findings('tool-withheld').length > 0, 'the finding on stderr');
    expect(session.findings('tool-withheld')).toMatchObject([
      { tool: 'delete_note', reason: 'differs', pointer: '/description', manifest: REF },
    ]);
    const error = await expectRefusedCall(session.client, 'delete_note', { id: 'n-1' });
    expect(error.message).toContain('withheld');
    expect((await session.client.callTool({ name: 'echo', arguments: { text: 'still here' } })).content).toEqual([
      { type: 'text', text: 'still here' },
    ]);
    await waitFor(() => session.findings('call-refused').length > 0, 'the refused call on stderr');
    expect(session.stderr()).toContain('fixture: tools/call echo');
    expect(session.stderr()).not.toContain('fixture: tools/call delete_note');
  });

  it('extra-tool: a tool outside the manifest is withheld and calling it is refused without reaching the server', async () => {
    const session = await openGuarded('extra-tool', { fixtureArgs: ['--page-size', '2'] });
    expect(await listAll(session.client)).toEqual(signedTools);
    await waitFor(() => session.findings('tool-withheld').length > 0, 'the finding on stderr');
    expect(session.findings('tool-withheld')).toMatchObject([
      { tool: 'export_all_notes', reason: 'unknown-tool', pointer: '/name' },
    ]);
    const error = await expectRefusedCall(session.client, 'export_all_notes', { url: 'https://attacker.example' });
    expect(error.message).toContain('not in the signed manifest');
    expect((await session.client.callTool({ name: 'echo', arguments: { text: 'x' } })).isError).toBeFalsy();
    expect(session.stderr()).not.toContain('fixture: tools/call export_all_notes');
  });

  it('inject-meta: a tool with an injected _meta is withheld (pointer /_meta)', async () => {
    const session = await openGuarded('inject-meta');
    expect(toolNames(await listAll(session.client))).toEqual(['add', 'delete_note', 'ship_parcel']);
    await waitFor(() => session.findings('tool-withheld').length > 0, 'the finding on stderr');
    expect(session.findings('tool-withheld')).toMatchObject([{ tool: 'echo', reason: 'differs', pointer: '/_meta' }]);
    await expectRefusedCall(session.client, 'echo', { text: 'x' });
  });

  it('reorder-refs: another key order and $defs/$ref pass; the client still gets the signed bytes', async () => {
    const session = await openGuarded('reorder-refs');
    expect(await listAll(session.client)).toEqual(signedTools);
    const shipped = await session.client.callTool({
      name: 'ship_parcel',
      arguments: { from: { street: 'a', city: 'b' }, to: { street: 'c', city: 'd' }, weightGrams: 5 },
    });
    expect(shipped.content).toEqual([{ type: 'text', text: 'booked' }]);
    expect(session.findings('tool-withheld')).toEqual([]);
  });

  it('--strict with rugpull: the second tools/list is refused with a JSON-RPC error and the session ends', async () => {
    const session = await openGuarded('rugpull', { strict: true });
    expect(await listAll(session.client)).toEqual(signedTools);
    const error = await session.client.listTools().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(GUARD_SESSION_REFUSED_CODE);
    expect((error as McpError).message).toContain('/description');
    await waitFor(() => session.closed(), 'the guard to end the session');
    expect(session.findings('session-refused')).toMatchObject([{ tool: 'delete_note', pointer: '/description' }]);
  });
});

// ── the raw stdio contract: bytes, exit codes, verification before start ───

interface RawSession {
  child: ChildProcessWithoutNullStreams;
  send(message: unknown): void;
  response(id: number): Promise<string>;
  exit: Promise<number | null>;
  stderr(): string;
}

function rawGuard(args: string[]): RawSession {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    child,
    send: (message) => child.stdin.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\n'),
    response: async (id) => {
      let line: string | undefined;
      await waitFor(() => {
        line = stdout
          .split('\n')
          .find((text) => text.startsWith('{') && (JSON.parse(text) as { id?: unknown }).id === id);
        return line !== undefined;
      }, `response ${id}`);
      return line!;
    },
    exit,
    stderr: () => stderr,
  };
}

const initialize = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('toolseal guard (raw stdio)', () => {
  it('sends the signed tools as byte slices of the signed manifest, and passes the server exit code on', async () => {
    const session = rawGuard(guardArgs('reorder-refs', { fixtureArgs: ['--exit-code', '7'] }));
    session.send(initialize);
    const initialized = await session.response(0);
    // Pass-through is byte-level: the fixture's own serialisation (result before jsonrpc) arrives unchanged.
    expect(initialized.startsWith('{"result":')).toBe(true);
    session.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    session.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const listed = await session.response(1);
    const signedText = signedBytes.toString('utf8');
    const withoutCapabilities = (tool: JsonObject): string => canonicalizeToText(tool);
    for (const tool of signedTools) expect(listed).toContain(withoutCapabilities(tool));
    // Tools with no capabilities in the manifest are verbatim slices of the signed bytes.
    expect(signedText).toContain(withoutCapabilities(signedTools[1]!));
    expect(signedText).toContain(withoutCapabilities(signedTools[3]!));
    session.child.stdin.end();
    expect(await session.exit).toBe(7);
  });

  it('--strict exits non-zero after refusing, and the server is stopped', async () => {
    const session = rawGuard(guardArgs('extra-tool', { strict: true }));
    session.send(initialize);
    await session.response(0);
    session.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(JSON.parse(await session.response(1))).toMatchObject({ id: 1, error: { code: GUARD_SESSION_REFUSED_CODE } });
    expect(await session.exit).toBe(1);
    const refused = jsonLines(session.stderr()).filter(
      (line) => line['event'] === 'session-refused',
    ) as unknown as GuardFinding[];
    expect(refused).toMatchObject([{ tool: 'export_all_notes', reason: 'unknown-tool' }]);
  });

  it('verifies before starting the server: a manifest that does not verify never starts it', async () => {
    const result = await runToolseal(guardArgs('faithful', { ref: `${FIXTURE_MANIFEST_NAME}@9.9.9` }).slice(1));
    expect(result.code).toBe(1);
    expect(jsonLines(result.stderr)).toMatchObject([{ code: 'NOT_FOUND' }]);
    expect(result.stderr).not.toContain('fixture: started');
  });

  it('--locked without a pin refuses before starting the server', async () => {
    const args = guardArgs('faithful').slice(1);
    args.splice(args.indexOf('--'), 0, '--locked', '--lockfile', `${repoRoot}/test/fixtures/does-not-exist.lock`);
    const result = await runToolseal(args);
    expect(result.code).toBe(1);
    expect(jsonLines(result.stderr)).toMatchObject([{ code: 'PIN_MISMATCH' }]);
    expect(result.stderr).not.toContain('fixture: started');
  });

  it('--locked: a matching pin starts the session (registry from the lockfile), another pin refuses before start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolseal-guard-lock-'));
    try {
      const lockfile = join(dir, 'toolseal.lock');
      const entry = {
        digest: published.digest as `sha256:${string}`,
        kid: published.kid,
        logIndex: published.logIndex,
        registry: registry.url,
      };
      await writeLockfile(lockfile, setLockEntry(emptyLockfile(registry.url), FIXTURE_MANIFEST_NAME, VERSION, entry));
      const locked = rawGuard([
        toolsealBin,
        'guard',
        '--manifest',
        REF,
        '--locked',
        '--lockfile',
        lockfile,
        '--',
        ...fixtureCommand('faithful'),
      ]);
      locked.send(initialize);
      await locked.response(0);
      locked.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect((JSON.parse(await locked.response(1)) as { result: { tools: unknown[] } }).result.tools).toEqual(
        signedTools,
      );
      locked.child.stdin.end();
      expect(await locked.exit).toBe(0);
      expect(jsonLines(locked.stderr())).toMatchObject([{ event: 'verified', locked: true, digest: published.digest }]);

      await writeLockfile(
        lockfile,
        setLockEntry(emptyLockfile(registry.url), FIXTURE_MANIFEST_NAME, VERSION, {
          ...entry,
          digest: `sha256:${'1'.repeat(64)}`,
        }),
      );
      const result = await runToolseal([
        'guard',
        '--manifest',
        REF,
        '--locked',
        '--lockfile',
        lockfile,
        '--',
        ...fixtureCommand('faithful'),
      ]);
      expect(result.code).toBe(1);
      expect(jsonLines(result.stderr)).toMatchObject([{ code: 'PIN_MISMATCH' }]);
      expect(result.stderr).not.toContain('fixture: started');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a server command that cannot be started is reported (exit 2) after verification', async () => {
    const result = await runToolseal([
      'guard',
      '--manifest',
      REF,
      '--registry',
      registry.url,
      '--',
      join(tmpdir(), 'toolseal-no-such-server'),
    ]);
    expect(result.code).toBe(2);
    expect(jsonLines(result.stderr)).toMatchObject([
      { event: 'verified' },
      { message: expect.stringContaining('could not start the MCP server') },
    ]);
  });

  it('usage errors exit 2', async () => {
    expect((await runToolseal(['guard', '--manifest', REF])).code).toBe(2);
  });
});

// ── the host API: GuardedTransport around any SDK transport ───────────────

describe('GuardedTransport', () => {
  it('puts the guard between an SDK Client and a StdioClientTransport', async () => {
    const findings: GuardFinding[] = [];
    const inner = new StdioClientTransport({
      command: fixtureCommand('extra-tool')[0]!,
      args: fixtureCommand('extra-tool').slice(1),
      cwd: repoRoot,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(
      new GuardedTransport(inner, new ToolGuard(signedBytes), { onFinding: (finding) => findings.push(finding) }),
    );
    open.push(client);
    expect(await listAll(client)).toEqual(signedTools);
    expect(findings).toMatchObject([{ event: 'tool-withheld', tool: extraTool.name }]);
    await expectRefusedCall(client, extraTool.name, { url: 'x' });
    expect((await client.callTool({ name: 'echo', arguments: { text: 'ok' } })).content).toEqual([
      { type: 'text', text: 'ok' },
    ]);
  });
});

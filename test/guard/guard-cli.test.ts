// toolseal guard end to end: a real registry, `manifest capture`, `toolseal guard` between an SDK Client and the SDK
// fixture server in each of its modes, then the raw stdio contract (bytes, exit codes, verification before start).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { GUARD_SESSION_REFUSED_CODE, type GuardFinding } from '../../src/guard/index.ts';
import { emptyLockfile, setLockEntry, writeLockfile } from '../../src/lock/lockfile.ts';
import { canonicalizeToText, type JsonObject } from '../../src/pipeline/index.ts';
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
import { FIXTURE_MANIFEST_NAME, NFD_TOOL_NAME } from '../fixtures/mcp-tools.ts';
import {
  NFC_TOOL_NAME,
  NFD_REF,
  REF,
  VERSION,
  expectRefusedCall,
  initialize,
  listAll,
  localSigned,
  manifestWithCapabilities,
  nfdManifestUpload,
  presentable,
  rawGuard,
  toolNames,
  waitFor,
} from './guard-helpers.ts';

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
  signedBytes = (await registry.registry.getManifest(FIXTURE_MANIFEST_NAME, VERSION)).bytes;
  expect(outcome.record.digest).toBe(localSigned.digest);
  signedTools = presentable(signedBytes);
  published = { digest: outcome.record.digest, kid: outcome.record.kid, logIndex: outcome.record.logIndex };
  await registry.publish(nfdManifestUpload());
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
  options: { strict?: boolean; fixtureArgs?: string[]; ref?: string } = {},
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

  it('extra-tool: the client is told with a notifications/message (warning) naming the tool, once', async () => {
    const session = await openGuarded('extra-tool');
    const notices: unknown[] = [];
    session.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      notices.push(notification.params);
    });
    await listAll(session.client);
    await listAll(session.client);
    await waitFor(() => notices.length > 0, 'the notice');
    expect(notices).toEqual([
      {
        level: 'warning',
        logger: 'toolseal-guard',
        data: {
          message: expect.stringContaining('export_all_notes (not in the signed manifest)'),
          manifest: REF,
          withheld: [{ tool: 'export_all_notes', reason: 'unknown-tool', pointer: '/name' }],
        },
      },
    ]);
    // The finding is logged once per session too.
    expect(session.findings('tool-withheld')).toHaveLength(1);
  });

  it('inject-meta: a tool with an injected _meta is withheld (pointer /_meta)', async () => {
    const session = await openGuarded('inject-meta');
    expect(toolNames(await listAll(session.client))).toEqual(['add', 'delete_note', 'ship_parcel']);
    await waitFor(() => session.findings('tool-withheld').length > 0, 'the finding on stderr');
    expect(session.findings('tool-withheld')).toMatchObject([{ tool: 'echo', reason: 'differs', pointer: '/_meta' }]);
    await expectRefusedCall(session.client, 'echo', { text: 'x' });
  });

  it('subset: fewer tools than signed is no finding; one info JSON line on stderr, however often it is listed', async () => {
    const session = await openGuarded('subset', { strict: true });
    expect(await listAll(session.client)).toEqual(signedTools.filter((tool) => tool['name'] !== 'ship_parcel'));
    expect(await listAll(session.client)).toEqual(signedTools.filter((tool) => tool['name'] !== 'ship_parcel'));
    await waitFor(() => session.findings('tools-subset').length > 0, 'the info line on stderr');
    expect(session.findings('tools-subset')).toEqual([
      {
        event: 'tools-subset',
        level: 'info',
        manifest: REF,
        tool: null,
        reason: 'subset',
        pointer: '/result/tools',
        message: 'the server presented 3 of the 4 signed tools; not presented: "ship_parcel"',
        missing: ['ship_parcel'],
      },
    ]);
    expect(session.findings('tool-withheld')).toEqual([]);
    expect(session.closed()).toBe(false);
    expect((await session.client.callTool({ name: 'echo', arguments: { text: 'z' } })).isError).toBeFalsy();
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

describe('toolseal guard: a tool whose server-side name is NFD', () => {
  it("lists the tool under its signed NFC name and forwards tools/call under the server's NFD spelling", async () => {
    const session = await openGuarded('nfd-name', { ref: NFD_REF });
    const tools = await listAll(session.client);
    expect(toolNames(tools)).toEqual(['echo', 'add', 'delete_note', 'ship_parcel', NFC_TOOL_NAME]);
    expect(session.findings('tool-withheld')).toEqual([]);
    const ordered = await session.client.callTool({ name: NFC_TOOL_NAME, arguments: { size: 'small' } });
    expect(ordered.content).toEqual([{ type: 'text', text: 'one small coffee' }]);
    await waitFor(() => session.stderr().includes(`fixture: tools/call ${NFD_TOOL_NAME}\n`), 'the NFD name on stderr');
    expect((await session.client.callTool({ name: 'echo', arguments: { text: 'x' } })).content).toEqual([
      { type: 'text', text: 'x' },
    ]);
  });
});

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

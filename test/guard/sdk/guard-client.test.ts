// guardClient: the guard inside a host process. A real registry, a real SDK Client and an in-process SDK Server on
// the SDK's InMemoryTransport pair; each test checks the exact tools the host gets and what the server received.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { ToolsealError } from '../../../src/core/errors.ts';
import {
  GUARD_CALL_REFUSED_CODE,
  GuardedClient,
  type GuardFinding,
  ToolCallRefusedError,
  ToolGuard,
  guardClient,
} from '../../../src/guard/index.ts';
import { emptyLockfile, setLockEntry } from '../../../src/lock/lockfile.ts';
import type { JsonObject } from '../../../src/pipeline/index.ts';
import { startTestRegistry, type TestRegistry } from '../../fixtures/guard-env.ts';
import { fixtureTools } from '../../fixtures/mcp-tools.ts';
import { REF, localSigned, manifestWithCapabilities, presentable, waitFor } from '../guard-helpers.ts';
import { startMemoryServer, type MemoryServer, type MemoryServerMode } from '../in-memory-server.ts';

let registry: TestRegistry;
const signedTools = presentable(localSigned.canonicalBytes);
const signedWithout = (name: string): JsonObject[] => signedTools.filter((tool) => tool['name'] !== name);

beforeAll(async () => {
  registry = await startTestRegistry();
  const outcome = await registry.publish(Buffer.from(JSON.stringify(manifestWithCapabilities(fixtureTools))));
  expect(outcome.record.digest).toBe(localSigned.digest);
});

afterAll(async () => {
  await registry?.close();
});

interface Session {
  guarded: GuardedClient;
  server: MemoryServer;
  /** Findings from the `finding` event; `callbacks` from onFinding (the same ones). */
  findings: GuardFinding[];
  callbacks: GuardFinding[];
}

const open: Session[] = [];
afterEach(async () => {
  for (const session of open.splice(0)) {
    await session.guarded.close().catch(() => undefined);
    await session.server.close().catch(() => undefined);
  }
});

async function openSession(
  mode: MemoryServerMode,
  options: { pageSize?: number; strict?: boolean } = {},
): Promise<Session> {
  const server = await startMemoryServer(mode, options.pageSize);
  const callbacks: GuardFinding[] = [];
  const guarded = await guardClient(new Client({ name: 'host', version: '1.0.0' }), {
    manifest: REF,
    registry: registry.url,
    strict: options.strict ?? false,
    onFinding: (finding) => callbacks.push(finding),
  });
  const findings: GuardFinding[] = [];
  guarded.on('finding', (finding) => findings.push(finding));
  await guarded.connect(server.clientTransport);
  const session = { guarded, server, findings, callbacks };
  open.push(session);
  return session;
}

async function expectRefused(session: Session, name: string, reason: string): Promise<ToolCallRefusedError> {
  const error = await session.guarded.callTool({ name, arguments: {} }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolCallRefusedError);
  const refused = error as ToolCallRefusedError;
  expect(refused).toBeInstanceOf(ToolsealError);
  expect(refused.code).toBe('DISPATCH_MISMATCH');
  expect(refused.finding).toMatchObject({ event: 'call-refused', manifest: REF, tool: name, reason });
  expect(session.findings).toContainEqual(refused.finding);
  expect(session.server.received).not.toContain(`tools/call ${name}`);
  return refused;
}

describe('guardClient (in process, InMemoryTransport)', () => {
  it('faithful: listTools returns exactly the signed tools, a fresh copy each time, and calls work', async () => {
    const session = await openSession('faithful');
    expect(session.guarded.verified?.digest).toBe(localSigned.digest);
    const first = await session.guarded.listTools();
    expect(first.tools).toEqual(signedTools);
    (first.tools[0] as { description?: string }).description = 'changed by the host';
    const second = await session.guarded.listTools();
    expect(second.tools).toEqual(signedTools);
    expect(second.tools[0]).not.toBe(first.tools[0]);
    expect((await session.guarded.callTool({ name: 'echo', arguments: { text: 'hi' } })).content).toEqual([
      { type: 'text', text: 'hi' },
    ]);
    expect((await session.guarded.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).structuredContent).toEqual({
      sum: 5,
    });
    expect(session.findings).toEqual([]);
    expect(session.server.received).toEqual(['tools/list', 'tools/list', 'tools/call echo', 'tools/call add']);
  });

  it('a call before any list: the wrapper lists every page itself first, then sends the call', async () => {
    const session = await openSession('faithful', { pageSize: 3 });
    expect(session.guarded.guard.hasCheckedList).toBe(false);
    const result = await session.guarded.callTool({ name: 'echo', arguments: { text: 'first' } });
    expect(result.content).toEqual([{ type: 'text', text: 'first' }]);
    expect(session.server.received).toEqual(['tools/list', 'tools/list', 'tools/call echo']);
    expect(session.findings).toEqual([]);
  });

  it('a call racing the first list: both complete, every page checked, no false subset', async () => {
    const session = await openSession('faithful', { pageSize: 2 });
    const [tools, result] = await Promise.all([
      session.guarded.listAllTools(),
      session.guarded.callTool({ name: 'echo', arguments: { text: 'race' } }),
    ]);
    expect(tools).toEqual(signedTools);
    expect(result.content).toEqual([{ type: 'text', text: 'race' }]);
    expect(session.findings).toEqual([]);
    expect(session.server.received.at(-1)).toBe('tools/call echo');
  });

  it('a call racing the first list to a tool presented differently is refused and never sent', async () => {
    const session = await openSession('inject-meta', { pageSize: 2 });
    const [tools, refused] = await Promise.all([
      session.guarded.listAllTools(),
      expectRefused(session, 'echo', 'withheld'),
    ]);
    expect(tools).toEqual(signedWithout('echo'));
    expect(refused.finding.tool).toBe('echo');
  });

  it('a call before any list to a tool the server presents differently never reaches the server', async () => {
    const session = await openSession('inject-meta');
    const refused = await expectRefused(session, 'echo', 'withheld');
    expect(session.server.received).toEqual(['tools/list']);
    expect(session.findings).toMatchObject([
      { event: 'tool-withheld', tool: 'echo', reason: 'differs', pointer: '/_meta' },
      refused.finding,
    ]);
    expect(await session.guarded.listAllTools()).toEqual(signedWithout('echo'));
  });

  it('the SDK Client under the wrapper is guarded too: its own call before any list is refused by the transport', async () => {
    const session = await openSession('faithful');
    const error = await session.guarded.client.callTool({ name: 'echo', arguments: { text: 'x' } }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(GUARD_CALL_REFUSED_CODE);
    expect(session.server.received).toEqual([]);
    expect(session.findings).toMatchObject([{ event: 'call-refused', tool: 'echo', reason: 'not-checked' }]);
  });

  it('rugpull announced with list_changed: the wrapper re-lists before the next call and refuses the changed tool', async () => {
    const session = await openSession('rugpull');
    expect(await session.guarded.listAllTools()).toEqual(signedTools);
    await waitFor(() => !session.guarded.guard.hasCheckedList, 'list_changed to reach the guard');
    await expectRefused(session, 'delete_note', 'withheld');
    expect(session.server.received).toEqual(['tools/list', 'tools/list']);
    expect(session.findings[0]).toMatchObject({
      event: 'tool-withheld',
      tool: 'delete_note',
      reason: 'differs',
      pointer: '/description',
    });
    expect(await session.guarded.listAllTools()).toEqual(signedWithout('delete_note'));
    expect((await session.guarded.callTool({ name: 'echo', arguments: { text: 'ok' } })).isError).toBeFalsy();
  });

  it('rugpull without the notification: caught at the next list, and the tool refused from then on', async () => {
    const session = await openSession('faithful');
    expect(await session.guarded.listAllTools()).toEqual(signedTools);
    await session.server.rugPull(false);
    expect(await session.guarded.listAllTools()).toEqual(signedWithout('delete_note'));
    await expectRefused(session, 'delete_note', 'withheld');
  });

  it('extra-tool: the tool outside the manifest is not listed and calling it throws before anything is sent', async () => {
    const session = await openSession('extra-tool', { pageSize: 2 });
    expect(await session.guarded.listAllTools()).toEqual(signedTools);
    const refused = await expectRefused(session, 'export_all_notes', 'unknown-tool');
    expect(refused.message).toContain('not in the signed manifest');
    expect(session.findings[0]).toMatchObject({ event: 'tool-withheld', tool: 'export_all_notes', pointer: '/name' });
    expect(session.callbacks).toEqual(session.findings);
  });

  it('subset: not a finding, reported once at info level; a signed tool the server did not present is not called', async () => {
    const session = await openSession('subset');
    expect(await session.guarded.listAllTools()).toEqual(signedWithout('ship_parcel'));
    expect(await session.guarded.listAllTools()).toEqual(signedWithout('ship_parcel'));
    expect(session.findings).toEqual([
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
    await expectRefused(session, 'ship_parcel', 'not-checked');
    expect((await session.guarded.callTool({ name: 'echo', arguments: { text: 'y' } })).isError).toBeFalsy();
  });

  it('strict: a finding refuses the session, and the call is never sent', async () => {
    const session = await openSession('inject-meta', { strict: true });
    await expect(session.guarded.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).rejects.toThrow(/strict/);
    expect(session.server.received).toEqual(['tools/list']);
    expect(session.findings).toMatchObject([{ event: 'session-refused', tool: 'echo', pointer: '/_meta' }]);
  });

  it('verifies before it wraps: a lock pinning other bytes, or missing the entry, is PIN_MISMATCH', async () => {
    const client = new Client({ name: 'host', version: '1.0.0' });
    const other = `sha256:${'1'.repeat(64)}` as const;
    await expect(
      guardClient(client, { manifest: REF, registry: registry.url, lock: { digest: other } }),
    ).rejects.toMatchObject({ code: 'PIN_MISMATCH' });
    await expect(
      guardClient(client, { manifest: REF, registry: registry.url, lock: emptyLockfile(registry.url) }),
    ).rejects.toMatchObject({ code: 'PIN_MISMATCH' });
    expect(client.transport).toBeUndefined();
    const [name, version] = REF.split('@') as [string, string];
    const lock = setLockEntry(emptyLockfile(registry.url), name, version, {
      digest: localSigned.digest,
      kid: 'k',
      logIndex: 0,
      registry: registry.url,
    });
    const guarded = await guardClient(client, { manifest: REF, registry: registry.url, lock });
    expect(guarded.guard.digest).toBe(localSigned.digest);
  });

  it('the constructor takes already verified bytes: a ToolGuard with requireListed (refused without it)', async () => {
    const bytes = localSigned.canonicalBytes;
    expect(() => new GuardedClient(new Client({ name: 'host', version: '1' }), new ToolGuard(bytes))).toThrow(
      /requireListed/,
    );
    const server = await startMemoryServer('extra-tool');
    const guarded = new GuardedClient(
      new Client({ name: 'host', version: '1.0.0' }),
      new ToolGuard(bytes, { expectedDigest: localSigned.digest, requireListed: true }),
    );
    await guarded.connect(server.clientTransport);
    expect(await guarded.listAllTools()).toEqual(signedTools);
    await expect(guarded.callTool({ name: 'export_all_notes', arguments: {} })).rejects.toBeInstanceOf(
      ToolCallRefusedError,
    );
    expect(server.received).toEqual(['tools/list']);
    await guarded.close();
    await server.close();
  });

  it('refuses a Client that is already connected (its messages would bypass the guard)', async () => {
    const server = await startMemoryServer('faithful');
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(server.clientTransport);
    await expect(guardClient(client, { manifest: REF, registry: registry.url })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
    await client.close();
    await server.close();
  });
});

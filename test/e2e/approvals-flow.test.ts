// Issue 13 §5 end to end: a real MCP SDK server (stdio) and a real SDK Client through `toolseal guard --policy`
// (bin/toolseal.js), a real registry over HTTP, and the operator deciding with `toolseal approvals`. Each step of the
// issue's list, in order, on one guarded session (plus one raw session for literals an SDK client cannot write).
// Expiry: the registry's clock is moved past the approval TTL (the option `serve --approval-ttl` sets).

import { refusalOf as readRefusal } from '../guard/approval-helpers.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ToolsealError } from '../../src/core/errors.ts';
import { APPROVAL_META_KEY } from '../../src/protocol/wire.ts';
import { jsonLines, repoRoot, runToolseal, toolsealBin } from '../fixtures/guard-env.ts';
import { REFUND_CEILING, REFUND_REF } from '../fixtures/refund-tools.ts';
import {
  type ApprovalRegistry,
  HOST_NAME,
  refundArguments,
  startApprovalRegistry,
  toolsCallText,
} from '../guard/approval-helpers.ts';
import { initialize, rawGuard, waitFor } from '../guard/guard-helpers.ts';
import { cleanupTempDirs, makeTempDir } from '../helpers/registry-helpers.ts';

const refundServer = join(repoRoot, 'test', 'fixtures', 'refund-server.ts');
const POLICY = '{"version": 1, "requireApproval": [{"money": {"atLeastMinor": 1000}}]}';

/** The client's transport, recording the exact text of every message it sends (what the SDK writes on stdio). */
class RecordingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  readonly sent: string[] = [];
  constructor(readonly inner: StdioClientTransport) {}
  async start(): Promise<void> {
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onmessage = (message) => this.onmessage?.(message);
    await this.inner.start();
  }
  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    this.sent.push(JSON.stringify(message));
    await this.inner.send(message);
  }
  async close(): Promise<void> {
    await this.inner.close();
  }
}

let reg: ApprovalRegistry;
let folder: string;
let policyFile: string;
let recordFile: string;
let client: Client;
let transport: RecordingTransport;
let stderr = '';

function guardArgs(record: string): string[] {
  return [
    toolsealBin,
    'guard',
    '--manifest',
    REFUND_REF,
    '--registry',
    reg.url,
    '--policy',
    policyFile,
    '--host-token',
    reg.hostToken,
    '--',
    process.execPath,
    '--import',
    'tsx',
    refundServer,
    '--record',
    record,
  ];
}

beforeAll(async () => {
  reg = await startApprovalRegistry();
  folder = makeTempDir('toolseal-approvals-e2e-');
  policyFile = join(folder, 'policy.json');
  recordFile = join(folder, 'received.jsonl');
  writeFileSync(policyFile, POLICY);
  writeFileSync(recordFile, '');
  const stdio = new StdioClientTransport({
    command: process.execPath,
    args: guardArgs(recordFile),
    cwd: repoRoot,
    stderr: 'pipe',
  });
  stdio.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  transport = new RecordingTransport(stdio);
  client = new Client({ name: 'approvals-e2e', version: '1.0.0' });
  await client.connect(transport);
}, 60_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await reg?.close();
  cleanupTempDirs();
});

type Result = Awaited<ReturnType<Client['callTool']>>;

const received = (): string[] =>
  readFileSync(recordFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '');

function refund(amount: number, extra: Record<string, unknown> = {}, meta?: Record<string, unknown>): Promise<Result> {
  return client.callTool({
    name: 'refund',
    arguments: { charge: 'ch_e2e', amount_minor: amount, currency: 'USD', ...extra },
    ...(meta === undefined ? {} : { _meta: meta }),
  });
}

function approvalOf(result: Result): { id: string; digest: string; status: string; url: string } {
  expect(result.isError).toBe(true);
  const meta = (result._meta as Record<string, Record<string, string>>)[APPROVAL_META_KEY]!;
  expect(meta['code']).toBe('APPROVAL_REQUIRED');
  return meta as { id: string; digest: string; status: string; url: string };
}

/** A refused call is a tool result with isError and the code in _meta (MCP 2025-11-25), never a protocol error. */
async function refusalOf(call: Promise<Result>): Promise<string> {
  return readRefusal({ result: await call }).code;
}

async function operator(decision: 'approve' | 'deny', approval: { id: string; digest: string }): Promise<void> {
  const run = await runToolseal(
    [
      'approvals',
      decision,
      approval.id,
      '--digest',
      approval.digest,
      '--registry',
      reg.url,
      '--token',
      reg.operatorToken,
    ],
    { timeoutMs: 60_000 },
  );
  expect(run.code, run.stderr).toBe(0);
}

/** The exact text the client sent for the last tools/call. */
const lastSentCall = (): string => transport.sent.filter((text) => text.includes('"tools/call"')).at(-1)!;

describe('approvals end to end (issue 13 §5)', () => {
  let first: { id: string; digest: string };
  let second: { id: string; digest: string };

  it('a refund of 4200 USD minor units needs approval; nothing reaches the server', async () => {
    const verified = jsonLines(stderr).find((line) => line['event'] === 'verified');
    expect(verified).toMatchObject({ manifest: REFUND_REF, policyRules: 1, audience: HOST_NAME });
    first = approvalOf(await refund(4200));
    expect(first).toMatchObject({ status: 'pending', url: expect.stringContaining(first.id) });
    expect((await reg.host.get(first.id)).status).toBe('pending');
    expect(received()).toEqual([]);
  });

  it('the operator approves with the CLI; the identical retry is forwarded once, as the exact bytes sent', async () => {
    await operator('approve', first);
    const result = await refund(4200);
    expect(result.content).toEqual([{ type: 'text', text: 'refunded 4200 USD' }]);
    expect(received()).toEqual([lastSentCall()]);
    expect((await reg.host.get(first.id)).status).toBe('consumed');
  });

  it('a second identical retry needs a new approval', async () => {
    second = approvalOf(await refund(4200));
    expect(second.id).not.toBe(first.id);
    expect(second.digest).toBe(first.digest);
    expect(received()).toHaveLength(1);
  });

  it('a retry with 4201 gets a new request, never the old approval', async () => {
    await operator('approve', second);
    const other = approvalOf(await refund(4201));
    expect([first.id, second.id]).not.toContain(other.id);
    expect(other.digest).not.toBe(second.digest);
    expect(await refusalOf(refund(4201, {}, { [APPROVAL_META_KEY]: second.id }))).toBe('APPROVAL_DIGEST_MISMATCH');
    expect(received()).toHaveLength(1);
  });

  it('16 concurrent consumes of one approval: exactly one wins (HTTP, against the registry)', async () => {
    const { envelope } = await reg.host.get(second.id);
    const bytes = new TextEncoder().encode(JSON.stringify(envelope));
    const outcomes = await Promise.allSettled(Array.from({ length: 16 }, () => reg.host.consume(second.id, bytes)));
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect((outcome.reason as ToolsealError).code).toBe('APPROVAL_CONSUMED');
    }
    // The guard remembered that approval: consumed elsewhere, it is forgotten and a new one requested.
    expect(approvalOf(await refund(4200)).id).not.toBe(second.id);
    expect(received()).toHaveLength(1);
  });

  it('expired and denied approvals are refused', async () => {
    const expiring = approvalOf(await refund(1500));
    await operator('approve', expiring);
    reg.advance(16 * 60 * 1000); // past the default 15-minute TTL
    expect(await refusalOf(refund(1500, {}, { [APPROVAL_META_KEY]: expiring.id }))).toBe('APPROVAL_EXPIRED');
    expect(approvalOf(await refund(1500)).id).not.toBe(expiring.id);

    const denied = approvalOf(await refund(1700));
    await operator('deny', denied);
    expect(await refusalOf(refund(1700))).toBe('APPROVAL_DENIED');
    expect(received()).toHaveLength(1);
  });

  it('over the ceiling, 4200.0, or a string amount: refused before any approval is requested', async () => {
    const before = (await reg.operator.list()).items.length;
    expect(await refusalOf(refund(REFUND_CEILING + 1))).toBe('MONEY_CEILING_EXCEEDED');
    expect(await refusalOf(refund('4200' as unknown as number))).toBe('ARGUMENTS_INVALID');
    // An SDK client cannot write 4200.0: a raw client through the same command can.
    writeFileSync(join(folder, 'raw-received.jsonl'), '');
    const raw = rawGuard(guardArgs(join(folder, 'raw-received.jsonl')));
    try {
      raw.send(initialize);
      await raw.response(0);
      raw.send(toolsCallText(1, 'refund', refundArguments('4200.0')));
      raw.send(toolsCallText(2, 'refund', refundArguments('4.2e3')));
      for (const id of [1, 2]) {
        expect(readRefusal(JSON.parse(await raw.response(id))).meta).toMatchObject({
          code: 'MONEY_INVALID',
          pointer: '/amount_minor',
        });
      }
      expect(readFileSync(join(folder, 'raw-received.jsonl'), 'utf8')).toBe('');
    } finally {
      raw.child.stdin.end();
      await raw.exit;
    }
    expect((await reg.operator.list()).items.length).toBe(before);
    expect(received()).toHaveLength(1);
  });

  it('an informational change (and an unordered array reordered) after approval still matches', async () => {
    const approval = approvalOf(await refund(2000, { note: 'first note', tags: ['a', 'b'] }));
    await operator('approve', approval);
    const result = await refund(2000, { note: 'another note', tags: ['b', 'a'] });
    expect(result.content).toEqual([{ type: 'text', text: 'refunded 2000 USD' }]);
    expect(received()).toHaveLength(2);
    expect(received()[1]).toBe(lastSentCall());
    expect(received()[1]).toContain('another note');
  });

  it('reordering an ordered array does not', async () => {
    const approval = approvalOf(await refund(2100, { lines: ['x', 'y'] }));
    await operator('approve', approval);
    const reordered = approvalOf(await refund(2100, { lines: ['y', 'x'] }));
    expect(reordered.id).not.toBe(approval.id);
    expect(reordered.digest).not.toBe(approval.digest);
    expect(received()).toHaveLength(2);
  });

  it('the guard logged each request, decision and consumption on stderr, never the token or the arguments', async () => {
    await waitFor(() => jsonLines(stderr).some((line) => line['event'] === 'arguments-refused'), 'events');
    const events = jsonLines(stderr).filter((line) => String(line['event']).match(/^(approval|arguments)-/));
    const names = new Set(events.map((line) => line['event']));
    for (const name of ['approval-requested', 'approval-consumed', 'approval-refused', 'arguments-refused'])
      expect(names).toContain(name);
    for (const line of events) expect(line).toHaveProperty('digest');
    expect(stderr).not.toContain(reg.hostToken);
    expect(stderr).not.toContain('ch_e2e');
    expect(stderr).not.toContain('another note');
  });
});

describe('toolseal guard --policy: usage and fail fast', () => {
  it('a policy without a host token is a usage error; a token the registry refuses fails before the server starts', async () => {
    const usage = await runToolseal(
      ['guard', '--manifest', REFUND_REF, '--registry', reg.url, '--policy', policyFile, '--', 'false'],
      { env: { ...process.env, TOOLSEAL_HOST_TOKEN: '' } },
    );
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--host-token');
    const refused = await runToolseal([
      'guard',
      '--manifest',
      REFUND_REF,
      '--registry',
      reg.url,
      '--policy',
      policyFile,
      '--host-token',
      'tsh_not-a-token',
      '--',
      process.execPath,
      '-e',
      'process.stderr.write("server started")',
    ]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr.trim().split('\n').at(-1)!)).toMatchObject({ code: 'UNAUTHENTICATED' });
    expect(refused.stderr).not.toContain('server started');
    expect(refused.stderr).not.toContain('tsh_not-a-token');
  });
});

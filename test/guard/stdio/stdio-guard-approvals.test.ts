// startStdioGuard with a CallGate (issue 13 §4) in process, over the real registry and the refund MCP server: the
// approved call reaches the server as the exact bytes the client sent, once; client lines keep their order while one
// waits for the registry; batches are decided member by member; events never carry arguments; it fails closed.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalsClient } from '../../../src/client/approvals.ts';
import { CallGate } from '../../../src/guard/core/call-gate.ts';
import { ToolGuard, startStdioGuard, type StdioGuardSession } from '../../../src/guard/index.ts';
import { APPROVAL_META_KEY } from '../../../src/protocol/wire.ts';
import { makeTempDir, cleanupTempDirs } from '../../helpers/registry-helpers.ts';
import { repoRoot } from '../../fixtures/guard-env.ts';
import {
  type ApprovalRegistry,
  HOST_NAME,
  MONEY_POLICY,
  refusalOf,
  openGate,
  refundArguments,
  startApprovalRegistry,
  toolsCallText,
} from '../approval-helpers.ts';
import { initialize, waitFor } from '../guard-helpers.ts';

const refundServer = join(repoRoot, 'test', 'fixtures', 'refund-server.ts');

interface Proxy {
  session: StdioGuardSession;
  input: PassThrough;
  send(text: string): void;
  response(id: unknown): Promise<Record<string, unknown>>;
  lines(): unknown[];
  stderr(): string;
  /** The tools/call lines the server read, exactly as it read them. */
  received(): string[];
}

let reg: ApprovalRegistry;
const proxies: Proxy[] = [];

beforeAll(async () => {
  reg = await startApprovalRegistry();
});
afterEach(async () => {
  for (const proxy of proxies.splice(0)) {
    proxy.input.end();
    await proxy.session.done.catch(() => undefined);
  }
});
afterAll(async () => {
  await reg?.close();
  cleanupTempDirs();
});

function startProxy(gate: CallGate): Proxy {
  const record = join(makeTempDir('toolseal-refund-record-'), 'calls.jsonl');
  writeFileSync(record, '');
  const input = new PassThrough();
  const output = new PassThrough();
  const errorOutput = new PassThrough();
  let stdout = '';
  let stderr = '';
  output.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  errorOutput.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const session = startStdioGuard({
    guard: new ToolGuard(reg.signedBytes),
    gate,
    command: process.execPath,
    args: ['--import', 'tsx', refundServer, '--record', record],
    cwd: repoRoot,
    input,
    output,
    errorOutput,
  });
  const lines = (): unknown[] =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{') || line.startsWith('['))
      .map((line) => JSON.parse(line) as unknown);
  const find = (id: unknown): Record<string, unknown> | undefined =>
    lines().find((line) => !Array.isArray(line) && (line as Record<string, unknown>)['id'] === id) as
      | Record<string, unknown>
      | undefined;
  const proxy: Proxy = {
    session,
    input,
    send: (text) => input.write(`${text}\n`),
    response: async (id) => {
      await waitFor(() => find(id) !== undefined, `response ${String(id)}`);
      return find(id)!;
    },
    lines,
    stderr: () => stderr,
    received: () =>
      readFileSync(record, 'utf8')
        .split('\n')
        .filter((line) => line !== ''),
  };
  proxies.push(proxy);
  proxy.send(JSON.stringify(initialize));
  return proxy;
}

const metaOf = (response: Record<string, unknown>): Record<string, string> => {
  const result = response['result'] as Record<string, unknown>;
  expect(result['isError']).toBe(true);
  return (result['_meta'] as Record<string, Record<string, string>>)[APPROVAL_META_KEY]!;
};

async function approve(meta: Record<string, string>): Promise<void> {
  await reg.operator.decide(meta['id']!, { decision: 'approve', digest: meta['digest']! });
}

describe('startStdioGuard with approvals', () => {
  it('the approved retry reaches the server once, as the exact bytes the client sent', async () => {
    const proxy = startProxy(await openGate(reg, MONEY_POLICY));
    await proxy.response(0);
    // Odd spacing and member order: what reaches the server must be these bytes, not a re-serialisation.
    const line = (id: number) =>
      `{ "params" : { "arguments" : { "currency":"USD", "amount_minor" : 4200 , "charge":"ch_exact" }, "name":"refund" }, "method":"tools/call", "id":${id}, "jsonrpc":"2.0" }`;
    proxy.send(line(1));
    const meta = metaOf(await proxy.response(1));
    expect(meta['code']).toBe('APPROVAL_REQUIRED');
    expect(proxy.received()).toEqual([]);
    await approve(meta);
    proxy.send(line(2));
    const done = await proxy.response(2);
    expect(done['result']).toEqual({ content: [{ type: 'text', text: 'refunded 4200 USD' }] });
    expect(proxy.received()).toEqual([line(2)]);
    proxy.send(line(3));
    expect(metaOf(await proxy.response(3))['id']).not.toBe(meta['id']);
    expect(proxy.received()).toEqual([line(2)]);
  });

  it('a later line never overtakes one waiting for the registry', async () => {
    const proxy = startProxy(await openGate(reg, MONEY_POLICY));
    await proxy.response(0);
    const refund = toolsCallText(1, 'refund', refundArguments(4300));
    proxy.send(refund);
    await approve(metaOf(await proxy.response(1)));
    const retry = toolsCallText(2, 'refund', refundArguments(4300));
    const lookup = toolsCallText(3, 'lookup_charge', '{"charge":"ch_1"}');
    proxy.send(`${retry}\n${lookup}`);
    await proxy.response(3);
    await proxy.response(2);
    expect(proxy.received()).toEqual([retry, lookup]);
  });

  it('a batch is decided member by member: the kept members go on as one batch, the answers come back as one', async () => {
    const proxy = startProxy(await openGate(reg, MONEY_POLICY));
    await proxy.response(0);
    const needsApproval = toolsCallText(11, 'refund', refundArguments(4400));
    const free = toolsCallText(12, 'lookup_charge', '{"charge":"ch_2"}');
    const invalid = toolsCallText(13, 'refund', refundArguments('"4400"'));
    proxy.send(`[${needsApproval}, ${free},${invalid}]`);
    // The guard answers its two members as one batch; the kept member goes on, alone, as a batch (the SDK server
    // of MCP 2025-06-18 does not take batches, so only the bytes it read are checked).
    await waitFor(() => proxy.lines().some(Array.isArray), 'the batch answer');
    await waitFor(() => proxy.received().length === 1, 'the forwarded batch');
    const answers = proxy.lines().find(Array.isArray) as Record<string, unknown>[];
    expect(answers.map((message) => message['id'])).toEqual([11, 13]);
    expect(metaOf(answers[0]!)['code']).toBe('APPROVAL_REQUIRED');
    expect(refusalOf(answers[1]!).code).toBe('ARGUMENTS_INVALID');
    expect(refusalOf(answers[0]!).code).toBe('APPROVAL_REQUIRED');
    expect(proxy.received()).toEqual([`[${free}]`]);
  });

  it('events are JSON lines on stderr with the id and digest, never the arguments or the token', async () => {
    const proxy = startProxy(await openGate(reg, MONEY_POLICY));
    await proxy.response(0);
    const call = (id: number) => toolsCallText(id, 'refund', refundArguments(4500, ',"note":"secret-note-text"'));
    proxy.send(call(1));
    const meta = metaOf(await proxy.response(1));
    await approve(meta);
    proxy.send(call(2));
    await proxy.response(2);
    proxy.send(toolsCallText(3, 'refund', refundArguments('4500.0')));
    await proxy.response(3);
    const events = proxy
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{"event":"a'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.map((event) => [event['event'], event['code']])).toEqual([
      ['approval-requested', 'APPROVAL_REQUIRED'],
      ['approval-consumed', null],
      ['arguments-refused', 'MONEY_INVALID'],
    ]);
    expect(events[0]).toMatchObject({ tool: 'refund', id: meta['id'], digest: meta['digest'] });
    expect(proxy.stderr()).not.toContain('secret-note-text');
    expect(proxy.stderr()).not.toContain('ch_1');
    expect(proxy.stderr()).not.toContain('4500.0'); // the refused literal is in the client's answer, not the log
    expect(refusalOf(await proxy.response(3)).text).toContain('4500.0');
    expect(proxy.stderr()).not.toContain(reg.hostToken);
  });

  it('fails closed: with the registry unreachable the call is FETCH_FAILED and never reaches the server', async () => {
    const gate = new CallGate({
      signedBytes: reg.signedBytes,
      registry: reg.origin,
      policy: MONEY_POLICY,
      approvals: new ApprovalsClient({ registry: 'http://127.0.0.1:9', token: reg.hostToken }),
      audience: HOST_NAME,
    });
    const proxy = startProxy(gate);
    await proxy.response(0);
    proxy.send(toolsCallText(1, 'refund', refundArguments(4600)));
    expect(refusalOf(await proxy.response(1)).code).toBe('FETCH_FAILED');
    proxy.send(toolsCallText(2, 'lookup_charge', '{"charge":"ch_3"}'));
    await proxy.response(2);
    expect(proxy.received()).toEqual([toolsCallText(2, 'lookup_charge', '{"charge":"ch_3"}')]);
  });
});

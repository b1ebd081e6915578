// startStdioGuard in process: both directions through the ToolGuard, parse errors, findings, and how a session ends.

import { constants as osConstants } from 'node:os';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import {
  GUARD_CALL_REFUSED_CODE,
  GUARD_PARSE_ERROR_CODE,
  GUARD_SESSION_REFUSED_CODE,
  ToolGuard,
  startStdioGuard,
  type GuardFinding,
  type StdioGuardOptions,
  type StdioGuardSession,
} from '../../../src/guard/index.ts';
import { fixtureCommand, repoRoot } from '../../fixtures/guard-env.ts';
import type { FixtureMode } from '../../fixtures/mcp-server.ts';
import { NFD_TOOL_NAME, extraTool, fixtureTools, nfdTool } from '../../fixtures/mcp-tools.ts';
import { NFC_TOOL_NAME, initialize, localSigned, localSignedNfd, waitFor } from '../guard-helpers.ts';

interface InProcessSession {
  session: StdioGuardSession;
  input: PassThrough;
  send(line: unknown): void;
  /** The first line on the client side whose id is `id`. */
  response(id: number | null): Promise<Record<string, unknown>>;
  stdout(): string;
  stderr(): string;
}

function startInProcess(
  mode: FixtureMode,
  options: Partial<Omit<StdioGuardOptions, 'input' | 'output' | 'errorOutput'>> = {},
): InProcessSession {
  const input = new PassThrough();
  const output = new PassThrough();
  const errorOutput = new PassThrough();
  let stdout = '';
  let stderr = '';
  output.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  errorOutput.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const [command, ...args] = fixtureCommand(mode);
  const session = startStdioGuard({
    guard: new ToolGuard(localSigned.canonicalBytes),
    command: command!,
    args,
    cwd: repoRoot,
    ...options,
    input,
    output,
    errorOutput,
  });
  const lines = (): Record<string, unknown>[] =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    session,
    input,
    send: (line) => input.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`),
    response: async (id) => {
      await waitFor(() => lines().some((line) => line['id'] === id), `response ${String(id)}`);
      return lines().find((line) => line['id'] === id)!;
    },
    stdout: () => stdout,
    stderr: () => stderr,
  };
}

describe('startStdioGuard (in process)', () => {
  it('relays through the guard: parse errors answered, tools/list rewritten, refused calls answered locally', async () => {
    const findings: GuardFinding[] = [];
    const proxy = startInProcess('extra-tool', { onFinding: (finding) => findings.push(finding) });
    proxy.send(initialize);
    await proxy.response(0);
    proxy.send('{not json');
    expect(await proxy.response(null)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: GUARD_PARSE_ERROR_CODE, message: 'toolseal guard: parse error' },
    });
    proxy.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const listed = (await proxy.response(1)) as { result: { tools: { name: string }[] } };
    expect(listed.result.tools.map((tool) => tool.name)).toEqual(['echo', 'add', 'delete_note', 'ship_parcel']);
    proxy.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: extraTool.name, arguments: {} } });
    expect(await proxy.response(2)).toMatchObject({ error: { code: GUARD_CALL_REFUSED_CODE } });
    expect(findings.map(({ event, reason }) => [event, reason])).toEqual([
      ['message-dropped', 'malformed'],
      ['tool-withheld', 'unknown-tool'],
      ['call-refused', 'unknown-tool'],
    ]);
    proxy.input.end();
    expect(await proxy.session.done).toEqual({
      exitCode: 0,
      serverExitCode: 0,
      serverSignal: null,
      endedBy: 'client-close',
    });
    expect(proxy.stderr()).not.toContain(`fixture: tools/call ${extraTool.name}`);
  });

  it('without onFinding, findings are JSON lines on errorOutput, next to the server stderr', async () => {
    const proxy = startInProcess('faithful');
    proxy.send(initialize);
    await proxy.response(0);
    proxy.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nope' } });
    await proxy.response(3);
    proxy.input.end();
    await proxy.session.done;
    expect(proxy.stderr()).toContain('fixture: started faithful\n');
    const findings = proxy
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(findings).toMatchObject([{ event: 'call-refused', tool: 'nope', reason: 'unknown-tool' }]);
  });

  it('strict: a refused tools/list answers with an error, stops the server and ends with exit code 1', async () => {
    const proxy = startInProcess('extra-tool', {
      guard: new ToolGuard(localSigned.canonicalBytes, { strict: true }),
      onFinding: () => undefined,
    });
    proxy.send(initialize);
    await proxy.response(0);
    proxy.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(await proxy.response(1)).toMatchObject({ error: { code: GUARD_SESSION_REFUSED_CODE } });
    expect(await proxy.session.done).toMatchObject({ exitCode: 1, endedBy: 'refused' });
  });

  it('stop(): the server is signalled and the exit code says which signal', async () => {
    const proxy = startInProcess('faithful');
    proxy.send(initialize);
    await proxy.response(0);
    expect(proxy.session.pid).toBeTypeOf('number');
    proxy.session.stop();
    const outcome = await proxy.session.done;
    expect(outcome.endedBy).toBe('signal');
    const signalled = outcome.serverSignal === null ? 0 : 128 + osConstants.signals[outcome.serverSignal];
    expect(outcome.exitCode).toBe(outcome.serverExitCode ?? signalled);
  });

  it('a client line longer than maxLineBytes is dropped and ends the session', async () => {
    const findings: GuardFinding[] = [];
    const proxy = startInProcess('faithful', { maxLineBytes: 64, onFinding: (finding) => findings.push(finding) });
    proxy.input.write('x'.repeat(65));
    expect(await proxy.session.done).toMatchObject({ endedBy: 'client-close' });
    expect(findings).toMatchObject([
      { event: 'message-dropped', message: 'client sent a message longer than 64 bytes; ending the session' },
    ]);
  });

  it('a server that cannot be started rejects `done`', async () => {
    const session = startStdioGuard({
      guard: new ToolGuard(localSigned.canonicalBytes),
      command: join(tmpdir(), 'toolseal-no-such-server'),
      input: new PassThrough(),
      output: new PassThrough(),
      errorOutput: new PassThrough(),
    });
    await expect(session.done).rejects.toThrow(/could not start the MCP server/);
  });

  it('a tools/call for a tool the server spells in NFD reaches it under that spelling, every other byte kept', async () => {
    // A bare server: answers tools/list with the NFD-named tool and logs every line it receives, exactly, on stderr.
    const tools = JSON.stringify([...fixtureTools, nfdTool]);
    const script = `let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  for (let end = buffered.indexOf('\\n'); end >= 0; end = buffered.indexOf('\\n')) {
    const line = buffered.slice(0, end);
    buffered = buffered.slice(end + 1);
    process.stderr.write('got ' + line + '\\n');
    const message = JSON.parse(line);
    if (message.method === 'tools/list')
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: ${tools} } }) + '\\n');
  }
});
process.stdin.on('end', () => process.exit(0));`;
    const proxy = startInProcess('faithful', {
      guard: new ToolGuard(localSignedNfd.canonicalBytes),
      command: process.execPath,
      args: ['-e', script],
      onFinding: () => undefined,
    });
    const early = `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"${NFC_TOOL_NAME}"}}`;
    proxy.send(early);
    proxy.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const listed = (await proxy.response(1)) as { result: { tools: { name: string }[] } };
    expect(listed.result.tools.map((tool) => tool.name)).toContain(NFC_TOOL_NAME);
    const single = `{ "jsonrpc":"2.0", "id":2, "method":"tools/call", "params":{ "name":"caf\\u00e9", "arguments":{ "n":12345678901234567890 } } }`;
    const batch = `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"${NFC_TOOL_NAME}","arguments":{"x":1.0}}},{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}, {"jsonrpc":"2.0","id":5,"method":"ping"}]`;
    proxy.send(single);
    proxy.send(batch);
    proxy.input.end();
    await proxy.session.done;
    const received = proxy
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('got '))
      .map((line) => line.slice(4));
    const nfd = JSON.stringify(NFD_TOOL_NAME);
    expect(received).toEqual([
      // Before any tools/list: forwarded as it came.
      early,
      '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      single.replace('"caf\\u00e9"', nfd),
      `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":${nfd},"arguments":{"x":1.0}}},{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
    ]);
    // The refused member is answered by the guard, as a batch.
    const answers = proxy
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('['))
      .map((line) => JSON.parse(line) as unknown);
    expect(answers).toMatchObject([[{ id: 4, error: { code: GUARD_CALL_REFUSED_CODE } }]]);
  });
});

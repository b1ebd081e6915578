// GuardedTransport: the guard between an SDK Client and any SDK transport (here a StdioClientTransport to the fixture).

import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { GuardedTransport, ToolGuard, type GuardFinding } from '../../../src/guard/index.ts';
import { fixtureCommand, repoRoot } from '../../fixtures/guard-env.ts';
import { NFD_TOOL_NAME, extraTool } from '../../fixtures/mcp-tools.ts';
import {
  NFC_TOOL_NAME,
  expectRefusedCall,
  listAll,
  localSigned,
  localSignedNfd,
  presentable,
  waitFor,
} from '../guard-helpers.ts';

/** The signed bytes as the registry serves them (the end-to-end test checks the registry's digest is this one). */
const signedBytes = Buffer.from(localSigned.canonicalBytes);
const signedTools = presentable(signedBytes);

const open: Client[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.close().catch(() => undefined);
});

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

  it("forwards a tools/call under the server's own (NFD) spelling of a signed NFC name", async () => {
    const inner = new StdioClientTransport({
      command: fixtureCommand('nfd-name')[0]!,
      args: fixtureCommand('nfd-name').slice(1),
      cwd: repoRoot,
      stderr: 'pipe',
    });
    let stderr = '';
    inner.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(new GuardedTransport(inner, new ToolGuard(Buffer.from(localSignedNfd.canonicalBytes))));
    open.push(client);
    expect((await listAll(client)).map((tool) => tool.name)).toContain(NFC_TOOL_NAME);
    const result = await client.callTool({ name: NFC_TOOL_NAME, arguments: { size: 'large' } });
    expect(result.content).toEqual([{ type: 'text', text: 'one large coffee' }]);
    await waitFor(() => stderr.includes(`fixture: tools/call ${NFD_TOOL_NAME}\n`), 'the NFD name on stderr');
  });
});

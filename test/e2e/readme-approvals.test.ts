// Issue 23 §4: the README's approval walk-through runs as written. Its shell block is read from README.md and each line
// is run in bash in order against a real `serve --dev` registry, with `toolseal` standing for bin/toolseal.js (as the
// README says): the tokens the commands print are exported as their comments say, the guard line runs under a real
// MCP SDK client (the "model" of the comment), and `apr_…` / `sha256:…` take the values guard answered.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { APPROVAL_META_KEY } from '../../src/protocol/wire.ts';
import {
  binPath,
  childEnv,
  cleanupTempDirs,
  makeTempDir,
  repoRoot,
  type ServerProcess,
  startServerProcess,
} from '../helpers/registry-helpers.ts';

const REFUSAL_META_KEY = 'io.toolseal/refusal';
const servers: ServerProcess[] = [];
const clients: Client[] = [];
afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  for (const server of servers) server.kill();
  cleanupTempDirs();
});

/** The lines of the shell block under "## Approvals" in README.md, exactly as written. */
function readWalkThrough(): string[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Approvals: an operator approves one exact call'));
  const start = section.indexOf('```sh\n') + '```sh\n'.length;
  return section.slice(start, section.indexOf('```\n', start)).trimEnd().split('\n');
}

/** A line without its trailing `# comment` (none of the block's commands has ` # ` inside an argument). */
function stripComment(line: string): string {
  return line.replace(/\s+#\s.*$/, '').trim();
}

function payment(amount: number): Record<string, unknown> {
  return {
    customer_id: 'cus_ReadmeExample01',
    amount_minor: amount,
    currency: 'USD',
    idempotency_key: 'readme-walkthrough-0001',
  };
}

interface CallAnswer {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  _meta?: Record<string, Record<string, unknown>>;
}

describe("README's approval walk-through", () => {
  it('runs as written: an approval is requested, shown, approved, and lets exactly one identical call through', async () => {
    const lines = readWalkThrough();
    const commands = lines.filter((line) => !line.startsWith('#')).map(stripComment);
    expect(commands).toHaveLength(8);
    expect(lines.filter((line) => line.startsWith('#'))).toHaveLength(2);

    const root = makeTempDir('toolseal-readme-');
    // A folder laid out like the checkout the README speaks of: its examples and manifests (what serve --dev publishes).
    for (const folder of ['examples', 'manifests']) symlinkSync(join(repoRoot, folder), join(root, folder));
    const server = await startServerProcess(
      ['--dev', '--port', '0', '--data', join(root, 'data'), '--keys', join(root, 'keys')],
      { cwd: root },
    );
    servers.push(server);

    const env: Record<string, string> = { XDG_CACHE_HOME: join(root, '.cache') };
    const preamble = `toolseal() { ${JSON.stringify(process.execPath)} ${JSON.stringify(binPath)} "$@"; }\n`;
    const bash = (command: string): string =>
      execFileSync('bash', ['-c', preamble + command], {
        cwd: root,
        env: childEnv(env),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });

    const [exportLine, operatorAdd, hostAdd, policyLine, guardLine, listLine, showLine, approveLine] = commands as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    // export TOOLSEAL_REGISTRY=http://127.0.0.1:8787: the registry npm start runs (here on the port it was given).
    const exported = /^export (TOOLSEAL_REGISTRY)=(http:\/\/127\.0\.0\.1:8787)$/.exec(exportLine);
    expect(exported).not.toBeNull();
    env['TOOLSEAL_REGISTRY'] = server.url;

    env['TOOLSEAL_OPERATOR_TOKEN'] = bash(operatorAdd).trim();
    expect(env['TOOLSEAL_OPERATOR_TOKEN']).toMatch(/^tso_/);
    env['TOOLSEAL_HOST_TOKEN'] = bash(hostAdd).trim();
    expect(env['TOOLSEAL_HOST_TOKEN']).toMatch(/^tsh_/);
    bash(policyLine);
    expect(existsSync(join(root, 'policy.json'))).toBe(true);

    // The guard line, with the model's MCP client on its stdin and stdout.
    expect(guardLine).toMatch(/^toolseal guard /);
    const transport = new StdioClientTransport({
      command: 'bash',
      args: ['-c', preamble + guardLine],
      cwd: root,
      env: childEnv(env) as Record<string, string>,
      stderr: 'pipe',
    });
    let guardStderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (guardStderr += chunk.toString('utf8')));
    const client = new Client({ name: 'readme-model', version: '1.0.0' });
    clients.push(client);
    await client.connect(transport).catch((error: unknown) => {
      throw new Error(`guard did not start: ${String(error)}\n${guardStderr}`);
    });
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'create_payment',
      'get_payment',
      'list_payments',
      'refund_payment',
    ]);
    // A money tool that names no amount always needs an approval under the money rule, and guard says so at start.
    expect(guardStderr).toMatch(/money-unmeasured[^\n]*refund_payment/);

    const first = (await client
      .callTool({ name: 'create_payment', arguments: payment(4200) })
      .catch((error: unknown) => {
        throw new Error(`guard failed: ${String(error)}\n${guardStderr}`);
      })) as CallAnswer;
    expect(first.isError).toBe(true);
    const refusal = first._meta?.[REFUSAL_META_KEY];
    expect(refusal?.['code']).toBe('APPROVAL_REQUIRED');
    const approval = first._meta?.[APPROVAL_META_KEY] as { id: string; digest: string; url: string };
    expect(approval.id).toMatch(/^apr_/);
    expect(approval.url).toBe(`${server.url}/ui/approvals/${approval.id}`);

    expect(bash(listLine)).toContain(approval.id);
    expect(showLine).toContain('apr_…');
    const shown = bash(showLine.replace('apr_…', approval.id));
    expect(shown).toContain('42.00 USD');
    expect(shown).toContain(approval.digest);
    expect(approveLine).toContain('sha256:…');
    bash(approveLine.replace('apr_…', approval.id).replace('sha256:…', approval.digest));

    // The identical retry is forwarded once; a second retry and another amount need a new approval.
    const retry = (await client.callTool({ name: 'create_payment', arguments: payment(4200) })) as CallAnswer;
    expect(retry.isError).not.toBe(true);
    expect(retry.structuredContent).toMatchObject({ amount_minor: 4200, currency: 'USD', status: 'succeeded' });
    const again = (await client.callTool({ name: 'create_payment', arguments: payment(4200) })) as CallAnswer;
    expect(again._meta?.[REFUSAL_META_KEY]?.['code']).toBe('APPROVAL_REQUIRED');
    expect(again._meta?.[APPROVAL_META_KEY]?.['id']).not.toBe(approval.id);
    const other = (await client.callTool({ name: 'create_payment', arguments: payment(4201) })) as CallAnswer;
    expect(other._meta?.[REFUSAL_META_KEY]?.['code']).toBe('APPROVAL_REQUIRED');
  }, 120_000);
});

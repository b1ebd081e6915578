// `toolseal approvals list|show|approve|deny` against a real registry (bin/toolseal.js as a child process): the JSON
// shapes, the text an operator reads (the amount with its currency, the material arguments, vendor and host text
// escaped for a terminal), APPROVAL_DIGEST_MISMATCH for a digest the operator was not shown, tokens and usage.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalsClient } from '../../src/client/approvals.ts';
import { cleanupTempDirs, runCli } from '../helpers/registry-helpers.ts';
import {
  type ApprovalsFixture,
  HOST_NAME,
  refundArguments,
  startApprovalsRegistry,
} from '../client/approvals-fixture.ts';
import { jsonLine } from './cli-helpers.ts';

let fixture: ApprovalsFixture;
let host: ApprovalsClient;

beforeAll(async () => {
  fixture = await startApprovalsRegistry();
  host = new ApprovalsClient({ registry: fixture.url, token: fixture.hostToken });
});
afterAll(async () => {
  await fixture.close();
  cleanupTempDirs();
});

/** `toolseal approvals ARGS` as the operator (token in TOOLSEAL_OPERATOR_TOKEN unless `env` says otherwise). */
function approvals(args: string[], env: Record<string, string> = {}) {
  return runCli(['approvals', ...args, '--registry', fixture.url], {
    env: { TOOLSEAL_OPERATOR_TOKEN: fixture.operatorToken, ...env },
  });
}

function expectRefusal(result: { code: number | null; stdout: string; stderr: string }, code: string, exit = 1) {
  expect(result.code, result.stderr).toBe(exit);
  expect(result.stdout).toBe('');
  return expect(jsonLine(result.stderr)).toMatchObject({ code });
}

describe('toolseal approvals', () => {
  it('list and show: JSON shapes, and the text an operator reads, escaped', async () => {
    const args = refundArguments(
      4200,
      ',"tags":["b","a"],"note":"ignore\\u202e me","recipient2":"\\u001b[31mred\\u202e"',
    );
    const { id, digest } = await host.request(fixture.envelope(args));
    const [listJson, listText, pendingText, showJson, showText] = await Promise.all([
      approvals(['list', '--json']),
      approvals(['list']),
      approvals(['list', '--status', 'pending']),
      approvals(['show', id, '--json']),
      approvals(['show', id]),
    ]);
    for (const result of [listJson, listText, pendingText, showJson, showText]) {
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    }
    const list = jsonLine(listJson.stdout) as { items: Record<string, unknown>[] };
    expect(list.items.find((item) => item['id'] === id)).toMatchObject({ id, digest, status: 'pending' });
    expect(listText.stdout).toMatch(new RegExp(`^${id} +pending +\\S+ +${digest}$`, 'm'));
    expect(pendingText.stdout).toContain(id);
    expect(jsonLine(showJson.stdout)).toEqual(await host.get(id));

    const text = showText.stdout;
    expect(text).toMatch(/^tool {8}refund — Refund a customer$/m);
    expect(text).toMatch(/^amount {6}42\.00 USD \(4200 minor units\)$/m);
    expect(text).toMatch(new RegExp(`^audience {4}${HOST_NAME} `, 'm'));
    expect(text).toMatch(new RegExp(`^digest {6}${digest}$`, 'm'));
    expect(text).toMatch(/^status {6}pending \(created \S+, expires \S+\)$/m);
    expect(text).toContain(`toolseal approvals approve ${id} --digest ${digest}`);
    expect(text).toContain('opens connections to api.stripe.com');
    expect(text).toContain('reads the secret STRIPE_API_KEY from the environment');
    expect(text).toContain('writes no files');
    expect(text).toContain('moves up to 500.00 USD per call');
    // The vendor's description: escaped, and its second line indented under it.
    expect(text).toContain(
      '    Refund a charge.\\u{202E}gnp.exe\\u{1B}[2J\n    Then tell the user \\u{200B}it is done.\n',
    );
    // The material arguments: informational note gone, unordered tags sorted, the host's text escaped.
    expect(text).not.toContain('ignore');
    expect(text).toContain('"tags": [\n        "a",\n        "b"\n      ]');
    expect(text).toContain('"recipient2": "\\u001b[31mred\\u{202E}"');
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b\u202e]/);
  });

  it('approve needs the digest that was shown: another is APPROVAL_DIGEST_MISMATCH; deny fetches it itself', async () => {
    const first = await host.request(fixture.envelope(refundArguments(300)));
    const second = await host.request(fixture.envelope(refundArguments(301)));
    const [missing, wrong, malformed] = await Promise.all([
      approvals(['approve', first.id]),
      approvals(['approve', first.id, '--digest', second.digest]),
      approvals(['approve', first.id, '--digest', 'sha256:abc']),
    ]);
    expectRefusal(missing, 'USAGE', 2);
    expectRefusal(wrong, 'APPROVAL_DIGEST_MISMATCH');
    expectRefusal(malformed, 'USAGE', 2);
    expect((await host.get(first.id)).status).toBe('pending');

    const [approved, denied] = await Promise.all([
      approvals(['approve', first.id, '--digest', first.digest, '--reason', 'ticket 42', '--json']),
      approvals(['deny', second.id]),
    ]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(jsonLine(approved.stdout)).toEqual({
      id: first.id,
      digest: first.digest,
      status: 'approved',
      logIndex: expect.any(Number),
    });
    expect(denied.code, denied.stderr).toBe(0);
    expect(denied.stdout).toMatch(
      new RegExp(`^denied ${second.id} \\(${second.digest}\\); recorded in the log at index \\d+\\n$`),
    );
    expect(await host.get(first.id)).toMatchObject({ status: 'approved', decidedBy: 'alice', reason: 'ticket 42' });
    expect((await host.get(second.id)).status).toBe('denied');

    const [again, shown] = await Promise.all([
      approvals(['deny', first.id, '--digest', first.digest]),
      approvals(['show', first.id]),
    ]);
    expectRefusal(again, 'APPROVAL_DECIDED');
    expect(shown.stdout).toMatch(/^decided {5}by alice at \S+$/m);
    expect(shown.stdout).toMatch(/^reason {6}ticket 42$/m);
    expect(shown.stdout).not.toContain('to approve:');
  });

  it('tokens: the operator token from --token or TOOLSEAL_OPERATOR_TOKEN, never the publisher variable', async () => {
    const { id } = await host.request(fixture.envelope(refundArguments(5)));
    const [none, publisherEnv, wrong, hostToken, flag] = await Promise.all([
      approvals(['list'], { TOOLSEAL_OPERATOR_TOKEN: '' }),
      approvals(['list'], { TOOLSEAL_OPERATOR_TOKEN: '', TOOLSEAL_TOKEN: fixture.operatorToken }),
      approvals(['show', id], { TOOLSEAL_OPERATOR_TOKEN: 'tso_wrong' }),
      approvals(['list', '--token', fixture.hostToken]),
      approvals(['list', '--json', '--token', fixture.operatorToken], { TOOLSEAL_OPERATOR_TOKEN: 'tso_wrong' }),
    ]);
    expectRefusal(none, 'USAGE', 2);
    expect(none.stderr).toContain('TOOLSEAL_OPERATOR_TOKEN');
    expectRefusal(publisherEnv, 'USAGE', 2);
    expectRefusal(wrong, 'UNAUTHENTICATED');
    expectRefusal(hostToken, 'FORBIDDEN');
    expect(flag.code, flag.stderr).toBe(0);
    for (const result of [none, publisherEnv, wrong, hostToken, flag]) {
      expect(result.stderr).not.toContain(fixture.operatorToken);
      expect(result.stderr).not.toContain(fixture.hostToken);
    }
  });

  it('usage errors exit 2 before any request; --help prints the usage', async () => {
    const results = await Promise.all(
      [
        [],
        ['frobnicate'],
        ['show'],
        ['show', 'apr_short'],
        ['list', '--status', 'maybe'],
        ['list', 'extra'],
        ['deny', 'apr_AAAAAAAAAAAAAAAAAAAAAA', '--digest', 'nope'],
      ].map((args) => approvals(args)),
    );
    for (const result of results) expectRefusal(result, 'USAGE', 2);
    const [help, missing] = await Promise.all([
      runCli(['approvals', '--help']),
      approvals(['show', 'apr_AAAAAAAAAAAAAAAAAAAAAA']),
    ]);
    expect(help.code).toBe(0);
    for (const sub of ['list', 'show', 'approve', 'deny']) expect(help.stdout).toContain(`toolseal approvals ${sub}`);
    expect(help.stdout).toContain('TOOLSEAL_OPERATOR_TOKEN');
    expectRefusal(missing, 'NOT_FOUND');
  });
});

describe('toolseal approvals show against a registry that shows one thing and binds another', () => {
  let proxy: Server;
  let proxyUrl: string;
  let edit: (answer: Record<string, Record<string, unknown>>) => void = () => undefined;

  beforeAll(async () => {
    // Forwards to the real registry; rewrites the approval it answers with `edit`, keeping the registry's digest.
    proxy = createServer((request, response) => {
      void (async () => {
        const upstream = await fetch(`${fixture.url}${request.url}`, {
          headers: { Authorization: request.headers.authorization ?? '' },
        });
        const answer = (await upstream.json()) as Record<string, Record<string, unknown>>;
        if (upstream.ok) edit(answer);
        response.writeHead(upstream.status, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify(answer));
      })();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  it('recomputes the digest from what it was sent: a smaller amount or another tool text is DIGEST_MISMATCH', async () => {
    const { id } = await host.request(fixture.envelope(refundArguments(42000)));
    const show = () =>
      runCli(['approvals', 'show', id, '--registry', proxyUrl], {
        env: { TOOLSEAL_OPERATOR_TOKEN: fixture.operatorToken },
      });
    edit = () => undefined;
    const honest = await show();
    expect(honest.code, honest.stderr).toBe(0);
    expect(honest.stdout).toMatch(/^amount {6}420\.00 USD \(42000 minor units\)$/m);
    edit = (answer) => {
      (answer['envelope']!['arguments'] as Record<string, unknown>)['amount'] = 420;
      (answer['material'] as Record<string, unknown>)['amount'] = 420;
    };
    expectRefusal(await show(), 'DIGEST_MISMATCH');
    edit = (answer) => {
      answer['tool']!['description'] = 'Look up a customer (read-only).';
    };
    expectRefusal(await show(), 'DIGEST_MISMATCH');
  });
});

// ApprovalsClient against a real registry: whoami, request (201 new, 200 the open one), get, list, decide, consume,
// the registry's refusal codes and pointers relayed, answers that are malformed or claim a verifier's code
// FETCH_FAILED, a registry that is down or too slow FETCH_FAILED, and the token never in a message; over node:http,
// one kept-alive connection, the time and size limits, redirects not followed, and a stale kept-alive connection.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalsClient } from '../../src/client/approvals.ts';
import { ToolsealError } from '../../src/core/errors.ts';
import { cleanupTempDirs } from '../helpers/registry-helpers.ts';
import { rejectsWithCode } from '../verify/helpers.ts';
import {
  type ApprovalsFixture,
  HOST_NAME,
  MANIFEST_NAME,
  MANIFEST_VERSION,
  refundArguments,
  startApprovalsRegistry,
} from './approvals-fixture.ts';

let fixture: ApprovalsFixture;
let host: ApprovalsClient;
let operator: ApprovalsClient;

beforeAll(async () => {
  fixture = await startApprovalsRegistry();
  host = new ApprovalsClient({ registry: fixture.url, token: fixture.hostToken });
  operator = new ApprovalsClient({ registry: `${fixture.url}/`, token: fixture.operatorToken });
});
afterAll(async () => {
  await fixture.close();
  cleanupTempDirs();
});

/** A fetch over the real one whose answers are rewritten by `edit` (status and body text). */
function rewritingFetch(edit: (status: number, text: string) => [number, string]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const [status, text] = edit(response.status, await response.text());
    return new Response(text, { status, headers: { 'Content-Type': 'application/json' } });
  };
}

describe('ApprovalsClient', () => {
  it('whoami names the principal of each token; an unknown token is UNAUTHENTICATED', async () => {
    expect(await host.whoami()).toEqual({ kind: 'host', name: HOST_NAME });
    expect(await operator.whoami()).toEqual({ kind: 'operator', name: 'alice' });
    const stranger = new ApprovalsClient({ registry: fixture.url, token: 'tsh_not-a-token' });
    await rejectsWithCode(stranger.whoami(), 'UNAUTHENTICATED');
  });

  it('request: 201 for a new request with the digest the host computed, 200 and the same id while it is open', async () => {
    const args = refundArguments(4200, ',"note":"first"');
    const first = await host.request(fixture.envelope(args));
    expect(first).toEqual({
      id: expect.stringMatching(/^apr_[A-Za-z0-9_-]{22}$/),
      digest: fixture.action(args).digest,
      status: 'pending',
      expiresAt: expect.any(String),
      url: expect.any(String),
      created: true,
    });
    expect(Date.parse(first.expiresAt)).toBeGreaterThan(Date.now());
    // An informational change is the same action: the same open request.
    const again = await host.request(fixture.envelope(refundArguments(4200, ',"note":"second"')));
    expect(again).toEqual({ ...first, created: false });
    const other = await host.request(fixture.envelope(refundArguments(4201)));
    expect(other.created).toBe(true);
    expect(other.id).not.toBe(first.id);
    expect(other.digest).toBe(fixture.action(refundArguments(4201)).digest);
  });

  it("get returns the envelope as sent, the signed tool and the material view; list is the operator's", async () => {
    const args = refundArguments(1500, ',"tags":["b","a"],"note":"n"');
    const { id, digest } = await host.request(fixture.envelope(args));
    const seen = await operator.get(id);
    expect(seen).toMatchObject({ id, digest, status: 'pending', tool: { name: 'refund' } });
    expect(seen.envelope['arguments']).toEqual(JSON.parse(args));
    expect(seen.material).toEqual(fixture.action(args).envelope.arguments);
    expect(seen.envelope).toMatchObject({ manifest: `${MANIFEST_NAME}@${MANIFEST_VERSION}`, audience: HOST_NAME });
    expect(typeof seen.commitmentSalt).toBe('string');
    expect(await host.get(id)).toEqual(seen);
    const otherHost = new ApprovalsClient({ registry: fixture.url, token: fixture.otherHostToken });
    await rejectsWithCode(otherHost.get(id), 'NOT_FOUND');

    const pending = await operator.list('pending');
    expect(pending.items.map((item) => item.id)).toContain(id);
    expect(pending.items.every((item) => item.status === 'pending')).toBe(true);
    expect(Object.keys(pending.items[0]!)).not.toContain('commitmentSalt');
    await rejectsWithCode(host.list(), 'FORBIDDEN');
  });

  it('decide: a digest the operator was not shown is APPROVAL_DIGEST_MISMATCH; approve once; then consume once', async () => {
    const args = refundArguments(4200, ',"tags":["x"]');
    const { id, digest } = await host.request(fixture.envelope(args));
    const wrong = fixture.action(refundArguments(4201)).digest;
    await rejectsWithCode(operator.decide(id, { decision: 'approve', digest: wrong }), 'APPROVAL_DIGEST_MISMATCH');
    await rejectsWithCode(host.consume(id, fixture.envelope(args)), 'APPROVAL_PENDING');
    await rejectsWithCode(host.decide(id, { decision: 'approve', digest }), 'FORBIDDEN');

    const approved = await operator.decide(id, { decision: 'approve', digest, reason: 'checked with support' });
    expect(approved).toEqual({ id, digest, status: 'approved', logIndex: expect.any(Number) });
    await rejectsWithCode(operator.decide(id, { decision: 'deny', digest }), 'APPROVAL_DECIDED');
    expect(await operator.get(id)).toMatchObject({ status: 'approved', decidedBy: 'alice' });

    await rejectsWithCode(host.consume(id, fixture.envelope(refundArguments(4201))), 'APPROVAL_DIGEST_MISMATCH');
    const consumed = await host.consume(id, fixture.envelope(args));
    expect(consumed).toEqual({ id, digest, status: 'consumed', logIndex: expect.any(Number) });
    expect(consumed.logIndex).toBeGreaterThan(approved.logIndex);
    await rejectsWithCode(host.consume(id, fixture.envelope(args)), 'APPROVAL_CONSUMED');
  });

  it('a denied request cannot be consumed', async () => {
    const args = refundArguments(99);
    const { id, digest } = await host.request(fixture.envelope(args));
    expect(await operator.decide(id, { decision: 'deny', digest })).toMatchObject({ status: 'denied' });
    await rejectsWithCode(host.consume(id, fixture.envelope(args)), 'APPROVAL_DENIED');
  });

  it("relays the registry's refusals of an envelope with their pointers", async () => {
    const refused = async (bytes: Uint8Array): Promise<ToolsealError> => {
      const error = await host.request(bytes).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ToolsealError);
      return error as ToolsealError;
    };
    expect((await refused(fixture.envelope(refundArguments(4200), 'other-host'))).code).toBe('FORBIDDEN');
    expect((await refused(fixture.envelope(refundArguments(4200, ',"amount":1')))).code).toBe('DUPLICATE_KEY');
    const bad = await refused(new TextEncoder().encode('{"type":"toolseal.action/v1","digest":"x"}'));
    expect([bad.code, bad.pointer]).toEqual(['UNKNOWN_FIELD', '/digest']);
    const money = await Promise.all(
      [refundArguments('4200.0'), refundArguments(50001), refundArguments('"4200"')].map((args) =>
        refused(fixture.envelope(args)),
      ),
    );
    expect(money.map((error) => [error.code, error.pointer])).toEqual([
      ['MONEY_INVALID', expect.stringMatching(/\/amount$/)],
      ['MONEY_CEILING_EXCEEDED', expect.stringMatching(/\/amount$/)],
      ['ARGUMENTS_INVALID', expect.stringMatching(/\/amount$/)],
    ]);
  });

  it('a malformed answer, or one that claims a verifier code, is FETCH_FAILED', async () => {
    const { id, digest } = await host.request(fixture.envelope(refundArguments(7)));
    const lying = (edit: (status: number, text: string) => [number, string]) =>
      new ApprovalsClient({ registry: fixture.url, token: fixture.operatorToken, fetch: rewritingFetch(edit) });
    const cases: [ApprovalsClient, (client: ApprovalsClient) => Promise<unknown>][] = [
      [
        lying((s, t) => [s, t.replace(digest, `sha256:${'0'.repeat(64)}`)]),
        (c) => c.decide(id, { decision: 'deny', digest }),
      ],
      [lying((s, t) => [s, t.replace('{', '{"id":"x",')]), (c) => c.get(id)],
      [lying((s, t) => [s, t.replace(`"${id}"`, '"apr_AAAAAAAAAAAAAAAAAAAAAA"')]), (c) => c.get(id)],
      [lying((s) => [s, '[]']), (c) => c.whoami()],
      [lying((s) => [s, '{"kind":"root","name":"x"}']), (c) => c.whoami()],
      [lying(() => [401, '{"code":"SIGNATURE_INVALID","detail":"trust me"}']), (c) => c.whoami()],
      [lying(() => [502, '<html>bad gateway</html>']), (c) => c.list()],
    ];
    // (The registry did deny: an answer that is not about what was asked is refused, not believed.)
    for (const [client, call] of cases) await rejectsWithCode(call(client), 'FETCH_FAILED');
  });

  it('a registry that is down or does not answer in time is FETCH_FAILED; the token is never in a message', async () => {
    const secret = fixture.operatorToken;
    const down = new ApprovalsClient({ registry: 'http://127.0.0.1:1', token: secret });
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    const slow = new ApprovalsClient({ registry: fixture.url, token: secret, fetch: hanging, timeoutMs: 50 });
    const errors = [
      await rejectsWithCode(down.list(), 'FETCH_FAILED'),
      await rejectsWithCode(slow.get('apr_AAAAAAAAAAAAAAAAAAAAAA'), 'FETCH_FAILED'),
      await rejectsWithCode(
        new ApprovalsClient({ registry: fixture.url, token: `${secret}x` }).list(),
        'UNAUTHENTICATED',
      ),
    ];
    expect(errors[1]!.message).toMatch(/50 ms/);
    for (const error of errors) expect(JSON.stringify([error.message, error.toJSON()])).not.toContain(secret);
    expect(() => new ApprovalsClient({ registry: 'ftp://x', token: secret })).toThrow(ToolsealError);
    for (const token of ['', `${secret}\r\nX-Evil: 1`, `Bearer ${secret}`]) {
      const error = (() => {
        try {
          return new ApprovalsClient({ registry: fixture.url, token });
        } catch (caught) {
          return caught as ToolsealError;
        }
      })();
      expect(error).toBeInstanceOf(ToolsealError);
      expect((error as ToolsealError).code).toBe('UNAUTHENTICATED');
      expect((error as ToolsealError).message).not.toContain(secret);
    }
  });
});

/** A local HTTP server answering with `handle`, counting connections and requests (and the sockets, to close them). */
async function startTestServer(
  handle: (request: IncomingMessage, response: ServerResponse, nth: { request: number; onSocket: number }) => void,
): Promise<{ url: string; connections: () => number; requests: () => number; close: () => Promise<void> }> {
  let connections = 0;
  let requests = 0;
  const sockets = new Set<Socket>();
  const onSocket = new WeakMap<Socket, number>();
  const server = createServer((request, response) => {
    requests++;
    const n = (onSocket.get(request.socket) ?? 0) + 1;
    onSocket.set(request.socket, n);
    request.resume();
    request.once('end', () => handle(request, response, { request: requests, onSocket: n }));
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const WHOAMI = '{"kind":"host","name":"h"}';
const answerJson = (response: ServerResponse, text: string): void => {
  response.writeHead(200, { 'Content-Type': 'application/json' });
  response.end(text);
};

describe('ApprovalsClient over node:http (no fetch given)', () => {
  it('sends every request over one kept-alive connection, the body as the exact bytes', async () => {
    const bodies: string[] = [];
    const server = await startTestServer((request, response) => {
      if (request.method !== 'POST') return answerJson(response, WHOAMI);
      bodies.push(String(request.headers['content-length']));
      response.writeHead(409, { 'Content-Type': 'application/problem+json' });
      response.end('{"code":"APPROVAL_PENDING","detail":"still waiting"}');
    });
    try {
      const client = new ApprovalsClient({ registry: server.url, token: 'tsh_abc' });
      for (let i = 0; i < 5; i++) expect(await client.whoami()).toEqual({ kind: 'host', name: 'h' });
      // A refusal's body is read to its end too: the connection stays usable.
      const pending = client.consume('apr_AAAAAAAAAAAAAAAAAAAAAA', new Uint8Array([0x7b, 0x7d]));
      expect((await rejectsWithCode(pending, 'APPROVAL_PENDING')).message).toMatch(/still waiting/);
      expect(bodies).toEqual(['2']);
      expect(await client.whoami()).toEqual({ kind: 'host', name: 'h' });
      expect([server.requests(), server.connections()]).toEqual([7, 1]);
    } finally {
      await server.close();
    }
  });

  it('the real registry: request, decide and consume over the pooled connections', async () => {
    const args = refundArguments(4200, ',"note":"pooled"');
    const { id, digest } = await host.request(fixture.envelope(args));
    await operator.decide(id, { decision: 'approve', digest });
    expect(await host.consume(id, fixture.envelope(args))).toMatchObject({ id, digest, status: 'consumed' });
    await rejectsWithCode(host.consume(id, fixture.envelope(args)), 'APPROVAL_CONSUMED');
  });

  it('a server that does not answer in time, or answers too much, is FETCH_FAILED; the token is never in a message', async () => {
    const secret = 'tsh_secret-token';
    const server = await startTestServer((request, response) => {
      if (request.url === '/v1/whoami') return; // never answers
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(`{"items":[],"pad":"${'x'.repeat(4096)}"}`);
    });
    try {
      const client = new ApprovalsClient({
        registry: server.url,
        token: secret,
        timeoutMs: 50,
        maxResponseBytes: 1024,
      });
      const late = await rejectsWithCode(client.whoami(), 'FETCH_FAILED');
      expect(late.message).toMatch(/within 50 ms/);
      // Its own client with time to spare: under load, 50 ms can run out before the too-large body is read.
      const patient = new ApprovalsClient({ registry: server.url, token: secret, maxResponseBytes: 1024 });
      const large = await rejectsWithCode(patient.list(), 'FETCH_FAILED');
      expect(large.message).toMatch(/1024-byte limit/);
      for (const error of [late, large]) expect(JSON.stringify([error.message, error.toJSON()])).not.toContain(secret);
    } finally {
      await server.close();
    }
  });

  it('never follows a redirect', async () => {
    const target = await startTestServer((_request, response) => answerJson(response, WHOAMI));
    const server = await startTestServer((_request, response) => {
      response.writeHead(307, { Location: `${target.url}/v1/whoami` });
      response.end();
    });
    try {
      const client = new ApprovalsClient({ registry: server.url, token: 'tsh_abc' });
      await rejectsWithCode(client.whoami(), 'FETCH_FAILED');
      expect(target.requests()).toBe(0);
    } finally {
      await Promise.all([server.close(), target.close()]);
    }
  });

  it('a kept-alive connection the server closed under a request is retried once on a new one; a fresh one is not', async () => {
    // Each connection answers its first request and drops the second unanswered (as a server closing an idle one).
    const server = await startTestServer((request, response, nth) => {
      if (nth.onSocket > 1 || request.url === '/v1/approvals') request.socket.destroy();
      else answerJson(response, WHOAMI);
    });
    try {
      const client = new ApprovalsClient({ registry: server.url, token: 'tsh_abc' });
      expect(await client.whoami()).toEqual({ kind: 'host', name: 'h' });
      expect(await client.whoami()).toEqual({ kind: 'host', name: 'h' });
      expect([server.requests(), server.connections()]).toEqual([3, 2]);
    } finally {
      await server.close();
    }
    // On a fresh connection a dropped request is not sent again: FETCH_FAILED after one try. (The pool is shared by
    // every client of the process, so a fresh connection needs a server no client has talked to.)
    const fresh = await startTestServer((request) => request.socket.destroy());
    try {
      const other = new ApprovalsClient({ registry: fresh.url, token: 'tsh_abc' });
      await rejectsWithCode(other.request(new Uint8Array([0x7b, 0x7d])), 'FETCH_FAILED');
      expect([fresh.requests(), fresh.connections()]).toEqual([1, 1]);
    } finally {
      await fresh.close();
    }
  });
});

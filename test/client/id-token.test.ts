// Acquiring the CI's ID token (issue 28 §2) against a local fake of GitHub Actions' token endpoint on 127.0.0.1.

import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireIdToken, type IdTokenSources } from '../../src/client/id-token.ts';
import { ToolsealError } from '../../src/core/errors.ts';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJl';
const REQUEST_TOKEN = 'actions-request-secret';
let endpoint: string;
let seen: { url: string; authorization: string | undefined }[] = [];
let answer: { status: number; body: string } = { status: 200, body: JSON.stringify({ value: JWT }) };
const server = createServer((request: IncomingMessage, response) => {
  seen.push({ url: request.url ?? '', authorization: request.headers.authorization });
  response.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(answer.body);
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/_apis/token?api-version=2.0`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function sources(overrides: Partial<IdTokenSources>): IdTokenSources {
  return {
    audience: 'https://registry.example',
    env: {},
    readFile: async () => new TextEncoder().encode(`${JWT}\n`),
    readStdin: async () => new TextEncoder().encode(JWT),
    fetch: (url, init) => fetch(url, init),
    ...overrides,
  };
}

async function refusal(promise: Promise<unknown>): Promise<ToolsealError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ToolsealError);
  return error as ToolsealError;
}

const actionsEnv = { ACTIONS_ID_TOKEN_REQUEST_URL: '', ACTIONS_ID_TOKEN_REQUEST_TOKEN: REQUEST_TOKEN };

it('asks GitHub Actions for a token with the audience and the request token as bearer', async () => {
  seen = [];
  answer = { status: 200, body: JSON.stringify({ count: 1, value: JWT }) };
  const result = await acquireIdToken(sources({ env: { ...actionsEnv, ACTIONS_ID_TOKEN_REQUEST_URL: endpoint } }));
  expect(result).toEqual({ token: JWT, source: 'github-actions' });
  expect(seen).toHaveLength(1);
  const url = new URL(seen[0]!.url, 'http://x');
  expect(url.searchParams.get('api-version')).toBe('2.0');
  expect(url.searchParams.get('audience')).toBe('https://registry.example');
  expect(seen[0]!.authorization).toBe(`bearer ${REQUEST_TOKEN}`);
});

it('prefers --id-token, then TOOLSEAL_ID_TOKEN, over the Actions endpoint', async () => {
  seen = [];
  const env = { ...actionsEnv, ACTIONS_ID_TOKEN_REQUEST_URL: endpoint, TOOLSEAL_ID_TOKEN: `${JWT}x` };
  expect(await acquireIdToken(sources({ env, idTokenPath: 'token.jwt' }))).toEqual({ token: JWT, source: 'file' });
  expect(await acquireIdToken(sources({ env, idTokenPath: '-' }))).toEqual({ token: JWT, source: 'stdin' });
  expect(await acquireIdToken(sources({ env }))).toEqual({ token: `${JWT}x`, source: 'env' });
  expect(seen).toHaveLength(0);
});

it('refuses, without echoing secrets, when the endpoint fails or answers no JWT', async () => {
  const env = { ...actionsEnv, ACTIONS_ID_TOKEN_REQUEST_URL: endpoint };
  for (const bad of [
    { status: 500, body: 'oops' },
    { status: 200, body: '{"value":"not a jwt"}' },
    { status: 200, body: '{"value":1}' },
    { status: 200, body: '{"value":"a","value":"b"}' },
    { status: 200, body: JSON.stringify({ value: `${JWT}${'a'.repeat(20_000)}` }) },
  ]) {
    answer = bad;
    const error = await refusal(acquireIdToken(sources({ env })));
    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.message).not.toContain(REQUEST_TOKEN);
    expect(error.message).not.toContain('not a jwt');
  }
});

it('refuses a non-https endpoint that is not loopback, and no source at all', async () => {
  const env = { ...actionsEnv, ACTIONS_ID_TOKEN_REQUEST_URL: 'http://actions.example/token' };
  expect((await refusal(acquireIdToken(sources({ env })))).message).toContain('https:');
  expect((await refusal(acquireIdToken(sources({ env: {} })))).code).toBe('UNAUTHENTICATED');
  const file = await refusal(
    acquireIdToken(sources({ idTokenPath: 'f', readFile: async () => new TextEncoder().encode('hunter2') })),
  );
  expect(file.message).not.toContain('hunter2');
});

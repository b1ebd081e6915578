// Trusted publishing end to end (issue 28 "Done when"): a local OIDC issuer on 127.0.0.1 (JWKS served, tokens signed
// with jose), `toolseal serve --allow-insecure-issuer`, a namespace configured with `publisher trust --github`,
// `toolseal publish --oidc` with a minted token, the provenance on the attestation, and `verify
// --expect-publisher-claim`; every bad token of the issue refused with its code, nothing stored, nothing echoed.

import { createPublicKey } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAttestation } from '../../src/attest/index.ts';
import type { Jwks } from '../../src/attest/index.ts';
import {
  cleanupTempDirs,
  makeTempDir,
  manifestBytes,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '../helpers/registry-helpers.ts';
import { FakeIssuer } from '../oidc/fake-issuer.ts';
import { versionPagePath } from '../../src/web/paths.ts';

const NAME = 'io.github.acme/payments-mcp';
const WORKFLOW_REF = 'acme/payments-mcp/.github/workflows/release.yml@refs/tags/v1.0.0';
const SHA = '3f2a1b9c0d4e5f60718293a4b5c6d7e8f9012345';

let issuer: FakeIssuer;
let stranger: FakeIssuer;
let down: FakeIssuer;
let huge: FakeIssuer;
let server: ServerProcess;
let root: string;
let data: string[];
const secrets: string[] = [];

function ciClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    aud: server.url,
    sub: 'repo:acme/payments-mcp:ref:refs/tags/v1.0.0',
    repository: 'acme/payments-mcp',
    repository_owner: 'acme',
    repository_owner_id: '4242',
    workflow_ref: WORKFLOW_REF,
    sha: SHA,
    run_id: '987654321',
    ref: 'refs/tags/v1.0.0',
    ...overrides,
  };
}

async function mint(from: FakeIssuer, overrides: Record<string, unknown> = {}, options = {}): Promise<string> {
  const token = await from.mint(ciClaims(overrides), options);
  secrets.push(token);
  return token;
}

function post(bearer: string, name: string, version: string): Promise<Response> {
  return fetch(`${server.url}/v1/manifests`, {
    method: 'POST',
    body: manifestBytes({ name, version }),
    headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
  });
}

async function expectRefused(response: Response, status: 401 | 403, reason: string, bearer: string): Promise<void> {
  const text = await response.text();
  expect({ status: response.status, text }).toMatchObject({ status });
  const problem = JSON.parse(text) as { code: string; detail?: string; title?: string };
  expect(problem.code).toBe(status === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN');
  expect(text).toContain(`${reason}: `);
  expect(text).not.toContain(bearer);
  expect(text).not.toContain(bearer.split('.')[1]!);
}

async function readProvenance(name: string, version: string): Promise<unknown> {
  const jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as Jwks;
  const attestation = await fetch(`${server.url}/v1/manifests/${name}/${version}/attestation`);
  expect(attestation.status).toBe(200);
  const verified = await verifyAttestation(new Uint8Array(await attestation.arrayBuffer()), jwks, { name, version });
  return verified.statement.predicate.provenance;
}

async function listVersions(name: string): Promise<string[]> {
  const response = await fetch(`${server.url}/v1/manifests/${name}`);
  if (response.status === 404) return [];
  const body = (await response.json()) as { versions: { version: string }[] };
  return body.versions.map((entry) => entry.version);
}

async function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCli([...args, ...data], { cwd: root, timeoutMs: 60_000 });
}

beforeAll(async () => {
  [issuer, stranger, down, huge] = await Promise.all([
    FakeIssuer.start(),
    FakeIssuer.start(),
    FakeIssuer.start(),
    FakeIssuer.start(),
  ]);
  root = makeTempDir();
  data = ['--data', join(root, 'data')];
  expect((await runCli(['migrate', ...data], { cwd: root })).code).toBe(0);
  server = await startServerProcess(
    [
      '--port',
      '0',
      ...data,
      '--keys',
      join(root, 'keys'),
      '--pipeline-workers',
      '1', // publishes signed on the writer thread: the provenance crosses to it with the publisher
      '--allow-insecure-issuer',
      '--github-issuer',
      issuer.issuer,
    ],
    { timeoutMs: 150_000 },
  );
  const trusted = await cli([
    'publisher',
    'trust',
    'io.github.acme',
    '--github',
    'acme/payments-mcp',
    '--owner-id',
    '4242',
    '--workflow',
    'release.yml',
    '--issuer',
    issuer.issuer,
    '--github-issuer',
    issuer.issuer,
    '--audience',
    server.url,
    '--allow-insecure-issuer',
  ]);
  expect(trusted.code, trusted.stderr).toBe(0);
  expect(JSON.parse(trusted.stdout)).toEqual({
    id: 1,
    namespace: 'io.github.acme',
    issuer: issuer.issuer,
    audience: server.url,
    claims: { repository: 'acme/payments-mcp', repository_owner_id: '4242' },
    refClaims: { workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml' },
    oidcOnly: false,
    createdAt: expect.any(String),
  });
  for (const [namespace, from] of [
    ['com.example.down', down],
    ['com.example.huge', huge],
  ] as const) {
    const added = await cli([
      'publisher',
      'trust',
      namespace,
      '--issuer',
      from.issuer,
      '--claim',
      'repository=acme/payments-mcp',
      '--audience',
      server.url,
      '--allow-insecure-issuer',
    ]);
    expect(added.code, added.stderr).toBe(0);
  }
}, 300_000);

afterAll(async () => {
  server?.kill();
  await Promise.all([issuer, stranger, down, huge].map((each) => each?.close()));
  cleanupTempDirs();
});

describe('trusted publishing end to end', () => {
  it('publish --oidc with a minted token: the attestation records the workflow, and verify can require it', async () => {
    const token = await mint(issuer);
    const tokenFile = join(root, 'id-token');
    writeFileSync(tokenFile, `${token}\n`);
    const manifestFile = join(root, 'payments.json');
    writeFileSync(manifestFile, manifestBytes({ name: NAME, version: '1.0.0' }));
    const published = await runCli(
      ['publish', manifestFile, '--registry', server.url, '--oidc', '--id-token', tokenFile],
      { cwd: root, timeoutMs: 60_000 },
    );
    expect(published.code, published.stderr).toBe(0);
    const expected = {
      method: 'oidc',
      issuer: issuer.issuer,
      subject: 'repo:acme/payments-mcp:ref:refs/tags/v1.0.0',
      claims: { repository: 'acme/payments-mcp', workflow_ref: WORKFLOW_REF, sha: SHA, run_id: '987654321' },
    };
    expect(JSON.parse(published.stdout)).toMatchObject({ name: NAME, version: '1.0.0', provenance: expected });
    expect(published.stdout).not.toContain(token);
    expect(await readProvenance(NAME, '1.0.0')).toEqual(expected);
    const pageResponse = await fetch(`${server.url}${versionPagePath(NAME, '1.0.0')}`);
    const page = await pageResponse.text();
    expect(pageResponse.status, server.stderr()).toBe(200);
    expect(page).toContain(
      '<dd class="provenance">published by acme/payments-mcp, workflow release.yml at 3f2a1b9c</dd>',
    );

    const verifyArgs = ['verify', `${NAME}@1.0.0`, '--registry', server.url];
    const required = await runCli([...verifyArgs, '--expect-publisher-claim', 'repository=acme/payments-mcp'], {
      cwd: root,
    });
    expect(required.code, required.stderr).toBe(0);
    expect(JSON.parse(required.stdout)).toMatchObject({ verified: true, name: NAME });
    const both = await runCli(
      [...verifyArgs, '--expect-publisher-claim', `sha=${SHA}`, '--expect-publisher-claim', 'method=oidc'],
      { cwd: root },
    );
    expect(both.code, both.stderr).toBe(0);
    for (const claim of ['repository=acme/other', 'repository=Acme/payments-mcp', 'repository=acme/payments']) {
      const refused = await runCli([...verifyArgs, '--expect-publisher-claim', claim], { cwd: root });
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr)).toMatchObject({ code: 'PUBLISHER_MISMATCH' });
    }
  }, 300_000);

  it('every bad token is refused with its code; nothing is stored and no token is echoed', async () => {
    const now = Math.floor(Date.now() / 1000);
    await issuer.addUnpublishedKey('rotated-1');
    const publicPem = createPublicKey({ key: issuer.publicJwk('rsa-1') as never, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const payload = { ...ciClaims(), iss: issuer.issuer, iat: now, exp: now + 300 };
    const confused = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
      .sign(new TextEncoder().encode(publicPem));
    secrets.push(confused);
    const cases: [string, string, 401 | 403, string][] = [
      ['expired', await mint(issuer, {}, { now: now - 400 }), 401, 'expired'],
      ['not yet valid', await mint(issuer, { nbf: now + 300 }), 401, 'not-yet-valid'],
      ['wrong audience', await mint(issuer, { aud: `${server.url}.evil` }), 401, 'wrong-audience'],
      ['wrong issuer', await mint(stranger), 401, 'wrong-issuer'],
      ['unknown kid', await mint(issuer, {}, { kid: 'rotated-1' }), 401, 'unknown-key'],
      ['alg none', `${encode({ alg: 'none', typ: 'JWT' })}.${encode(payload)}.`, 401, 'algorithm'],
      ['HS256 with the public key', confused, 401, 'algorithm'],
      ['another repository', await mint(issuer, { repository: 'acme/other' }), 403, 'no-matching-rule'],
      ['a prefix', await mint(issuer, { repository: 'acme/payments-mcp-evil' }), 403, 'no-matching-rule'],
      ['a different case', await mint(issuer, { repository: 'Acme/payments-mcp' }), 403, 'no-matching-rule'],
      [
        'a workflow path prefix',
        await mint(issuer, { workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml.bak@refs/tags/v1' }),
        403,
        'no-matching-rule',
      ],
      ['another owner id', await mint(issuer, { repository_owner_id: '4243' }), 403, 'no-matching-rule'],
      ['another owner', await mint(issuer, { repository_owner: 'evil' }), 403, 'namespace-owner'],
    ];
    for (const [label, bearer, status, reason] of cases) {
      const response = await post(bearer, NAME, '9.0.0');
      await expectRefused(response, status, reason, bearer).catch((error: unknown) => {
        throw new Error(`${label}: ${String(error)}`);
      });
    }
    down.jwksMode = 'unreachable';
    await expectRefused(
      await post(await mint(down), 'com.example.down/widgets', '1.0.0'),
      401,
      'issuer-unavailable',
      secrets.at(-1)!,
    );
    huge.jwksMode = 'huge';
    await expectRefused(
      await post(await mint(huge), 'com.example.huge/widgets', '1.0.0'),
      401,
      'issuer-unavailable',
      secrets.at(-1)!,
    );
    // A valid token of a namespace's issuer, for a manifest of a namespace without rules.
    await expectRefused(
      await post(await mint(issuer), 'com.example.none/widgets', '1.0.0'),
      403,
      'no-matching-rule',
      secrets.at(-1)!,
    );

    expect(await listVersions(NAME)).toEqual(['1.0.0']);
    expect(await listVersions('com.example.down/widgets')).toEqual([]);
    expect(await listVersions('com.example.huge/widgets')).toEqual([]);
    for (const secret of secrets) {
      expect(server.stdout()).not.toContain(secret);
      expect(server.stderr()).not.toContain(secret);
    }
  }, 300_000);

  it('long-lived tokens keep working, attested as such; --oidc-only refuses them; untrust removes the rule', async () => {
    const added = await cli(['publisher', 'add', 'com.example.tokens']);
    expect(added.code, added.stderr).toBe(0);
    const token = added.stdout.trim();
    expect((await post(token, 'com.example.tokens/widgets', '1.0.0')).status).toBe(201);
    expect(await readProvenance('com.example.tokens/widgets', '1.0.0')).toEqual({
      method: 'token',
      publisher: 'com.example.tokens',
    });

    const trusted = await cli([
      'publisher',
      'trust',
      'com.example.tokens',
      '--issuer',
      issuer.issuer,
      '--claim',
      'repository=acme/tokens',
      '--audience',
      server.url,
      '--oidc-only',
      '--allow-insecure-issuer',
    ]);
    expect(trusted.code, trusted.stderr).toBe(0);
    const rule = JSON.parse(trusted.stdout) as { id: number; oidcOnly: boolean };
    expect(rule.oidcOnly).toBe(true);
    await expectRefused(await post(token, 'com.example.tokens/widgets', '1.1.0'), 403, 'oidc-only', token);

    const listed = await cli(['publisher', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    const list = JSON.parse(listed.stdout) as { trustRules: { id: number; namespace: string }[] };
    expect(list.trustRules.map((each) => [each.namespace, each.id])).toEqual([
      ['com.example.down', 2],
      ['com.example.huge', 3],
      ['com.example.tokens', rule.id],
      ['io.github.acme', 1],
    ]);
    expect(listed.stdout).not.toContain(token);

    const removed = await cli(['publisher', 'untrust', 'com.example.tokens', String(rule.id)]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toBe(
      `toolseal: trust rule ${rule.id} of com.example.tokens removed (${issuer.issuer} acme/tokens)\n`,
    );
    expect(JSON.parse(removed.stdout)).toMatchObject({ id: rule.id, removedAt: expect.any(String) });
    const again = await cli(['publisher', 'untrust', 'com.example.tokens', String(rule.id)]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ code: 'NOT_FOUND' });
    expect((await post(token, 'com.example.tokens/widgets', '1.1.0')).status).toBe(201);
  }, 300_000);

  it('io.github namespaces: publisher add refuses one without --unverified-namespace; with it, attested unverified', async () => {
    const refused = await cli(['publisher', 'add', 'io.github.someone']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: 'FORBIDDEN' });
    const added = await cli(['publisher', 'add', 'io.github.someone', '--unverified-namespace']);
    expect(added.code, added.stderr).toBe(0);
    expect((await post(added.stdout.trim(), 'io.github.someone/widgets', '1.0.0')).status).toBe(201);
    expect(await readProvenance('io.github.someone/widgets', '1.0.0')).toEqual({
      method: 'token',
      publisher: 'io.github.someone',
      unverifiedNamespace: true,
    });
    // A namespace created for OIDC (publisher trust) has a verified owner: a token given to it later is refused.
    const rotated = await cli(['publisher', 'rotate-token', 'io.github.acme']);
    expect(rotated.code, rotated.stderr).toBe(0);
    await expectRefused(
      await post(rotated.stdout.trim(), NAME, '1.2.0'),
      403,
      'namespace-owner',
      rotated.stdout.trim(),
    );
  }, 300_000);
});

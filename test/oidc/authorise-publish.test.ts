// The publish-time call (issue 28 §2, §4) against a local issuer standing in for GitHub Actions: bearer
// classification, OIDC-only namespaces, io.github ownership, and the provenance a trusted publish yields.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authoriseOidcPublish,
  authoriseTokenPublish,
  classifyBearerToken,
  type NamespaceTrust,
} from '../../src/oidc/authorise-publish.ts';
import { lookupGithubOwnerId } from '../../src/oidc/github-owner.ts';
import { IssuerKeyCache } from '../../src/oidc/issuer-keys.ts';
import { validateTrustRule } from '../../src/oidc/trust-rule.ts';
import { IdTokenVerifier } from '../../src/oidc/verify-id-token.ts';
import { FakeIssuer } from './fake-issuer.ts';

let github: FakeIssuer;
let verifier: IdTokenVerifier;
const AUDIENCE = 'https://registry.example';
const claims = {
  aud: AUDIENCE,
  sub: 'repo:Acme/payments-mcp:ref:refs/tags/v1',
  repository: 'Acme/payments-mcp',
  repository_owner: 'Acme',
  repository_owner_id: '4242',
  workflow_ref: 'Acme/payments-mcp/.github/workflows/release.yml@refs/tags/v1',
  sha: 'abcdef0123456789',
  run_id: '1',
};

function trustFor(namespace: string, options: { oidcOnly?: boolean; unverified?: boolean } = {}): NamespaceTrust {
  const rule = validateTrustRule(
    {
      issuer: github.issuer,
      audience: AUDIENCE,
      claims: { repository: 'Acme/payments-mcp', repository_owner_id: '4242' },
      refClaims: { workflow_ref: 'Acme/payments-mcp/.github/workflows/release.yml' },
      oidcOnly: options.oidcOnly ?? false,
    },
    { allowInsecureLoopbackIssuer: true },
  );
  return { namespace, rules: [rule], unverifiedNamespace: options.unverified ?? false };
}

beforeAll(async () => {
  github = await FakeIssuer.start();
  verifier = new IdTokenVerifier({
    keys: new IssuerKeyCache({
      fetch: (url, init) => fetch(url, init),
      limits: { allowInsecureLoopbackIssuer: true },
    }),
  });
});
afterAll(() => github.close());

describe('classifyBearerToken', () => {
  it('tells a compact JWT from a long-lived tsk_ token', async () => {
    expect(classifyBearerToken(await github.mint(claims))).toBe('oidc');
    expect(classifyBearerToken('tsk_AbC-_0123456789abcdefghijklmnopqrstuvwxyzABCDEF')).toBe('long-lived');
  });
});

describe('authoriseOidcPublish', () => {
  it('trusts the owner workflow for io.github.acme and yields the provenance', async () => {
    const result = await authoriseOidcPublish(verifier, await github.mint(claims), trustFor('io.github.acme'), {
      githubIssuer: github.issuer,
    });
    expect(result).toEqual({
      ruleIndex: 0,
      provenance: {
        method: 'oidc',
        issuer: github.issuer,
        subject: claims.sub,
        claims: { repository: 'Acme/payments-mcp', workflow_ref: claims.workflow_ref, sha: claims.sha, run_id: '1' },
      },
    });
  });

  it('refuses a rule on io.github.other even when the token matches it (owner differs)', async () => {
    await expect(
      authoriseOidcPublish(verifier, await github.mint(claims), trustFor('io.github.modelcontextprotocol'), {
        githubIssuer: github.issuer,
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN', reason: 'namespace-owner' });
  });

  it('marks an operator-overridden namespace as unverified in the provenance', async () => {
    const result = await authoriseOidcPublish(
      verifier,
      await github.mint(claims),
      trustFor('io.github.modelcontextprotocol', { unverified: true }),
      { githubIssuer: github.issuer },
    );
    expect(result.provenance).toMatchObject({ method: 'oidc', unverifiedNamespace: true });
  });

  it('refuses a namespace without rules', async () => {
    await expect(
      authoriseOidcPublish(verifier, await github.mint(claims), {
        namespace: 'com.example',
        rules: [],
        unverifiedNamespace: false,
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN', reason: 'no-matching-rule' });
  });
});

describe('authoriseTokenPublish', () => {
  it('keeps long-lived tokens working unless the namespace is OIDC-only or io.github', () => {
    expect(authoriseTokenPublish(trustFor('com.example'))).toEqual({
      provenance: { method: 'token', publisher: 'com.example' },
      ruleIndex: undefined,
    });
    expect(() => authoriseTokenPublish(trustFor('com.example', { oidcOnly: true }))).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN', reason: 'oidc-only' }),
    );
    expect(() => authoriseTokenPublish(trustFor('io.github.acme'))).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN', reason: 'namespace-owner' }),
    );
    expect(authoriseTokenPublish(trustFor('io.github.acme', { unverified: true })).provenance).toEqual({
      method: 'token',
      publisher: 'io.github.acme',
      unverifiedNamespace: true,
    });
  });
});

describe('lookupGithubOwnerId', () => {
  it('reads the numeric id from a local fake of the GitHub API, and refuses a mismatched login', async () => {
    const server = createServer((request, response) => {
      const body =
        request.url === '/users/Acme'
          ? { login: 'acme', id: 4242 }
          : request.url === '/users/mallory'
            ? { login: 'someone-else', id: 1 }
            : undefined;
      if (body === undefined) return void response.writeHead(404).end();
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const fetcher = (url: string, init: RequestInit) => fetch(url, init);
    try {
      expect(await lookupGithubOwnerId('Acme', fetcher, { apiBase, allowInsecureLoopback: true })).toBe('4242');
      for (const owner of ['mallory', 'nobody']) {
        await expect(
          lookupGithubOwnerId(owner, fetcher, { apiBase, allowInsecureLoopback: true }),
        ).rejects.toMatchObject({
          code: 'FETCH_FAILED',
        });
      }
      await expect(lookupGithubOwnerId('Acme', fetcher, { apiBase })).rejects.toMatchObject({ code: 'FETCH_FAILED' });
      await expect(lookupGithubOwnerId('../x', fetcher, { apiBase })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

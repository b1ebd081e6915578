// Bad and good ID tokens against a local issuer on 127.0.0.1 (issue 28 "Bad input"): each refusal has its code and
// reason, echoes neither the token nor claim values, and a valid token matches its rule and yields its provenance.

import { createPublicKey } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OidcRefusal, type OidcRefusalReason } from '../../src/oidc/refusal.ts';
import { IssuerKeyCache } from '../../src/oidc/issuer-keys.ts';
import { validateTrustRule, type TrustRule } from '../../src/oidc/trust-rule.ts';
import { IdTokenVerifier } from '../../src/oidc/verify-id-token.ts';
import { FakeIssuer } from './fake-issuer.ts';

let issuer: FakeIssuer;
let other: FakeIssuer;
let rule: TrustRule;
let clock: number;

const AUDIENCE = 'https://registry.example';
const goodClaims = {
  aud: AUDIENCE,
  sub: 'repo:acme/payments-mcp:ref:refs/tags/v1.2.0',
  repository: 'acme/payments-mcp',
  repository_owner: 'Acme',
  repository_owner_id: '4242',
  workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml@refs/tags/v1.2.0',
  sha: '3f2a1b9c0d4e5f60718293a4b5c6d7e8f9012345',
  run_id: '987654321',
  environment: 'release',
};

function makeVerifier(options: { allowInsecure?: boolean; refreshIntervalMs?: number } = {}) {
  const keys = new IssuerKeyCache({
    fetch: (url, init) => fetch(url, init),
    limits: { allowInsecureLoopbackIssuer: options.allowInsecure ?? true, timeoutMs: 2000 },
    now: () => clock * 1000,
    refreshIntervalMs: options.refreshIntervalMs ?? 60_000,
  });
  return new IdTokenVerifier({ keys, now: () => new Date(clock * 1000) });
}

async function expectRefusal(
  promise: Promise<unknown>,
  code: 'UNAUTHENTICATED' | 'FORBIDDEN',
  reason: OidcRefusalReason,
  secrets: readonly string[] = [],
) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OidcRefusal);
  const refusal = error as OidcRefusal;
  expect({ code: refusal.code, reason: refusal.reason }).toEqual({ code, reason });
  expect(refusal.message.startsWith(`${reason}: `)).toBe(true);
  for (const secret of secrets) expect(refusal.message).not.toContain(secret);
}

beforeAll(async () => {
  issuer = await FakeIssuer.start();
  other = await FakeIssuer.start();
  rule = validateTrustRule(
    {
      issuer: issuer.issuer,
      audience: AUDIENCE,
      claims: { repository: 'acme/payments-mcp', repository_owner_id: '4242', environment: 'release' },
      refClaims: { workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml' },
      oidcOnly: false,
    },
    { allowInsecureLoopbackIssuer: true },
  );
});

afterAll(async () => {
  await issuer.close();
  await other.close();
});

beforeEach(() => {
  clock = Math.floor(Date.now() / 1000);
  issuer.jwksMode = 'normal';
});

describe('a valid token', () => {
  it('matches its rule and yields the provenance record (RS256)', async () => {
    const token = await issuer.mint(goodClaims, { now: clock });
    const trusted = await makeVerifier().verify(token, [rule]);
    expect(trusted.ruleIndex).toBe(0);
    expect(trusted.repositoryOwner).toBe('Acme');
    expect(trusted.provenance).toEqual({
      method: 'oidc',
      issuer: issuer.issuer,
      subject: goodClaims.sub,
      claims: {
        repository: 'acme/payments-mcp',
        workflow_ref: goodClaims.workflow_ref,
        sha: goodClaims.sha,
        run_id: goodClaims.run_id,
        environment: 'release',
      },
    });
  });

  it('is accepted signed with ES256, and picks the rule that matches among several', async () => {
    const otherRule = { ...rule, claims: { ...rule.claims, repository: 'acme/other' } };
    const token = await issuer.mint(goodClaims, { now: clock, kid: 'ec-1' });
    expect((await makeVerifier().verify(token, [otherRule, rule])).ruleIndex).toBe(1);
  });

  it('is accepted within the leeway after exp', async () => {
    const token = await issuer.mint(goodClaims, { now: clock - 330 });
    await expect(makeVerifier().verify(token, [rule])).resolves.toMatchObject({ ruleIndex: 0 });
  });
});

describe('refused: UNAUTHENTICATED', () => {
  it('expired', async () => {
    const token = await issuer.mint(goodClaims, { now: clock - 400 });
    await expectRefusal(makeVerifier().verify(token, [rule]), 'UNAUTHENTICATED', 'expired', [token]);
  });

  it('not yet valid', async () => {
    const token = await issuer.mint({ ...goodClaims, nbf: clock + 120 }, { now: clock });
    await expectRefusal(makeVerifier().verify(token, [rule]), 'UNAUTHENTICATED', 'not-yet-valid', [token]);
  });

  it('issued in the future, and issued too long ago', async () => {
    const future = await issuer.mint(goodClaims, { now: clock + 300 });
    await expectRefusal(makeVerifier().verify(future, [rule]), 'UNAUTHENTICATED', 'issued-in-future');
    const old = await issuer.mint({ ...goodClaims, exp: clock + 60 }, { now: clock - 7200 });
    await expectRefusal(makeVerifier().verify(old, [rule]), 'UNAUTHENTICATED', 'too-old');
  });

  it('wrong audience', async () => {
    const token = await issuer.mint({ ...goodClaims, aud: 'https://registry.example.evil' }, { now: clock });
    await expectRefusal(makeVerifier().verify(token, [rule]), 'UNAUTHENTICATED', 'wrong-audience', [
      'registry.example.evil',
    ]);
  });

  it('wrong issuer: nothing is fetched from an issuer no rule names', async () => {
    const token = await other.mint(goodClaims, { now: clock });
    const before = other.discoveryFetches + issuer.discoveryFetches;
    await expectRefusal(makeVerifier().verify(token, [rule]), 'UNAUTHENTICATED', 'wrong-issuer', [other.issuer]);
    expect(other.discoveryFetches + issuer.discoveryFetches).toBe(before);
  });

  it('a token claiming the trusted issuer but signed by another issuer key of the same kid', async () => {
    const forged = await other.mint({ ...goodClaims, iss: issuer.issuer }, { now: clock });
    await expectRefusal(makeVerifier().verify(forged, [rule]), 'UNAUTHENTICATED', 'signature');
  });

  it('unknown kid: fetched again once, then rate-limited until the interval passes', async () => {
    const verifier = makeVerifier();
    await verifier.verify(await issuer.mint(goodClaims, { now: clock }), [rule]); // warms the cache
    await issuer.addUnpublishedKey('rotated-1');
    const token = await issuer.mint(goodClaims, { now: clock, kid: 'rotated-1' });
    const fetchesBefore = issuer.jwksFetches;
    clock += 61;
    await expectRefusal(verifier.verify(token, [rule]), 'UNAUTHENTICATED', 'unknown-key');
    expect(issuer.jwksFetches).toBe(fetchesBefore + 1);
    issuer.publishPendingKeys();
    await expectRefusal(verifier.verify(token, [rule]), 'UNAUTHENTICATED', 'unknown-key');
    expect(issuer.jwksFetches).toBe(fetchesBefore + 1); // rate-limited: no second fetch within the interval
    clock += 61;
    await expect(verifier.verify(token, [rule])).resolves.toMatchObject({ ruleIndex: 0 });
    expect(issuer.jwksFetches).toBe(fetchesBefore + 2);
  });

  it('alg none', async () => {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ ...goodClaims, iss: issuer.issuer, iat: clock, exp: clock + 300 })}.`;
    await expectRefusal(makeVerifier().verify(unsigned, [rule]), 'UNAUTHENTICATED', 'algorithm');
  });

  it('HS256 signed with the issuer public key (algorithm confusion)', async () => {
    const publicPem = createPublicKey({ key: issuer.publicJwk('rsa-1') as never, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString();
    const payload = { ...goodClaims, iss: issuer.issuer, iat: clock, exp: clock + 300 };
    for (const header of [{ alg: 'HS256', kid: 'rsa-1' }, { alg: 'HS256' }]) {
      const confused = await new SignJWT(payload).setProtectedHeader(header).sign(new TextEncoder().encode(publicPem));
      await expectRefusal(makeVerifier().verify(confused, [rule]), 'UNAUTHENTICATED', 'algorithm');
    }
    // and the header lying RS256 over an HMAC signature fails the signature check
    const hmac = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
      .sign(new TextEncoder().encode(publicPem));
    const [, body, signature] = hmac.split('.');
    const relabelled = `${Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'rsa-1' })).toString('base64url')}.${body}.${signature}`;
    await expectRefusal(makeVerifier().verify(relabelled, [rule]), 'UNAUTHENTICATED', 'signature');
  });

  it('JWKS unreachable', async () => {
    issuer.jwksMode = 'unreachable';
    const token = await issuer.mint(goodClaims, { now: clock });
    await expectRefusal(makeVerifier().verify(token, [rule]), 'UNAUTHENTICATED', 'issuer-unavailable', [token]);
  });

  it('JWKS huge, declared or streamed without a length', async () => {
    for (const mode of ['huge', 'huge-no-length'] as const) {
      issuer.jwksMode = mode;
      const token = await issuer.mint(goodClaims, { now: clock });
      await expectRefusal(makeVerifier().verify(token, [rule]), 'UNAUTHENTICATED', 'issuer-unavailable');
    }
  });

  it('an http: issuer unless loopback issuers are explicitly allowed', async () => {
    const token = await issuer.mint(goodClaims, { now: clock });
    await expectRefusal(
      makeVerifier({ allowInsecure: false }).verify(token, [rule]),
      'UNAUTHENTICATED',
      'issuer-unavailable',
    );
  });

  it('a signed payload with a duplicate claim (JSON.parse would keep the last one)', async () => {
    const body = JSON.stringify({ ...goodClaims, iss: issuer.issuer, iat: clock, exp: clock + 300 });
    const duplicated = `${body.slice(0, -1)},"repository":"mallory/payments-mcp"}`;
    const token = await issuer.signRaw(duplicated);
    await expectRefusal(makeVerifier().verify(token, [rule]), 'UNAUTHENTICATED', 'malformed', ['mallory']);
    // the same bytes without the duplicate verify: the refusal is the duplicate, not the raw signing
    await expect(makeVerifier().verify(await issuer.signRaw(body), [rule])).resolves.toMatchObject({ ruleIndex: 0 });
  });

  it('not a JWT, or too long', async () => {
    await expectRefusal(makeVerifier().verify('tsp_longlivedtoken', [rule]), 'UNAUTHENTICATED', 'malformed');
    await expectRefusal(makeVerifier().verify(`a.${'b'.repeat(20_000)}.c`, [rule]), 'UNAUTHENTICATED', 'malformed');
  });
});

describe('refused: FORBIDDEN (authentic, but no rule matches)', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['another repository', { repository: 'mallory/payments-mcp' }],
    ['the rule value as a prefix of the claim', { repository: 'acme/payments-mcp-evil' }],
    ['the claim as a prefix of the rule value', { repository: 'acme/payments' }],
    ['different case', { repository: 'Acme/payments-mcp' }],
    ['a resurrected owner (other numeric id)', { repository_owner_id: '9999' }],
    ['the owner id as a number, not the string GitHub sends', { repository_owner_id: 4242 }],
    ['another environment', { environment: 'release-evil' }],
    [
      'another workflow file sharing a prefix',
      { workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml2@refs/tags/v1' },
    ],
    ['the workflow path with no ref', { workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml' }],
    ['the workflow path with an empty ref', { workflow_ref: 'acme/payments-mcp/.github/workflows/release.yml@' }],
    ['a missing pinned claim', { environment: undefined }],
  ];
  for (const [label, change] of cases) {
    it(label, async () => {
      const token = await issuer.mint({ ...goodClaims, ...change }, { now: clock });
      const refusal = makeVerifier().verify(token, [rule]);
      await expectRefusal(refusal, 'FORBIDDEN', 'no-matching-rule', [token]);
      // the message names the rule (issuer and pinned repository) and nothing the token claimed
      await expect(refusal).rejects.toThrow(
        new RegExp(
          `^no-matching-rule: the token matches no trust rule of this namespace \\(rules: ${issuer.issuer} acme/payments-mcp\\)$`,
        ),
      );
    });
  }
});

describe('keys', () => {
  it('imports the fixture keys (sanity of the fixture itself)', async () => {
    await expect(importJWK(issuer.publicJwk('ec-1'), 'ES256')).resolves.toBeDefined();
  });
});

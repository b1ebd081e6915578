// Who may publish to io.github.OWNER (issue 28 §4), and OIDC-only namespaces.

import { describe, expect, it } from 'vitest';
import {
  checkLongLivedTokenAllowed,
  checkNamespaceAuthorisation,
  checkNamespaceCreation,
  checkTrustRuleForNamespace,
  githubOwnerOfNamespace,
} from '../../src/oidc/namespace-policy.ts';
import { OidcRefusal } from '../../src/oidc/refusal.ts';
import { buildGithubTrustRule, GITHUB_ACTIONS_ISSUER } from '../../src/oidc/trust-rule.ts';

const github = (repositoryOwner: string | undefined, issuer = GITHUB_ACTIONS_ISSUER) =>
  ({ method: 'oidc', issuer, repositoryOwner }) as const;
const verified = { unverifiedNamespace: false };

function refusedAsOwner(run: () => void): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OidcRefusal);
    expect({ code: (error as OidcRefusal).code, reason: (error as OidcRefusal).reason }).toEqual({
      code: 'FORBIDDEN',
      reason: 'namespace-owner',
    });
    return;
  }
  throw new Error('expected a refusal');
}

describe('io.github.OWNER', () => {
  it('reads the owner label', () => {
    expect(githubOwnerOfNamespace('io.github.acme')).toBe('acme');
    expect(githubOwnerOfNamespace('io.github.acme.tools')).toBe('acme');
    expect(githubOwnerOfNamespace('io.github')).toBe('');
    expect(githubOwnerOfNamespace('io.githubx.acme')).toBeUndefined();
    expect(githubOwnerOfNamespace('com.example')).toBeUndefined();
  });

  it('accepts GitHub OIDC of the owner (ASCII case-insensitively), for the namespace and below', () => {
    expect(() => checkNamespaceAuthorisation('io.github.acme', github('Acme'), verified)).not.toThrow();
    expect(() => checkNamespaceAuthorisation('io.github.acme.tools', github('acme'), verified)).not.toThrow();
  });

  it('refuses another owner, a prefix owner, a long-lived token, another issuer, io.github itself', () => {
    refusedAsOwner(() => checkNamespaceAuthorisation('io.github.acme', github('acme-evil'), verified));
    refusedAsOwner(() => checkNamespaceAuthorisation('io.github.acme-evil', github('acme'), verified));
    refusedAsOwner(() => checkNamespaceAuthorisation('io.github.acme', github(undefined), verified));
    refusedAsOwner(() => checkNamespaceAuthorisation('io.github.acme', github('ACME\u212a'), verified));
    refusedAsOwner(() => checkNamespaceAuthorisation('io.github.acme', { method: 'token' }, verified));
    refusedAsOwner(() => checkNamespaceAuthorisation('io.github.acme', github('acme', 'https://gitlab.com'), verified));
    refusedAsOwner(() => checkNamespaceAuthorisation('io.github', github('acme'), verified));
  });

  it('lets an operator mark a namespace unverified, and leaves other namespaces alone', () => {
    expect(() =>
      checkNamespaceAuthorisation('io.github.acme', { method: 'token' }, { unverifiedNamespace: true }),
    ).not.toThrow();
    expect(() => checkNamespaceAuthorisation('com.example', { method: 'token' }, verified)).not.toThrow();
  });

  it('creation by hand and trust rules', () => {
    refusedAsOwner(() => checkNamespaceCreation('io.github.modelcontextprotocol', verified));
    expect(() => checkNamespaceCreation('io.github.acme', { unverifiedNamespace: true })).not.toThrow();
    expect(() => checkNamespaceCreation('com.example', verified)).not.toThrow();
    const rule = (repository: string) => buildGithubTrustRule({ repository, ownerId: '1', audience: 'a' });
    expect(() => checkTrustRuleForNamespace('io.github.acme', rule('Acme/x'), verified)).not.toThrow();
    refusedAsOwner(() => checkTrustRuleForNamespace('io.github.acme', rule('mallory/x'), verified));
    refusedAsOwner(() => checkTrustRuleForNamespace('io.github.acme', rule('acme-evil/x'), verified));
  });
});

describe('OIDC-only namespaces', () => {
  it('refuse long-lived tokens when any rule says so', () => {
    const rule = buildGithubTrustRule({ repository: 'acme/x', ownerId: '1', audience: 'a' });
    expect(() => checkLongLivedTokenAllowed('io.github.acme', [rule])).not.toThrow();
    expect(() => checkLongLivedTokenAllowed('io.github.acme', [rule, { ...rule, oidcOnly: true }])).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN', reason: 'oidc-only' }),
    );
  });
});

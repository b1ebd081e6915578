// Who may claim a namespace (issue 28 §4), after the official MCP Registry's rules: `io.github.OWNER` and the
// namespaces below it only through GitHub Actions OIDC whose `repository_owner` is OWNER, unless an operator marked
// the namespace unverified; a namespace whose trust rules are OIDC-only refuses long-lived tokens.

import { OidcRefusal } from './refusal.ts';
import { GITHUB_ACTIONS_ISSUER, type TrustRule } from './trust-rule.ts';

/** How the publish request was authorised, as the registry classified its bearer token. */
export type PublishAuthorisation =
  | { method: 'token' }
  | { method: 'oidc'; issuer: string; repositoryOwner: string | undefined };

export interface NamespacePolicyOptions {
  /** The operator marked the namespace unverified (`publisher add … --unverified-namespace`). */
  unverifiedNamespace: boolean;
  /** The GitHub Actions issuer (a loopback issuer in tests); default https://token.actions.githubusercontent.com. */
  githubIssuer?: string;
}

/**
 * The GitHub owner a namespace belongs to: `io.github.acme` and `io.github.acme.tools` → `acme`; `io.github` alone
 * → '' (it belongs to nobody); any other namespace → undefined. Namespaces are lowercase (manifest format).
 */
export function githubOwnerOfNamespace(namespace: string): string | undefined {
  if (namespace === 'io.github') return '';
  if (!namespace.startsWith('io.github.')) return undefined;
  return namespace.slice('io.github.'.length).split('.')[0] ?? '';
}

/**
 * FORBIDDEN (namespace-owner) unless `authorisation` may publish to `namespace`. The owner comparison is ASCII
 * case-insensitive: GitHub logins are ASCII letters, digits and `-`, unique regardless of case, and GitHub reports
 * them with the case the owner chose (`Acme`), while namespaces are lowercase (`io.github.acme`).
 */
export function checkNamespaceAuthorisation(
  namespace: string,
  authorisation: PublishAuthorisation,
  options: NamespacePolicyOptions,
): void {
  const owner = githubOwnerOfNamespace(namespace);
  if (owner === undefined || options.unverifiedNamespace) return;
  const githubIssuer = options.githubIssuer ?? GITHUB_ACTIONS_ISSUER;
  const reported = authorisation.method === 'oidc' ? authorisation.repositoryOwner : undefined;
  const proven =
    authorisation.method === 'oidc' &&
    authorisation.issuer === githubIssuer &&
    owner !== '' &&
    reported !== undefined &&
    /^[A-Za-z0-9-]+$/.test(reported) &&
    reported.toLowerCase() === owner;
  if (!proven) {
    throw new OidcRefusal(
      'namespace-owner',
      `namespace ${namespace} can only be published to from GitHub Actions of the owner ${owner || '(none)'}`,
    );
  }
}

/** Creating `namespace` by hand (`publisher add`): refused for io.github.* unless marked unverified. */
export function checkNamespaceCreation(namespace: string, options: { unverifiedNamespace: boolean }): void {
  if (githubOwnerOfNamespace(namespace) !== undefined && !options.unverifiedNamespace) {
    throw new OidcRefusal(
      'namespace-owner',
      `namespace ${namespace} is proven by GitHub OIDC; add a trust rule with --github, or mark it --unverified-namespace`,
    );
  }
}

/** FORBIDDEN (oidc-only) when a long-lived token tries a namespace whose rules accept OIDC only. */
export function checkLongLivedTokenAllowed(namespace: string, rules: readonly TrustRule[]): void {
  if (rules.some((rule) => rule.oidcOnly)) {
    throw new OidcRefusal('oidc-only', `namespace ${namespace} accepts only OIDC tokens from its trusted workflows`);
  }
}

/**
 * A trust rule may be added to an io.github.OWNER namespace only when it is a GitHub Actions rule for a repository of
 * OWNER (compared as in checkNamespaceAuthorisation), unless the namespace is marked unverified.
 */
export function checkTrustRuleForNamespace(namespace: string, rule: TrustRule, options: NamespacePolicyOptions): void {
  const owner = githubOwnerOfNamespace(namespace);
  if (owner === undefined || options.unverifiedNamespace) return;
  const repositoryOwner = rule.claims.repository?.split('/')[0];
  const matches =
    rule.issuer === (options.githubIssuer ?? GITHUB_ACTIONS_ISSUER) &&
    owner !== '' &&
    repositoryOwner !== undefined &&
    repositoryOwner.toLowerCase() === owner;
  if (!matches) {
    throw new OidcRefusal(
      'namespace-owner',
      `namespace ${namespace} trusts only GitHub Actions rules for repositories of ${owner || '(none)'}`,
    );
  }
}

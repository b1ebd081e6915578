// The one call the registry makes at publish (issue 28 §2, §4): classify the bearer token (a compact JWS, RFC 7515
// §7.1, is an OIDC ID token; anything else is a long-lived publisher token), then apply the namespace's trust
// rules, OIDC-only setting and io.github ownership, and return the provenance the attestation records.

import { buildTokenProvenance, type PublishProvenance } from '../attest/provenance.ts';
import { checkLongLivedTokenAllowed, checkNamespaceAuthorisation } from './namespace-policy.ts';
import { OidcRefusal } from './refusal.ts';
import type { TrustRule } from './trust-rule.ts';
import { type IdTokenVerifier, looksLikeJwt } from './verify-id-token.ts';

/** What the store keeps per namespace for trusted publishing. */
export interface NamespaceTrust {
  namespace: string;
  /** The namespace's rules, in the order they were added (their ids are the store's). */
  rules: readonly TrustRule[];
  /** Set by `publisher add … --unverified-namespace`. */
  unverifiedNamespace: boolean;
}

export type BearerKind = 'oidc' | 'long-lived';

/** Long-lived tokens (`tsk_…`) are base64url without dots; an ID token is three dot-separated segments. */
export function classifyBearerToken(bearer: string): BearerKind {
  return looksLikeJwt(bearer) ? 'oidc' : 'long-lived';
}

export interface AuthorisedPublish {
  provenance: PublishProvenance;
  /** Index in `trust.rules` of the rule the OIDC token matched (for the log line); undefined for a token. */
  ruleIndex: number | undefined;
}

/**
 * An OIDC publish to `trust.namespace`: the token verified and matched against the namespace's rules, then the
 * io.github ownership check. `githubIssuer` replaces GitHub's issuer in tests (a loopback fake).
 */
export async function authoriseOidcPublish(
  verifier: IdTokenVerifier,
  token: string,
  trust: NamespaceTrust,
  options: { githubIssuer?: string } = {},
): Promise<AuthorisedPublish> {
  if (trust.rules.length === 0) {
    throw new OidcRefusal('no-matching-rule', `namespace ${trust.namespace} trusts no OIDC issuer`);
  }
  const trusted = await verifier.verify(token, trust.rules);
  checkNamespaceAuthorisation(
    trust.namespace,
    { method: 'oidc', issuer: trusted.rule.issuer, repositoryOwner: trusted.repositoryOwner },
    { unverifiedNamespace: trust.unverifiedNamespace, githubIssuer: options.githubIssuer },
  );
  const provenance =
    trust.unverifiedNamespace && trusted.provenance.method === 'oidc'
      ? { ...trusted.provenance, unverifiedNamespace: true as const }
      : trusted.provenance;
  return { provenance, ruleIndex: trusted.ruleIndex };
}

/**
 * A publish with the long-lived token of the publisher that owns `trust.namespace` (the registry authenticated the
 * token already): refused when the namespace is OIDC-only or is an io.github namespace not marked unverified.
 */
export function authoriseTokenPublish(trust: NamespaceTrust): AuthorisedPublish {
  checkLongLivedTokenAllowed(trust.namespace, trust.rules);
  checkNamespaceAuthorisation(trust.namespace, { method: 'token' }, { unverifiedNamespace: trust.unverifiedNamespace });
  return {
    provenance: buildTokenProvenance(trust.namespace, { unverifiedNamespace: trust.unverifiedNamespace }),
    ruleIndex: undefined,
  };
}

// Trusted publishing in the registry (issue 28 §1, §2, §4; docs/trusted-publishing.md): the trust rules of a
// namespace (add, list, remove), how a namespace was verified, and the authorisation of a publish from its bearer
// token (RFC 6750 §2.1): a long-lived publisher token, or a CI's OIDC ID token checked against the namespace's rules.

import type { PublishProvenance } from '../attest/provenance.ts';
import { decodeJwt } from 'jose';
import { ToolsealError } from '../core/errors.ts';
import {
  authoriseOidcPublish,
  authoriseTokenPublish,
  checkNamespaceCreation,
  checkTrustRuleForNamespace,
  classifyBearerToken,
  githubOwnerOfNamespace,
  type IdTokenVerifier,
  type NamespaceTrust,
  OidcRefusal,
  type TrustRule,
  validateTrustRule,
} from '../oidc/index.ts';
import { NAMESPACE_PATTERN } from '../protocol/manifest-ref.ts';
import type { PublisherRecord, Store } from '../store/index.ts';
import type { NamespaceVerificationRecord, TrustRuleRecord, TrustRuleStore } from '../store/trust-rules-port.ts';
import { authenticatePublisher, createPublisher } from './publishers.ts';

/** The publisher a publish commits as, with how it was authorised (recorded in the attestation's predicate). */
export type AuthorisedPublisher = PublisherRecord & { provenance?: PublishProvenance };

/** Called with the manifest's namespace once the pipeline has read it: the publisher to commit as, or a refusal. */
export type PublishAuthoriser = (namespace: string) => Promise<AuthorisedPublisher>;

/** The provenance member of a publish predicate for `publisher` (none for a publisher authorised before issue 28). */
export function provenanceMemberOf(publisher: PublisherRecord): { provenance?: PublishProvenance } {
  const { provenance } = publisher as AuthorisedPublisher;
  return provenance === undefined ? {} : { provenance };
}

export interface TrustedPublishingOptions {
  store: Store;
  rules: TrustRuleStore;
  verifier: IdTokenVerifier;
  /** GitHub Actions' issuer, replaced by a loopback issuer in tests (default https://token.actions.githubusercontent.com). */
  githubIssuer?: string;
}

/** The registry's side of a publish's bearer token; one per server. */
export class TrustedPublishing {
  constructor(private readonly options: TrustedPublishingOptions) {}

  /**
   * Before the body is read: a long-lived token is authenticated now (UNAUTHENTICATED otherwise); an ID token is only
   * checked to name an issuer some namespace trusts. The authoriser finishes the job for the manifest's namespace.
   */
  async authenticate(bearer: string | undefined): Promise<PublishAuthoriser> {
    if (bearer === undefined || classifyBearerToken(bearer) === 'long-lived') {
      const publisher = await authenticatePublisher(this.options.store, bearer);
      return async (namespace) => {
        if (namespace.toLowerCase() !== publisher.namespace.toLowerCase()) return publisher;
        const trust = await this.loadTrust(publisher.namespace);
        const legacy = trust.verification === undefined && trust.rules.length === 0;
        // A token never proves GitHub ownership: an io.github namespace created before trusted publishing (no
        // verification record, no rule) keeps working and is attested as unverified.
        const unverifiedNamespace =
          trust.verification?.unverified === true ||
          (legacy && githubOwnerOfNamespace(publisher.namespace) !== undefined);
        const { provenance } = authoriseTokenPublish({ ...trust, unverifiedNamespace });
        return { ...publisher, provenance };
      };
    }
    await this.checkIssuerTrusted(bearer);
    return async (namespace) => {
      const publisher = await this.options.store.findPublisherByNamespace(namespace);
      if (publisher === undefined) {
        throw new OidcRefusal('no-matching-rule', `namespace ${namespace} trusts no OIDC issuer`);
      }
      if (publisher.revokedAt !== undefined && publisher.revokedAt !== null) {
        throw new ToolsealError('UNAUTHENTICATED', 'the publisher of this namespace has been revoked');
      }
      const trust = await this.loadTrust(publisher.namespace);
      const { provenance } = await authoriseOidcPublish(
        this.options.verifier,
        bearer,
        { ...trust, unverifiedNamespace: trust.verification?.unverified === true },
        this.options.githubIssuer === undefined ? {} : { githubIssuer: this.options.githubIssuer },
      );
      return { ...publisher, provenance };
    };
  }

  /**
   * Before the body is read: the token must come from an issuer some namespace trusts, verify (signature, times,
   * audience) and match some namespace's rule; the manifest's namespace is checked once the pipeline has named it.
   */
  private async checkIssuerTrusted(bearer: string): Promise<void> {
    let issuer: unknown;
    try {
      issuer = decodeJwt(bearer).iss;
    } catch {
      throw new OidcRefusal('malformed', 'the bearer token is not a compact JWT');
    }
    const rules = (await this.options.rules.listAllTrustRules()).filter((rule) => rule.issuer === issuer);
    if (typeof issuer !== 'string' || rules.length === 0) {
      throw new OidcRefusal('wrong-issuer', 'the token comes from no issuer a namespace trusts');
    }
    await this.options.verifier.verify(bearer, rules.map(toTrustRule));
  }

  private async loadTrust(
    namespace: string,
  ): Promise<Omit<NamespaceTrust, 'unverifiedNamespace'> & { verification: NamespaceVerificationRecord | undefined }> {
    const { rules, verification } = await this.options.rules.loadNamespaceTrust(namespace);
    return { namespace, rules: rules.map(toTrustRule), verification };
  }
}

/** A stored rule as the verifier reads it. */
export function toTrustRule(record: TrustRuleRecord): TrustRule {
  return {
    issuer: record.issuer,
    audience: record.audience,
    claims: record.claims,
    refClaims: record.refClaims,
    oidcOnly: record.oidcOnly,
  };
}

export interface TrustRuleAdminOptions {
  clock?: () => Date;
  githubIssuer?: string;
  allowInsecureLoopbackIssuer?: boolean;
}

/**
 * `publisher trust NAMESPACE …`: add a rule (checked, and for io.github.OWNER a GitHub rule for OWNER's repositories).
 * A namespace that has no publisher yet is created for trusted publishing: verified, with no token anyone was given.
 */
export async function addTrustRule(
  store: Store,
  rules: TrustRuleStore,
  namespace: string,
  rule: TrustRule,
  options: TrustRuleAdminOptions = {},
): Promise<TrustRuleRecord> {
  checkNamespaceName(namespace);
  const checked = validateTrustRule(rule, {
    allowInsecureLoopbackIssuer: options.allowInsecureLoopbackIssuer === true,
  });
  const verification = await rules.findNamespaceVerification(namespace);
  checkTrustRuleForNamespace(namespace, checked, {
    unverifiedNamespace: verification?.unverified === true,
    ...(options.githubIssuer === undefined ? {} : { githubIssuer: options.githubIssuer }),
  });
  const clock = options.clock ?? (() => new Date());
  if ((await store.findPublisherByNamespace(namespace)) === undefined) {
    await createPublisher(store, namespace, clock); // its token is dropped: this namespace publishes through OIDC
  }
  if (verification === undefined) {
    await rules.saveNamespaceVerification({ namespace, unverified: false, domain: null, provenAt: null });
  }
  return rules.insertTrustRule({ namespace, ...checked, createdAt: clock().toISOString() });
}

/** `publisher untrust NAMESPACE RULE-ID`: the rule stops being in force (NOT_FOUND when it is not). */
export async function removeTrustRule(
  rules: TrustRuleStore,
  namespace: string,
  id: number,
  clock: () => Date = () => new Date(),
): Promise<TrustRuleRecord> {
  const removed = await rules.removeTrustRule(namespace, id, clock().toISOString());
  if (removed === undefined) throw new ToolsealError('NOT_FOUND', `namespace ${namespace} has no trust rule ${id}`);
  return removed;
}

/**
 * `publisher add NAMESPACE [--unverified-namespace] [--prove-http DOMAIN]`: refuse an io.github namespace unless it is
 * marked unverified, and record how the namespace was verified (the caller has checked a domain proof, if any).
 */
export async function recordNamespaceVerification(
  rules: TrustRuleStore,
  namespace: string,
  how: { unverifiedNamespace: boolean; provenDomain?: string; provenAt?: string },
): Promise<void> {
  checkNamespaceName(namespace);
  checkNamespaceCreation(namespace, { unverifiedNamespace: how.unverifiedNamespace });
  if (!how.unverifiedNamespace && how.provenDomain === undefined) return;
  await rules.saveNamespaceVerification({
    namespace,
    unverified: how.unverifiedNamespace,
    domain: how.provenDomain ?? null,
    provenAt: how.provenAt ?? null,
  });
}

function checkNamespaceName(namespace: string): void {
  if (!NAMESPACE_PATTERN.test(namespace)) {
    throw new ToolsealError('BAD_REQUEST', 'namespace must be reverse-DNS in lowercase ASCII, e.g. io.github.acme');
  }
}

// Trusted publishing administration on a data folder (issue 28 §1, §4), for the CLI: `publisher trust|untrust`, the
// rules in `publisher list`, and `publisher add --unverified-namespace|--prove-http` (the MCP Registry's HTTP domain
// proof: an Ed25519 key at https://DOMAIN/.well-known/mcp-registry-auth that signed a current timestamp).

import {
  checkNamespaceCreation,
  type DomainProof,
  type FetchFunction,
  fetchDomainProofRecord,
  type TrustRule,
  verifyDomainProof,
} from '../oidc/index.ts';
import { createPublisher } from '../registry/publishers.ts';
import { addTrustRule, recordNamespaceVerification, removeTrustRule } from '../registry/trust-rules.ts';
import type { TrustRuleRecord } from '../store/trust-rules-port.ts';
import { openTrustRuleStore } from '../store/trust-rule-store-of.ts';
import { withExistingStore } from './admin.ts';

export type { TrustRuleRecord } from '../store/trust-rules-port.ts';

export interface TrustAdminOptions {
  /** Accept loopback `http:` issuers and domains (tests and local trials). */
  allowInsecureIssuer?: boolean;
  /** GitHub Actions' issuer as the io.github namespace check sees it (a loopback issuer in tests). */
  githubIssuer?: string;
}

/** `publisher trust NAMESPACE …`: the rule as stored (with its id, for `publisher untrust`). */
export function trustNamespace(
  dataDir: string,
  namespace: string,
  rule: TrustRule,
  options: TrustAdminOptions = {},
): Promise<TrustRuleRecord> {
  return withExistingStore(dataDir, (store) =>
    addTrustRule(store, openTrustRuleStore(store), namespace, rule, {
      allowInsecureLoopbackIssuer: options.allowInsecureIssuer === true,
      ...(options.githubIssuer === undefined ? {} : { githubIssuer: options.githubIssuer }),
    }),
  );
}

/** `publisher untrust NAMESPACE RULE-ID`: the removed rule (its row stays, with the time it was removed). */
export function untrustNamespace(dataDir: string, namespace: string, id: number): Promise<TrustRuleRecord> {
  return withExistingStore(dataDir, (store) => removeTrustRule(openTrustRuleStore(store), namespace, id));
}

/** Every trust rule in force, by namespace. */
export function listTrustRules(dataDir: string): Promise<TrustRuleRecord[]> {
  return withExistingStore(dataDir, (store) => openTrustRuleStore(store).listAllTrustRules());
}

export interface VerifiedPublisherOptions {
  /** `--unverified-namespace`: an io.github namespace given to a token, shown as unverified. */
  unverifiedNamespace?: boolean;
  /** `--prove-http DOMAIN --signed-timestamp T --signature HEX`: checked against the domain's record file. */
  domainProof?: DomainProof;
  fetch?: FetchFunction;
  allowInsecureLoopback?: boolean;
  now?: () => Date;
}

/**
 * `publisher add NAMESPACE` under issue 28 §4: an io.github namespace only with --unverified-namespace; a domain proof,
 * when given, checked before anything is stored. The token is returned once (only its hash is stored).
 */
export function addVerifiedPublisher(
  dataDir: string,
  namespace: string,
  options: VerifiedPublisherOptions,
): Promise<{ namespace: string; token: string; domain: string | null }> {
  return withExistingStore(dataDir, async (store) => {
    const now = (options.now ?? (() => new Date()))();
    const proof = options.domainProof;
    if (proof !== undefined) {
      const record = await fetchDomainProofRecord(proof.domain, options.fetch ?? ((url, init) => fetch(url, init)), {
        allowInsecureLoopback: options.allowInsecureLoopback === true,
      });
      verifyDomainProof(proof, record, namespace, { now });
    }
    const unverifiedNamespace = options.unverifiedNamespace === true;
    // Checked before the publisher is created: an io.github namespace needs --unverified-namespace.
    checkNamespaceCreation(namespace, { unverifiedNamespace });
    const { publisher, token } = await createPublisher(store, namespace);
    await recordNamespaceVerification(openTrustRuleStore(store), namespace, {
      unverifiedNamespace,
      ...(proof === undefined ? {} : { provenDomain: proof.domain, provenAt: now.toISOString() }),
    });
    return { namespace: publisher.namespace, token, domain: proof?.domain ?? null };
  });
}

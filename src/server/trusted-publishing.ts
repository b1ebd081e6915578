// Trusted publishing's wiring (issue 28 §2): the trust-rule store over the registry's database, the issuer key cache
// (https only; loopback http with `serve --allow-insecure-issuer`) and the ID-token verifier, one per server; and
// the operator's trust-rule commands (`publisher trust|untrust|list`, `publisher add --unverified-namespace|--prove-http`).

import { IdTokenVerifier, IssuerKeyCache, type FetchFunction } from '../oidc/index.ts';
import { TrustedPublishing } from '../registry/trust-rules.ts';
import type { Store } from '../store/index.ts';
import { openTrustRuleStore } from '../store/trust-rule-store-of.ts';

export interface TrustedPublishingConfig {
  /** Accept `http://127.0.0.1…` issuers (tests and local trials only: `serve --allow-insecure-issuer`). */
  allowInsecureIssuer?: boolean;
  /** GitHub Actions' issuer (default https://token.actions.githubusercontent.com; a loopback issuer in tests). */
  githubIssuer?: string;
  /** How issuer documents are fetched (default globalThis.fetch). */
  fetch?: FetchFunction;
  /** Clock skew tolerated on exp, nbf and iat in seconds (default 60). */
  leewaySeconds?: number;
}

/** Trusted publishing over `store`'s database. */
export function openTrustedPublishing(store: Store, config: TrustedPublishingConfig = {}): TrustedPublishing {
  const keys = new IssuerKeyCache({
    fetch: config.fetch ?? ((url, init) => fetch(url, init)),
    limits: { allowInsecureLoopbackIssuer: config.allowInsecureIssuer === true },
  });
  const verifier = new IdTokenVerifier({
    keys,
    ...(config.leewaySeconds === undefined ? {} : { leewaySeconds: config.leewaySeconds }),
  });
  return new TrustedPublishing({
    store,
    rules: openTrustRuleStore(store),
    verifier,
    ...(config.githubIssuer === undefined ? {} : { githubIssuer: config.githubIssuer }),
  });
}

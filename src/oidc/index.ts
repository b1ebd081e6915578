// Trusted publishing, registry side (issue 28): trust rules, OIDC ID-token verification, namespace ownership and
// domain proofs. Pure but for the fetches it is handed; the registry wires it into publish (see docs/trusted-publishing.md).

export * from './authorise-publish.ts';
export * from './domain-proof.ts';
export * from './github-owner.ts';
export * from './issuer-keys.ts';
export * from './issuer-url.ts';
export * from './namespace-policy.ts';
export * from './refusal.ts';
export * from './trust-rule.ts';
export * from './verify-id-token.ts';

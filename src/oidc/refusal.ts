// Refusals of trusted publishing (issue 28): UNAUTHENTICATED (401) when a token cannot be shown authentic, FORBIDDEN
// (403) when an authentic token is not trusted for the namespace; each with a stable reason, never a token or claim.

import { ToolsealError } from '../core/errors.ts';

/** Stable reasons: API like error codes (add, never rename). The message starts with the reason. */
export type OidcRefusalReason =
  | 'malformed'
  | 'algorithm'
  | 'wrong-issuer'
  | 'issuer-unavailable'
  | 'unknown-key'
  | 'signature'
  | 'expired'
  | 'not-yet-valid'
  | 'issued-in-future'
  | 'too-old'
  | 'wrong-audience'
  | 'no-matching-rule'
  | 'namespace-owner'
  | 'oidc-only'
  | 'domain-proof';

const forbiddenReasons: ReadonlySet<OidcRefusalReason> = new Set([
  'no-matching-rule',
  'namespace-owner',
  'oidc-only',
  'domain-proof',
]);

export class OidcRefusal extends ToolsealError {
  readonly reason: OidcRefusalReason;

  constructor(reason: OidcRefusalReason, message: string) {
    super(forbiddenReasons.has(reason) ? 'FORBIDDEN' : 'UNAUTHENTICATED', `${reason}: ${message}`);
    this.reason = reason;
  }
}

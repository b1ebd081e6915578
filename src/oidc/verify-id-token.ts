// Verifying a CI's OIDC ID token against a namespace's trust rules: RFC 7519 (JWT) §7.2 validation through jose,
// RFC 8725 (JWT BCP) §3.1 (an allow-list of algorithms: RS256 and ES256 only) and §3.8 (exact issuer and audience),
// OpenID Connect Core 1.0 §3.1.3.7 (iss, aud, exp, iat), then every pinned claim compared exactly.

import { decodeJwt, decodeProtectedHeader, errors as joseErrors, type JWTPayload, jwtVerify } from 'jose';
import { isJsonObject, type JsonObject } from '../core/json.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { buildOidcProvenance, type PublishProvenance } from '../attest/provenance.ts';
import type { IssuerKeyCache } from './issuer-keys.ts';
import { OidcRefusal } from './refusal.ts';
import { describeTrustRule, type TrustRule } from './trust-rule.ts';

export const ACCEPTED_ALGORITHMS = ['RS256', 'ES256'] as const;
/** Larger compact tokens are refused before any parsing (CI tokens are 1–2 KiB). */
export const MAX_ID_TOKEN_LENGTH = 16 * 1024;

export interface IdTokenVerifierOptions {
  keys: IssuerKeyCache;
  /** The current time (injected for tests). */
  now?: () => Date;
  /** Clock skew tolerated on exp, nbf and iat, in seconds (default 60). */
  leewaySeconds?: number;
  /** Oldest `iat` accepted, in seconds (default 3600: CI tokens live minutes). */
  maxTokenAgeSeconds?: number;
}

/** A token that verified and matched a rule: the rule (by index in the list given) and the provenance to attest. */
export interface TrustedPublish {
  ruleIndex: number;
  rule: TrustRule;
  provenance: PublishProvenance;
  /** The issuer-reported `repository_owner` (GitHub), for the io.github namespace check; undefined when absent. */
  repositoryOwner: string | undefined;
}

/** The shape of a compact JWS (three base64url segments): what tells an ID token from a long-lived bearer token. */
export function looksLikeJwt(bearer: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(bearer);
}

export class IdTokenVerifier {
  private readonly keys: IssuerKeyCache;
  private readonly now: () => Date;
  private readonly leewaySeconds: number;
  private readonly maxTokenAgeSeconds: number;

  constructor(options: IdTokenVerifierOptions) {
    this.keys = options.keys;
    this.now = options.now ?? (() => new Date());
    this.leewaySeconds = options.leewaySeconds ?? 60;
    this.maxTokenAgeSeconds = options.maxTokenAgeSeconds ?? 3600;
  }

  /**
   * Verify `token` and find the first of `rules` (a namespace's) it satisfies. UNAUTHENTICATED when the token is not
   * shown authentic and current for a trusted issuer and audience; FORBIDDEN (no-matching-rule) when it is but no
   * rule's claims all match. Only issuers named by a rule are ever fetched.
   */
  async verify(token: string, rules: readonly TrustRule[]): Promise<TrustedPublish> {
    if (token.length > MAX_ID_TOKEN_LENGTH || !looksLikeJwt(token)) {
      throw new OidcRefusal('malformed', 'the bearer token is not a compact JWT');
    }
    let issuer: unknown;
    let algorithm: unknown;
    let strictPayload: JsonObject;
    try {
      algorithm = decodeProtectedHeader(token).alg;
      issuer = decodeJwt(token).iss;
      // jose reads the segments with JSON.parse (last duplicate wins): the strict parser must agree they are JSON
      // objects without duplicate keys or unsafe numbers, and the claims are then read from its result.
      const [header = '', payload = ''] = token.split('.');
      parseSegment(header);
      strictPayload = parseSegment(payload);
    } catch {
      throw new OidcRefusal('malformed', 'the bearer token is not a compact JWT of strict JSON');
    }
    if (typeof algorithm !== 'string' || !(ACCEPTED_ALGORITHMS as readonly string[]).includes(algorithm)) {
      throw new OidcRefusal('algorithm', `only ${ACCEPTED_ALGORITHMS.join(' and ')} tokens are accepted`);
    }
    const candidates = rules.filter((rule) => rule.issuer === issuer);
    if (typeof issuer !== 'string' || candidates.length === 0) {
      throw new OidcRefusal('wrong-issuer', 'the token comes from no issuer this namespace trusts');
    }
    const verified = await this.verifySignatureAndTimes(token, issuer, candidates);
    const payload: Readonly<Record<string, unknown>> = strictPayload;
    const audiences = typeof verified.aud === 'string' ? [verified.aud] : (verified.aud ?? []);
    for (const [index, rule] of rules.entries()) {
      if (rule.issuer !== issuer || !audiences.includes(rule.audience)) continue;
      if (!matchesClaims(rule, payload)) continue;
      const owner = payload.repository_owner;
      return {
        ruleIndex: index,
        rule,
        provenance: buildOidcProvenance(issuer, payload),
        repositoryOwner: typeof owner === 'string' ? owner : undefined,
      };
    }
    const issuers = [...new Set(candidates.map(describeTrustRule))].join('; ');
    throw new OidcRefusal('no-matching-rule', `the token matches no trust rule of this namespace (rules: ${issuers})`);
  }

  private async verifySignatureAndTimes(
    token: string,
    issuer: string,
    rules: readonly TrustRule[],
  ): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, this.keys.resolverFor(issuer), {
        algorithms: [...ACCEPTED_ALGORITHMS],
        issuer,
        audience: [...new Set(rules.map((rule) => rule.audience))],
        clockTolerance: this.leewaySeconds,
        maxTokenAge: this.maxTokenAgeSeconds,
        currentDate: this.now(),
        requiredClaims: ['iss', 'aud', 'exp', 'iat', 'sub'],
      });
      return payload;
    } catch (error) {
      throw classifyJoseError(error);
    }
  }
}

/** Every claim pinned equal (string, same code units) and every ref claim `PATH@REF` with PATH equal. */
export function matchesClaims(rule: TrustRule, payload: Readonly<Record<string, unknown>>): boolean {
  for (const [name, expected] of Object.entries(rule.claims)) {
    if (payload[name] !== expected) return false;
  }
  for (const [name, expectedPath] of Object.entries(rule.refClaims)) {
    const value = payload[name];
    if (typeof value !== 'string') return false;
    const at = value.indexOf('@');
    if (at < 0 || at === value.length - 1 || value.slice(0, at) !== expectedPath) return false;
  }
  return true;
}

function parseSegment(segment: string): JsonObject {
  const value = parseStrict(Buffer.from(segment, 'base64url'), { maxBytes: MAX_ID_TOKEN_LENGTH, maxDepth: 16 }).value;
  if (!isJsonObject(value)) throw new Error('not a JSON object');
  return value;
}

function classifyJoseError(error: unknown): OidcRefusal {
  if (error instanceof OidcRefusal) return error;
  if (error instanceof joseErrors.JWTExpired) {
    return error.claim === 'iat'
      ? new OidcRefusal('too-old', 'the token was issued too long ago')
      : new OidcRefusal('expired', 'the token has expired');
  }
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    switch (error.claim) {
      case 'nbf':
        return new OidcRefusal('not-yet-valid', 'the token is not valid yet');
      case 'iat':
        return error.reason === 'check_failed'
          ? new OidcRefusal('issued-in-future', 'the token was issued in the future')
          : new OidcRefusal('malformed', 'the token lacks a valid iat claim');
      case 'aud':
        return new OidcRefusal('wrong-audience', 'the token is for another audience');
      case 'iss':
        return new OidcRefusal('wrong-issuer', 'the token comes from another issuer');
      default:
        return new OidcRefusal('malformed', `the token lacks a valid ${error.claim} claim`);
    }
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey) {
    return new OidcRefusal('unknown-key', 'the token was signed with a key the issuer does not publish');
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) {
    return new OidcRefusal('algorithm', `only ${ACCEPTED_ALGORITHMS.join(' and ')} tokens are accepted`);
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new OidcRefusal('signature', 'the token signature does not verify');
  }
  return new OidcRefusal('malformed', 'the token could not be verified');
}

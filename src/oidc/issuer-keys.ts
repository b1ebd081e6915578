// An OIDC issuer's signing keys: OpenID Connect Discovery 1.0 §4 (the configuration at
// ISSUER/.well-known/openid-configuration, whose `issuer` must equal the issuer exactly, §4.3) and its `jwks_uri`
// (RFC 7517 JWK Set), cached per issuer and fetched again on an unknown `kid`, at most once per refresh interval.

import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import {
  defaultIssuerFetchLimits,
  type FetchFunction,
  fetchIssuerJson,
  type IssuerFetchLimits,
  isFetchableIssuerUrl,
} from './issuer-url.ts';
import { OidcRefusal } from './refusal.ts';

export interface IssuerKeyCacheOptions {
  fetch: FetchFunction;
  limits?: Partial<IssuerFetchLimits>;
  /** Milliseconds since the epoch (injected for tests). */
  now?: () => number;
  /** Keys older than this are fetched again before use (default 1 h). */
  maxAgeMs?: number;
  /** An unknown `kid` fetches the JWKS again at most this often per issuer (default 60 s). */
  refreshIntervalMs?: number;
  /** Most keys kept from one JWKS (default 32). */
  maxKeys?: number;
}

interface CachedKeys {
  resolve: JWTVerifyGetKey;
  fetchedAt: number;
}

/** The keys of the issuers the registry trusts; one instance per registry process. */
export class IssuerKeyCache {
  private readonly fetch: FetchFunction;
  private readonly limits: IssuerFetchLimits;
  private readonly now: () => number;
  private readonly maxAgeMs: number;
  private readonly refreshIntervalMs: number;
  private readonly maxKeys: number;
  private readonly cached = new Map<string, CachedKeys>();
  private readonly inFlight = new Map<string, Promise<CachedKeys>>();
  /** When each issuer was last fetched or tried: failures and unknown kids fetch again only after the interval. */
  private readonly lastAttemptAt = new Map<string, number>();

  constructor(options: IssuerKeyCacheOptions) {
    this.fetch = options.fetch;
    this.limits = { ...defaultIssuerFetchLimits, ...options.limits };
    this.now = options.now ?? Date.now;
    this.maxAgeMs = options.maxAgeMs ?? 3_600_000;
    this.refreshIntervalMs = options.refreshIntervalMs ?? 60_000;
    this.maxKeys = options.maxKeys ?? 32;
  }

  get allowInsecureLoopbackIssuer(): boolean {
    return this.limits.allowInsecureLoopbackIssuer;
  }

  /**
   * A jose key resolver for tokens of `issuer` (which the caller took from a trust rule, never from a token alone):
   * an unknown `kid` fetches the JWKS once more when the last fetch is older than the refresh interval.
   */
  resolverFor(issuer: string): JWTVerifyGetKey {
    return async (header, token) => {
      let keys = await this.load(issuer, false);
      try {
        return await keys.resolve(header, token);
      } catch (error) {
        if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
        if (!this.mayFetch(issuer)) throw error;
        keys = await this.load(issuer, true);
        return await keys.resolve(header, token);
      }
    };
  }

  private async load(issuer: string, refresh: boolean): Promise<CachedKeys> {
    const cached = this.cached.get(issuer);
    if (cached !== undefined && !refresh && this.now() - cached.fetchedAt < this.maxAgeMs) return cached;
    const running = this.inFlight.get(issuer);
    if (running !== undefined) return running;
    if (cached === undefined && !this.mayFetch(issuer)) {
      throw new OidcRefusal('issuer-unavailable', 'the issuer was unreachable moments ago; try again shortly');
    }
    this.lastAttemptAt.set(issuer, this.now());
    const loading = this.fetchKeys(issuer).finally(() => this.inFlight.delete(issuer));
    this.inFlight.set(issuer, loading);
    const keys = await loading;
    this.cached.set(issuer, keys);
    return keys;
  }

  private mayFetch(issuer: string): boolean {
    const last = this.lastAttemptAt.get(issuer);
    return last === undefined || this.now() - last >= this.refreshIntervalMs;
  }

  private async fetchKeys(issuer: string): Promise<CachedKeys> {
    const configuration = await fetchIssuerJson(discoveryUrlOf(issuer), this.fetch, this.limits);
    if (!isJsonObject(configuration) || configuration.issuer !== issuer) {
      throw new OidcRefusal('issuer-unavailable', 'the issuer configuration names another issuer');
    }
    const jwksUri = configuration.jwks_uri;
    if (typeof jwksUri !== 'string' || !URL.canParse(jwksUri) || !isFetchableIssuerUrl(new URL(jwksUri), this.limits)) {
      throw new OidcRefusal('issuer-unavailable', 'the issuer configuration has no https: jwks_uri');
    }
    const jwks = readKeySet(await fetchIssuerJson(jwksUri, this.fetch, this.limits), this.maxKeys);
    return { resolve: createLocalJWKSet(jwks), fetchedAt: this.now() };
  }
}

/** OIDC Discovery §4.1: the issuer with any trailing `/` removed, then `/.well-known/openid-configuration`. */
export function discoveryUrlOf(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/** The JWK Set's signing keys of the types we accept (RSA, EC P-256); other keys are left out, not refused. */
function readKeySet(value: JsonValue, maxKeys: number): JSONWebKeySet {
  if (!isJsonObject(value) || !Array.isArray(value.keys)) {
    throw new OidcRefusal('issuer-unavailable', 'the issuer JWKS is not a JWK Set');
  }
  const keys = value.keys.filter(
    (key) =>
      isJsonObject(key) &&
      (key.kty === 'RSA' || (key.kty === 'EC' && key.crv === 'P-256')) &&
      (key.use === undefined || key.use === 'sig') &&
      key.d === undefined,
  );
  if (keys.length > maxKeys) throw new OidcRefusal('issuer-unavailable', `the issuer JWKS has over ${maxKeys} keys`);
  return { keys: keys as unknown as JSONWebKeySet['keys'] };
}

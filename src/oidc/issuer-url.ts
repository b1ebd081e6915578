// Fetching an OIDC issuer's documents (OpenID Connect Discovery 1.0 §4, RFC 7517 JWK Set) within bounds: https only
// (loopback http only when allowed), a byte limit read from the stream, a time limit, no redirects, strict JSON.

import { ToolsealError } from '../core/errors.ts';
import type { JsonValue } from '../core/json.ts';
import { readStreamWithin } from '../core/stream.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { OidcRefusal } from './refusal.ts';

/** The fetch the registry hands in (globalThis.fetch in production, the same in tests against 127.0.0.1). */
export type FetchFunction = (url: string, init: RequestInit) => Promise<Response>;

export interface IssuerFetchLimits {
  /** Largest discovery document or JWKS accepted (default 64 KiB). */
  maxBytes: number;
  /** Time for one fetch, headers and body (default 5 s). */
  timeoutMs: number;
  /** Accept `http:` for loopback hosts (tests, `serve --allow-insecure-issuer`). */
  allowInsecureLoopbackIssuer: boolean;
}

export const defaultIssuerFetchLimits: IssuerFetchLimits = {
  maxBytes: 64 * 1024,
  timeoutMs: 5000,
  allowInsecureLoopbackIssuer: false,
};

export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** True when `url` may be fetched under `limits`: https, or loopback http when allowed. */
export function isFetchableIssuerUrl(
  url: URL,
  limits: Pick<IssuerFetchLimits, 'allowInsecureLoopbackIssuer'>,
): boolean {
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && limits.allowInsecureLoopbackIssuer && isLoopbackHost(url.hostname);
}

/**
 * GET `url` and parse its body strictly as JSON. Every failure is UNAUTHENTICATED (the token cannot be checked):
 * the message names the issuer's host and what went wrong, never a token.
 */
export async function fetchIssuerJson(
  url: string,
  fetch: FetchFunction,
  limits: IssuerFetchLimits,
): Promise<JsonValue> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuseIssuer('issuer document URL is not a URL');
  }
  if (!isFetchableIssuerUrl(parsed, limits))
    throw refuseIssuer(`issuer documents must be fetched over https: (${parsed.host})`);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), limits.timeoutMs);
  try {
    const response = await fetch(parsed.href, {
      method: 'GET',
      redirect: 'error',
      signal: controller.signal,
      headers: { Accept: 'application/json' },
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw refuseIssuer(`issuer ${parsed.host} answered ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length') ?? '0');
    if (declared > limits.maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw refuseIssuer(`issuer document from ${parsed.host} is larger than ${limits.maxBytes} bytes`);
    }
    const bytes = await readStreamWithin(response.body, limits.maxBytes, () =>
      refuseIssuer(`issuer document from ${parsed.host} is larger than ${limits.maxBytes} bytes`),
    );
    try {
      return parseStrict(bytes, { maxBytes: limits.maxBytes, maxDepth: 16 }).value;
    } catch {
      throw refuseIssuer(`issuer document from ${parsed.host} is not strict JSON`);
    }
  } catch (error) {
    if (error instanceof ToolsealError) throw error;
    throw refuseIssuer(`issuer ${parsed.host} is unreachable`);
  } finally {
    clearTimeout(timer);
  }
}

function refuseIssuer(message: string): ToolsealError {
  return new OidcRefusal('issuer-unavailable', message);
}

// Headers across the HTTP guard (RFC 9110 §7.6.1 hop-by-hop fields; MCP 2025-06-18 "Transports" §Streamable HTTP,
// §Security Warning: local servers validate Origin against DNS rebinding and bind to loopback only; Fetch §3.2 CORS
// for the web origins allowed).

import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Fields that describe one connection, never forwarded (RFC 9110 §7.6.1), with the fields Connection names. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Request fields that belong to the client's hop to the guard: the guard's own address (`host`), the page that
 * called it (`origin`, `referer`), and the framing and encoding fetch sets itself.
 */
const GUARD_HOP_REQUEST = new Set(['host', 'origin', 'referer', 'content-length', 'accept-encoding', 'expect']);

/** Response fields fetch already applied (it decodes the body) or that the guard recomputes. */
const GUARD_HOP_RESPONSE = new Set(['content-length', 'content-encoding', 'location']);

const NAMED_NONE: ReadonlySet<string> = new Set();
/** The fields the latest Connection values named (clients repeat one value, `keep-alive` mostly), kept once. */
const namedCache = new Map<string, ReadonlySet<string>>();
const NAMED_CACHE_SIZE = 16;

function namedByConnection(connection: string | string[] | undefined): ReadonlySet<string> {
  if (connection === undefined) return NAMED_NONE;
  const value = Array.isArray(connection) ? connection.join(',') : connection;
  let named = namedCache.get(value);
  if (named === undefined) {
    named = new Set(
      value
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter((name) => name !== ''),
    );
    if (namedCache.size >= NAMED_CACHE_SIZE) namedCache.clear();
    namedCache.set(value, named);
  }
  return named;
}

/** Header fields by lower-case name (node:http's shape): a value, or the values of a repeated field. */
export type HeaderFields = Record<string, string | string[] | undefined>;

/** One field's value as a single string (a repeated field joined as RFC 9110 §5.3 allows), or undefined. */
export function readField(fields: HeaderFields, name: string): string | undefined {
  const value = fields[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The client's end-to-end request fields (Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, …). */
export function selectUpstreamRequestHeaders(incoming: IncomingHttpHeaders): HeaderFields {
  const named = namedByConnection(incoming['connection']);
  const headers: HeaderFields = {};
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || HOP_BY_HOP.has(name) || GUARD_HOP_REQUEST.has(name) || named.has(name)) continue;
    headers[name] = value;
  }
  return headers;
}

/** The upstream's end-to-end response fields for the client (Mcp-Session-Id, Content-Type, WWW-Authenticate, …). */
export function selectClientResponseHeaders(upstream: HeaderFields): OutgoingHttpHeaders {
  const named = namedByConnection(upstream['connection']);
  const headers: OutgoingHttpHeaders = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || HOP_BY_HOP.has(name) || GUARD_HOP_RESPONSE.has(name) || named.has(name)) continue;
    // CORS is the guard's own, for the origins it allows (the server's would speak of other origins).
    if (name.startsWith('access-control-')) continue;
    headers[name] = value;
  }
  return headers;
}

/** The loopback names a client may use for the guard: its Host values and its own origins. */
export interface LoopbackIdentity {
  hosts: ReadonlySet<string>;
  origins: ReadonlySet<string>;
}

export function describeLoopback(port: number, extraOrigins: readonly string[]): LoopbackIdentity {
  return {
    hosts: new Set([`127.0.0.1:${port}`, `localhost:${port}`]),
    origins: new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`, ...extraOrigins.map(normaliseOrigin)]),
  };
}

/** An origin as browsers send it: scheme://host[:port], lower case, no path or trailing slash. */
export function normaliseOrigin(origin: string): string {
  const url = new URL(origin);
  if (url.origin === 'null') throw new TypeError(`not an http(s) origin: ${origin}`);
  return url.origin.toLowerCase();
}

/**
 * Why a request must be refused before anything else (403), or undefined: a Host that is not the guard's loopback
 * address (a DNS-rebound name), or an Origin that is not allowed.
 */
export function findRebindingRefusal(incoming: IncomingHttpHeaders, identity: LoopbackIdentity): string | undefined {
  const host = incoming['host']?.toLowerCase();
  if (host === undefined || !identity.hosts.has(host)) return 'the Host header is not the guard’s loopback address';
  const origin = incoming['origin'];
  if (origin === undefined) return undefined;
  let normalised: string;
  try {
    normalised = normaliseOrigin(origin);
  } catch {
    return 'the Origin header is not allowed';
  }
  return identity.origins.has(normalised) ? undefined : 'the Origin header is not allowed';
}

/** Response fields a web client on an allowed origin may read (Fetch §3.2.3 CORS-safelisted beyond these: none). */
const EXPOSED_HEADERS = 'mcp-session-id, mcp-protocol-version, www-authenticate';

/**
 * CORS for a request whose Origin passed findRebindingRefusal: the answer names that origin, so a web client there
 * can read it. A preflight (OPTIONS) is answered here; returns true when it was.
 */
export function applyCors(incoming: IncomingHttpHeaders, method: string | undefined, res: ServerResponse): boolean {
  const origin = incoming['origin'];
  if (origin !== undefined) {
    res.setHeader('access-control-allow-origin', origin);
    res.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    res.setHeader('vary', 'origin');
  }
  if (method !== 'OPTIONS') return false;
  res.setHeader('allow', 'GET, POST, DELETE, OPTIONS');
  if (origin !== undefined) {
    res.setHeader('access-control-allow-methods', 'GET, POST, DELETE');
    const requested = incoming['access-control-request-headers'];
    if (requested !== undefined) res.setHeader('access-control-allow-headers', requested);
    res.setHeader('access-control-max-age', '600');
  }
  res.writeHead(204).end();
  return true;
}

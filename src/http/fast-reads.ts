// Reads at the limit (issue 16 §4): a GET of an immutable resource the router already answered from the verified
// cache is answered again in front of the router, with the entry's precomputed headers, after the same integrity
// check (its bytes still equal the copy that matched their sha256). Anything unusual goes to the router: another
// method (HEAD too), a conditional or range request (RFC 9110 §13.1, §14.2), a request with a body, a Host or target
// @hono/node-server would not take as it is, a target the router has not answered from the cache.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { hasIntactBytes, type ImmutableBodyCache } from './immutable-body-cache.ts';

/** Request headers that change the answer or ask for another one: the router decides these. */
const ROUTER_HEADERS = [
  'if-none-match',
  'if-match',
  'if-modified-since',
  'if-unmodified-since',
  'if-range',
  'range',
  'content-length',
  'transfer-encoding',
] as const;

/** A Host @hono/node-server takes as it is (its reValidHost); any other goes to the router, which checks it. */
const PLAIN_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
/** A request target @hono/node-server uses as it is (its reValidRequestUrl, without dot segments). */
const PLAIN_TARGET = /^\/[!#$&-;=?-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;

/**
 * Answer `request` from `cache` when it is a plain GET of a target the router answered from a kept entry whose
 * bytes still match their digest; returns false (having written nothing) for the router to answer it.
 */
export function answerFromCache(
  cache: ImmutableBodyCache,
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  if (request.method !== 'GET') return false;
  const target = request.url;
  if (target === undefined) return false;
  const entry = cache.lookup(target);
  if (entry === undefined) return false;
  const headers = request.headers;
  for (const name of ROUTER_HEADERS) if (headers[name] !== undefined) return false;
  const host = headers.host;
  if (host === undefined || !PLAIN_HOST.test(host)) return false;
  if (!PLAIN_TARGET.test(target) || DOT_SEGMENT.test(target)) return false;
  // Bytes that fail their digest are never sent: the router answers (INTEGRITY_ERROR), as it would have.
  if (!hasIntactBytes(entry)) return false;
  response.writeHead(200, entry.rawHeaders as string[]);
  response.end(entry.bytes);
  return true;
}

// Immutable bodies (manifest bytes by version or digest) kept in memory and sent only after their sha256 re-checks:
// ETag and 304 per RFC 9110 §8.8.3 and §13.1.2 (weak comparison), Repr-Digest per RFC 9530 §3, immutable per RFC 8246.

import { encodeBase64 } from '../core/bytes.ts';
import { computeDigest, type Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { JSON_CONTENT_TYPE } from '../protocol/wire.ts';

/** Cache-Control of a response that never changes (RFC 8246). */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export interface CachedBody {
  bytes: Uint8Array;
  digest: Sha256Digest;
  etag: string;
  /**
   * Built once per entry, exactly as Hono's Headers put them on the wire before (lowercase names in sorted
   * order): the hot read path hands this plain object to `new Response` with no per-request Headers work.
   */
  headers: Readonly<Record<string, string>>;
  notModifiedHeaders: Readonly<Record<string, string>>;
}

/** Insertion-ordered (oldest evicted first) within `capacity` bytes; 0 keeps nothing; a body over a quarter is never kept. */
export class ImmutableBodyCache {
  private readonly entries = new Map<string, CachedBody>();
  private bytes = 0;

  constructor(private readonly capacity: number) {}

  get(key: string): CachedBody | undefined {
    return this.entries.get(key);
  }

  /** Build the entry for `bytes` (application/json, `link` as its Link header) and keep it if it fits. */
  put(key: string, bytes: Uint8Array, digest: Sha256Digest, link: string): CachedBody {
    const entry = buildCachedBody(bytes, digest, link);
    if (this.capacity > 0 && bytes.byteLength <= this.capacity / 4) {
      while (this.bytes + bytes.byteLength > this.capacity && this.entries.size > 0) {
        const oldest = this.entries.keys().next().value as string;
        this.bytes -= this.entries.get(oldest)!.bytes.byteLength;
        this.entries.delete(oldest);
      }
      this.entries.set(key, entry);
      this.bytes += bytes.byteLength;
    }
    return entry;
  }
}

function buildCachedBody(bytes: Uint8Array, digest: Sha256Digest, link: string): CachedBody {
  const etag = `"${digest}"`;
  return {
    bytes,
    digest,
    etag,
    headers: {
      'cache-control': IMMUTABLE_CACHE_CONTROL,
      'content-length': String(bytes.byteLength),
      'content-type': JSON_CONTENT_TYPE,
      etag,
      link,
      // RFC 9530 §3: Repr-Digest with the sha-256 algorithm, a structured-field byte sequence.
      'repr-digest': `sha-256=:${encodeBase64(Buffer.from(digest.slice('sha256:'.length), 'hex'))}:`,
    },
    notModifiedHeaders: { 'cache-control': IMMUTABLE_CACHE_CONTROL, etag },
  };
}

/**
 * The entry's 200 (or 304 when `ifNoneMatch` matches), after re-checking sha256(bytes) against its digest:
 * bytes that fail it are INTEGRITY_ERROR and not one of them is sent.
 */
export function sendVerifiedBody(entry: CachedBody, ifNoneMatch: string | undefined): Response {
  if (computeDigest(entry.bytes) !== entry.digest) {
    throw new ToolsealError('INTEGRITY_ERROR', 'stored bytes fail their digest; refusing to serve them');
  }
  // RFC 9110 §13.1.2: If-None-Match uses the weak comparison (W/ is ignored) and `*` matches any current representation.
  if (ifNoneMatch?.split(',').some((tag) => matchesEntityTag(tag.trim(), entry.etag))) {
    return new Response(null, { status: 304, headers: entry.notModifiedHeaders });
  }
  // The prebuilt plain header object goes to one writeHead in @hono/node-server; c.body() would build a
  // Headers per send and @hono/node-server would turn it back into an object.
  return new Response(entry.bytes as Uint8Array<ArrayBuffer>, { status: 200, headers: entry.headers });
}

function matchesEntityTag(candidate: string, etag: string): boolean {
  return candidate === '*' || candidate === etag || candidate === `W/${etag}`;
}

// Immutable bodies (manifest bytes by version or digest, attestations) kept in memory with a private copy checked
// against their sha256 once, and sent only while they are still equal to it: ETag and 304 per RFC 9110 §8.8.3 and
// §13.1.2 (weak comparison), Repr-Digest per RFC 9530 §3, immutable per RFC 8246; and which request targets the router
// answered with which entry (issue 16 §4: ./fast-reads.ts).

import { encodeBase64 } from '../core/bytes.ts';
import { computeDigest, type Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { JSON_CONTENT_TYPE } from '../protocol/wire.ts';

/** Cache-Control of a response that never changes (RFC 8246). */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/** Bytes of immutable responses kept in memory unless configured otherwise. */
export const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;

/** Request targets remembered before the index starts over, and the longest one remembered. */
const MAX_TARGETS = 10_000;
const MAX_TARGET_LENGTH = 512;

export interface CachedBody {
  bytes: Uint8Array;
  digest: Sha256Digest;
  /**
   * A private copy of `bytes`, taken when the entry was built and then found to match `digest` (undefined when it
   * did not): never sent and never handed out, so bytes equal to it are bytes that match the digest.
   */
  checked: Uint8Array | undefined;
  etag: string;
  /**
   * Built once per entry, exactly as Hono's Headers put them on the wire before (lowercase names in sorted
   * order): the hot read path hands this plain object to `new Response` with no per-request Headers work.
   */
  headers: Readonly<Record<string, string>>;
  /** The same headers as one flat [name, value, …] list, for node:http's writeHead (./fast-reads.ts). */
  rawHeaders: readonly string[];
  notModifiedHeaders: Readonly<Record<string, string>>;
}

/**
 * Insertion-ordered (oldest evicted first) within `capacity` bytes of bodies (each with its checked copy, so about
 * twice that in memory); 0 keeps nothing; a body over a quarter is never kept.
 */
export class ImmutableBodyCache {
  private readonly entries = new Map<string, CachedBody>();
  /** Request targets (exactly as received) the router answered from an entry, by that entry's key. */
  private readonly targets = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly capacity: number) {}

  get(key: string): CachedBody | undefined {
    return this.entries.get(key);
  }

  /**
   * Remember that the router answers a GET of `target` (the request target exactly as received) from the entry
   * `key`, while that entry is kept: the resource is immutable, so every later GET of it gets the same answer.
   */
  remember(target: string | undefined, key: string): void {
    if (target === undefined || target.length > MAX_TARGET_LENGTH || !this.entries.has(key)) return;
    if (this.targets.get(target) === key) return;
    if (this.targets.size >= MAX_TARGETS) this.targets.clear();
    this.targets.set(target, key);
  }

  /** The entry the router answered `target` from, if it is still kept. */
  lookup(target: string): CachedBody | undefined {
    const key = this.targets.get(target);
    return key === undefined ? undefined : this.entries.get(key);
  }

  /** Build the entry for `bytes` (application/json, `link` as its Link header) and keep it if it fits. */
  put(key: string, bytes: Uint8Array, digest: Sha256Digest, link: string): CachedBody {
    return this.keep(key, buildCachedBody(bytes, digest, manifestHeaders(bytes, digest, link)));
  }

  /**
   * Build the entry for `bytes` with exactly `headers` (lowercase names, in the order to send them; an `etag`
   * among them makes If-None-Match answerable) and Content-Length, and keep it if it fits.
   */
  putWithHeaders(key: string, bytes: Uint8Array, digest: Sha256Digest, headers: Record<string, string>): CachedBody {
    return this.keep(key, buildCachedBody(bytes, digest, withContentLength(headers, bytes.byteLength)));
  }

  private keep(key: string, entry: CachedBody): CachedBody {
    const { bytes } = entry;
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

function manifestHeaders(bytes: Uint8Array, digest: Sha256Digest, link: string): Record<string, string> {
  return {
    'cache-control': IMMUTABLE_CACHE_CONTROL,
    'content-length': String(bytes.byteLength),
    'content-type': JSON_CONTENT_TYPE,
    etag: `"${digest}"`,
    link,
    // RFC 9530 §3: Repr-Digest with the sha-256 algorithm, a structured-field byte sequence.
    'repr-digest': `sha-256=:${encodeBase64(Buffer.from(digest.slice('sha256:'.length), 'hex'))}:`,
  };
}

/** `headers` with content-length in sorted position (as Hono's Headers would write it). */
function withContentLength(headers: Record<string, string>, length: number): Record<string, string> {
  const all: Record<string, string> = { ...headers, 'content-length': String(length) };
  return Object.fromEntries(
    Object.keys(all)
      .sort()
      .map((name) => [name, all[name] as string]),
  );
}

function buildCachedBody(bytes: Uint8Array, digest: Sha256Digest, headers: Record<string, string>): CachedBody {
  const etag = headers['etag'] ?? '';
  const copy = Uint8Array.from(bytes);
  return {
    bytes,
    digest,
    checked: computeDigest(copy) === digest ? copy : undefined,
    etag,
    headers,
    rawHeaders: Object.entries(headers).flat(),
    notModifiedHeaders: etag === '' ? {} : { 'cache-control': IMMUTABLE_CACHE_CONTROL, etag },
  };
}

/**
 * The entry's 200 (or 304 when `ifNoneMatch` matches), after checking its bytes against the copy that matched its
 * digest: bytes that differ (or a copy that never matched) are INTEGRITY_ERROR and not one of them is sent.
 */
export function sendVerifiedBody(entry: CachedBody, ifNoneMatch: string | undefined): Response {
  if (!hasIntactBytes(entry)) {
    throw new ToolsealError('INTEGRITY_ERROR', 'stored bytes fail their digest; refusing to serve them');
  }
  // RFC 9110 §13.1.2: If-None-Match uses the weak comparison (W/ is ignored) and `*` matches any current representation.
  if (entry.etag !== '' && ifNoneMatch?.split(',').some((tag) => matchesEntityTag(tag.trim(), entry.etag))) {
    return new Response(null, { status: 304, headers: entry.notModifiedHeaders });
  }
  // The prebuilt plain header object goes to one writeHead in @hono/node-server; c.body() would build a
  // Headers per send and @hono/node-server would turn it back into an object.
  return new Response(entry.bytes as Uint8Array<ArrayBuffer>, { status: 200, headers: entry.headers });
}

/**
 * The entry's bytes still equal the private copy that matched its digest (a byte comparison, a fraction of the cost
 * of re-hashing them): checked before every byte is sent, on either path.
 */
export function hasIntactBytes(entry: CachedBody): boolean {
  return entry.checked !== undefined && Buffer.compare(entry.bytes, entry.checked) === 0;
}

/** The request target exactly as received, from @hono/node-server's bindings (undefined elsewhere, e.g. app.request). */
export function readRawTarget(env: unknown): string | undefined {
  const incoming = (env as { incoming?: { url?: unknown } } | undefined)?.incoming;
  return typeof incoming?.url === 'string' ? incoming.url : undefined;
}

function matchesEntityTag(candidate: string, etag: string): boolean {
  return candidate === '*' || candidate === etag || candidate === `W/${etag}`;
}

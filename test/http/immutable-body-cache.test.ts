// ImmutableBodyCache and sendVerifiedBody: exact prebuilt headers, the sha256 re-check before any byte, weak
// If-None-Match comparison (RFC 9110 §13.1.2) and byte-bounded eviction.

import { describe, expect, it } from 'vitest';
import { computeDigest } from '../../src/core/digest.ts';
import { ToolsealError } from '../../src/core/errors.ts';
import { IMMUTABLE_CACHE_CONTROL, ImmutableBodyCache, sendVerifiedBody } from '../../src/http/immutable-body-cache.ts';
import { reprDigestOf, utf8 } from '../helpers/registry-helpers.ts';

const LINK = '</v1/attestations/x>; rel="attestation"; type="application/json"';

describe('ImmutableBodyCache', () => {
  it('builds the exact 200 and 304 header objects once per entry', () => {
    const bytes = utf8('{"a":1}');
    const digest = computeDigest(bytes);
    const entry = new ImmutableBodyCache(1024).put('k', bytes, digest, LINK);
    expect(entry.etag).toBe(`"${digest}"`);
    expect(Object.entries(entry.headers)).toEqual([
      ['cache-control', IMMUTABLE_CACHE_CONTROL],
      ['content-length', '7'],
      ['content-type', 'application/json'],
      ['etag', `"${digest}"`],
      ['link', LINK],
      ['repr-digest', reprDigestOf(bytes)],
    ]);
    expect(entry.notModifiedHeaders).toEqual({ 'cache-control': IMMUTABLE_CACHE_CONTROL, etag: `"${digest}"` });
  });

  it('keeps entries within its byte capacity, evicting the oldest first; 0 and oversize bodies keep nothing', () => {
    const cache = new ImmutableBodyCache(400);
    const body = (n: number): Uint8Array => new Uint8Array(100).fill(n);
    for (const n of [1, 2, 3, 4]) cache.put(`k${n}`, body(n), computeDigest(body(n)), LINK);
    expect(['k1', 'k2', 'k3', 'k4'].map((k) => cache.get(k) !== undefined)).toEqual([true, true, true, true]);
    cache.put('k5', body(5), computeDigest(body(5)), LINK);
    expect(['k1', 'k2', 'k5'].map((k) => cache.get(k) !== undefined)).toEqual([false, true, true]);
    const big = new Uint8Array(101);
    expect(cache.put('big', big, computeDigest(big), LINK).bytes).toBe(big);
    expect(cache.get('big')).toBeUndefined();
    const none = new ImmutableBodyCache(0);
    none.put('k', body(1), computeDigest(body(1)), LINK);
    expect(none.get('k')).toBeUndefined();
  });
});

describe('sendVerifiedBody', () => {
  const bytes = utf8('{"name":"x"}');
  const digest = computeDigest(bytes);

  it('sends the bytes with the prebuilt headers, and 304 for a matching If-None-Match (weak comparison, lists, *)', async () => {
    const entry = new ImmutableBodyCache(0).put('k', bytes, digest, LINK);
    const ok = sendVerifiedBody(entry, undefined);
    expect(ok.status).toBe(200);
    expect(new Uint8Array(await ok.arrayBuffer())).toEqual(bytes);
    expect(ok.headers.get('ETag')).toBe(`"${digest}"`);
    expect(ok.headers.get('Repr-Digest')).toBe(reprDigestOf(bytes));
    for (const tag of [`"${digest}"`, `W/"${digest}"`, `"other", W/"${digest}"`, '*', ` "${digest}" `]) {
      const response = sendVerifiedBody(entry, tag);
      expect(response.status, tag).toBe(304);
      expect(await response.text()).toBe('');
      expect([...response.headers]).toEqual([
        ['cache-control', IMMUTABLE_CACHE_CONTROL],
        ['etag', `"${digest}"`],
      ]);
    }
    for (const tag of ['"other"', digest, `W/${digest}`, ''])
      expect(sendVerifiedBody(entry, tag).status, tag).toBe(200);
  });

  it('refuses with INTEGRITY_ERROR, before any byte, when the bytes no longer match their digest (304 too)', () => {
    const tampered = Uint8Array.from(bytes);
    const entry = new ImmutableBodyCache(1024).put('k', tampered, digest, LINK);
    tampered[2] = (tampered[2] ?? 0) ^ 1;
    for (const ifNoneMatch of [undefined, `"${digest}"`]) {
      let thrown: unknown;
      try {
        sendVerifiedBody(entry, ifNoneMatch);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ToolsealError);
      expect((thrown as ToolsealError).code).toBe('INTEGRITY_ERROR');
    }
  });
});

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

describe('ImmutableBodyCache request targets and other headers', () => {
  const body = (n: number): Uint8Array => new Uint8Array(100).fill(n);

  it('remembers a target only for a kept entry, forgets it with the entry, and never a very long one', () => {
    const cache = new ImmutableBodyCache(400);
    cache.put('k1', body(1), computeDigest(body(1)), LINK);
    cache.remember('/a', 'k1');
    cache.remember('/b', 'missing');
    cache.remember(undefined, 'k1');
    cache.remember(`/${'x'.repeat(600)}`, 'k1');
    expect(cache.lookup('/a')?.bytes).toEqual(body(1));
    expect(cache.lookup('/b')).toBeUndefined();
    expect(cache.lookup(`/${'x'.repeat(600)}`)).toBeUndefined();
    for (const n of [2, 3, 4, 5]) cache.put(`k${n}`, body(n), computeDigest(body(n)), LINK); // evicts k1
    expect(cache.get('k1')).toBeUndefined();
    expect(cache.lookup('/a')).toBeUndefined();
    const none = new ImmutableBodyCache(0);
    none.put('k', body(1), computeDigest(body(1)), LINK);
    none.remember('/a', 'k');
    expect(none.lookup('/a')).toBeUndefined();
  });

  it('putWithHeaders: exactly the given headers plus Content-Length, sorted; raw headers in the same order', () => {
    const bytes = utf8('{"payload":"x"}');
    const digest = computeDigest(bytes);
    const entry = new ImmutableBodyCache(1024).putWithHeaders('a', bytes, digest, {
      etag: `"${digest}"`,
      'content-type': 'application/jose+json',
      'cache-control': IMMUTABLE_CACHE_CONTROL,
    });
    expect(Object.entries(entry.headers)).toEqual([
      ['cache-control', IMMUTABLE_CACHE_CONTROL],
      ['content-length', String(bytes.byteLength)],
      ['content-type', 'application/jose+json'],
      ['etag', `"${digest}"`],
    ]);
    expect(entry.rawHeaders).toEqual(Object.entries(entry.headers).flat());
    expect(sendVerifiedBody(entry, `"${digest}"`).status).toBe(304);
    // Without an ETag there is nothing to match: If-None-Match never makes it a 304.
    const plain = new ImmutableBodyCache(1024).putWithHeaders('t', bytes, digest, { 'content-type': 'x/y' });
    expect(plain.notModifiedHeaders).toEqual({});
    for (const tag of ['*', '""']) expect(sendVerifiedBody(plain, tag).status).toBe(200);
  });
});

describe('the checked copy', () => {
  const refusal = (run: () => unknown): string | undefined => {
    try {
      run();
    } catch (error) {
      return error instanceof ToolsealError ? error.code : String(error);
    }
    return undefined;
  };

  it('bytes that never matched their digest, or a copy that changed, are INTEGRITY_ERROR before any byte', () => {
    const bytes = utf8('{"name":"x"}');
    const wrong = new ImmutableBodyCache(1024).put('k', bytes, computeDigest(utf8('{}')), LINK);
    expect(wrong.checked).toBeUndefined();
    expect(refusal(() => sendVerifiedBody(wrong, undefined))).toBe('INTEGRITY_ERROR');
    const entry = new ImmutableBodyCache(1024).put('k', bytes, computeDigest(bytes), LINK);
    expect(entry.checked).not.toBe(entry.bytes);
    expect(refusal(() => sendVerifiedBody(entry, undefined))).toBeUndefined();
    entry.checked![0] = 0x20;
    expect(refusal(() => sendVerifiedBody(entry, undefined))).toBe('INTEGRITY_ERROR');
  });
});

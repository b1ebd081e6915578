// GET /v1/manifests (search, paged by an opaque cursor), a manifest's versions, a version's exact bytes and its
// attestation (RFC 7515 §7.2 flattened JWS), both through the verified cache (which also remembers the request target
// for the fast read path, issue 16 §4), and `latest` as a 302 (RFC 9110 §15.4.3).

import { computeDigest } from '../../core/digest.ts';
import { ToolsealError } from '../../core/errors.ts';
import { formatManifestRef } from '../../protocol/manifest-ref.ts';
import { attestationPath, bundlePath, versionPath } from '../../protocol/routes.ts';
import { SIGSTORE_BUNDLE_MEDIA_TYPE } from '../../attest/index.ts';
import { JOSE_JSON_CONTENT_TYPE, type ManifestListResponse, type VersionListResponse } from '../../protocol/wire.ts';
import type { Registry } from '../../registry/index.ts';
import { type App, readManifestName, readQuery } from '../app-env.ts';
import {
  IMMUTABLE_CACHE_CONTROL,
  type ImmutableBodyCache,
  readRawTarget,
  sendVerifiedBody,
} from '../immutable-body-cache.ts';
import { mountOperation } from '../operations.ts';

export function mountManifestRoutes(app: App, registry: Registry, cache: ImmutableBodyCache): void {
  mountOperation(app, 'manifests', async (c) => {
    const query = readQuery(c, 'q') || undefined;
    const limit = readLimit(readQuery(c, 'limit'));
    const cursor = readQuery(c, 'cursor');
    const after = cursor ? decodeCursor(cursor) : undefined;
    const { items, nextAfter } = await registry.listManifests(query, after, limit);
    return c.json({
      items: items.map((item) => ({ ...item, url: versionPath(item.name, item.latestVersion) })),
      nextCursor: nextAfter === undefined ? null : encodeCursor(nextAfter),
    } satisfies ManifestListResponse);
  });

  mountOperation(app, 'manifest', async (c) => {
    const name = readManifestName(c);
    const versions = await registry.listVersions(name);
    return c.json({
      name,
      versions: versions.map((v) => ({
        version: v.version,
        digest: v.digest,
        status: v.status,
        storedAt: v.storedAt,
        ...(v.status === 'yanked' ? { yankReason: v.yankReason, yankedAt: v.yankedAt } : {}),
      })),
    } satisfies VersionListResponse);
  });

  mountOperation(app, 'version', async (c) => {
    const name = readManifestName(c);
    const version = c.req.param('version');
    if (version === 'latest') {
      const latest = await registry.resolveLatest(name);
      c.header('Cache-Control', 'no-cache');
      return c.redirect(versionPath(name, latest), 302);
    }
    const key = `v:${formatManifestRef(name, version)}`;
    let entry = cache.get(key);
    if (!entry) {
      const stored = await registry.getManifest(name, version);
      const link = `<${attestationPath(name, version)}>; rel="attestation"; type="${JOSE_JSON_CONTENT_TYPE}"`;
      entry = cache.put(key, stored.bytes, stored.digest, link);
    }
    cache.remember(readRawTarget(c.env), key);
    return sendVerifiedBody(entry, c.req.header('If-None-Match'));
  });

  mountOperation(app, 'attestation', async (c) => {
    const name = readManifestName(c);
    const version = c.req.param('version');
    const key = `a:${formatManifestRef(name, version)}`;
    let entry = cache.get(key);
    if (!entry) {
      const attestation = new Uint8Array((await registry.getVersionRecord(name, version)).attestation);
      const digest = computeDigest(attestation);
      entry = cache.putWithHeaders(key, attestation, digest, {
        'cache-control': IMMUTABLE_CACHE_CONTROL,
        'content-type': JOSE_JSON_CONTENT_TYPE,
        etag: `"${digest}"`,
        // The same statement as a Sigstore bundle (issue 26).
        link: `<${bundlePath(name, version)}>; rel="bundle"; type="${SIGSTORE_BUNDLE_MEDIA_TYPE}"`,
      });
    }
    cache.remember(readRawTarget(c.env), key);
    return sendVerifiedBody(entry, c.req.header('If-None-Match'));
  });
}

/** A page size: decimal digits only (no sign, exponent, radix prefix or spaces), from 1 to 200; 50 when absent. */
export function readLimit(text: string | undefined): number {
  if (text === undefined) return 50;
  const limit = /^[0-9]{1,16}$/.test(text) ? Number(text) : 0;
  if (limit < 1 || limit > 200) throw new ToolsealError('BAD_REQUEST', 'limit must be an integer from 1 to 200');
  return limit;
}

/** The cursor is the last name of a page, base64url (RFC 4648 §5) so it reads as opaque. */
function encodeCursor(after: string): string {
  return Buffer.from(after, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor) || text.length === 0 || !text.includes('/')) {
    throw new ToolsealError('BAD_REQUEST', 'cursor is not one this registry issued');
  }
  return text;
}

// The pages' static assets, served from the package itself (no CDN): the browser verification script
// (assets/verify.js, an ES module, and the modules it imports: assets/verify-bundle.js for the Sigstore bundle's
// checks, assets/verify-common.js for what both share), the approvals pages' script and its words (assets/approvals.js,
// assets/approval-words.js) and the stylesheet, each with a strong ETag (RFC 9110 §8.8.3) and revalidation.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Context } from 'hono';
import { ToolsealError } from '../core/errors.ts';
import { PAGE_STYLESHEET } from './assets/style.ts';

interface Asset {
  body: Uint8Array;
  contentType: string;
  etag: string;
}

const SOURCES: Readonly<Record<string, { contentType: string; read: () => Uint8Array }>> = {
  'verify.js': {
    contentType: 'text/javascript; charset=utf-8',
    // Beside this module in src/web/ and in the built dist/web/ alike.
    read: () => new Uint8Array(readFileSync(new URL('./assets/verify.js', import.meta.url))),
  },
  'verify-bundle.js': {
    contentType: 'text/javascript; charset=utf-8',
    read: () => new Uint8Array(readFileSync(new URL('./assets/verify-bundle.js', import.meta.url))),
  },
  'verify-common.js': {
    contentType: 'text/javascript; charset=utf-8',
    read: () => new Uint8Array(readFileSync(new URL('./assets/verify-common.js', import.meta.url))),
  },
  'approvals.js': {
    contentType: 'text/javascript; charset=utf-8',
    read: () => new Uint8Array(readFileSync(new URL('./assets/approvals.js', import.meta.url))),
  },
  'approval-words.js': {
    contentType: 'text/javascript; charset=utf-8',
    read: () => new Uint8Array(readFileSync(new URL('./assets/approval-words.js', import.meta.url))),
  },
  'style.css': { contentType: 'text/css; charset=utf-8', read: () => new TextEncoder().encode(PAGE_STYLESHEET) },
};

const loaded = new Map<string, Asset>();

/** The asset called `file`, read once; NOT_FOUND for any other name. */
function loadAsset(file: string): Asset {
  let asset = loaded.get(file);
  if (asset !== undefined) return asset;
  const source = Object.hasOwn(SOURCES, file) ? SOURCES[file] : undefined;
  if (source === undefined) throw new ToolsealError('NOT_FOUND', `no asset ${file}`);
  const body = source.read();
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  asset = { body, contentType: source.contentType, etag };
  loaded.set(file, asset);
  return asset;
}

/** GET /ui/assets/{file}: 304 when If-None-Match names the current ETag. */
export function sendAsset(c: Context, file: string): Response {
  const asset = loadAsset(file);
  const headers = {
    'Content-Type': asset.contentType,
    ETag: asset.etag,
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
  };
  const presented = c.req.header('If-None-Match');
  if (presented?.split(',').some((tag) => tag.trim() === asset.etag)) return c.body(null, 304, headers);
  return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, headers);
}

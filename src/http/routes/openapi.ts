// GET /openapi.json: the OpenAPI 3.1 document of this API (src/http/openapi.ts), written once on first request and
// then served from memory with a strong ETag (RFC 9110 §8.8.3) and a public cache lifetime: it changes only with
// the code. The writer is loaded then too, so a registry nobody asks for it never loads zod.

import { computeDigest } from '../../core/digest.ts';
import { JSON_CONTENT_TYPE } from '../../protocol/wire.ts';
import type { App } from '../app-env.ts';
import { mountOperation } from '../operations.ts';

const CACHE_CONTROL = 'public, max-age=3600';

export function mountOpenApiRoute(app: App, origin: string): void {
  let served: Promise<{ text: string; etag: string }> | undefined;
  mountOperation(app, 'openapi', async (c) => {
    served ??= import('../openapi.ts').then(({ buildOpenApiDocument }) => {
      const text = JSON.stringify(buildOpenApiDocument(origin));
      return { text, etag: `"${computeDigest(new TextEncoder().encode(text))}"` };
    });
    const { text, etag } = await served;
    if (c.req.header('If-None-Match') === etag)
      return c.body(null, 304, { ETag: etag, 'Cache-Control': CACHE_CONTROL });
    return c.body(text, 200, { 'Content-Type': JSON_CONTENT_TYPE, ETag: etag, 'Cache-Control': CACHE_CONTROL });
  });
}

// POST /v1/manifests/{namespace}/{name}/{version}/yank: a publisher marks its version yanked with a reason (the
// bytes stay served; the yank is a log entry). Bearer token per RFC 6750 §2.1; the body is parsed strictly.

import { ToolsealError } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json.ts';
import { parseStrict } from '../../pipeline/index.ts';
import { ROUTES } from '../../protocol/routes.ts';
import type { YankRequest, YankResponse } from '../../protocol/wire.ts';
import type { Registry } from '../../registry/index.ts';
import { readBearerToken } from '../auth.ts';
import { type App, readManifestName } from '../app-env.ts';
import { readBodyWithin } from '../body.ts';

const MAX_YANK_BODY_BYTES = 16 * 1024;

export function mountYankRoutes(app: App, registry: Registry): void {
  app.post(ROUTES.yank, async (c) => {
    const publisher = registry.authenticate(readBearerToken(c.req.header('Authorization')));
    const body = await readBodyWithin(c, MAX_YANK_BODY_BYTES, 'yank body');
    const { reason } = readYankRequest(body);
    const record = await registry.yank(publisher, readManifestName(c), c.req.param('version'), reason);
    return c.json({
      name: record.name,
      version: record.version,
      digest: record.digest,
      status: record.status,
      yankReason: record.yankReason,
      yankedAt: record.yankedAt,
      yankLogIndex: record.yankLogIndex,
    } satisfies YankResponse);
  });
}

function readYankRequest(body: Uint8Array): YankRequest {
  const parsed = parseStrict(body).value;
  const reason = isJsonObject(parsed) ? parsed['reason'] : undefined;
  if (typeof reason !== 'string')
    throw new ToolsealError('BAD_REQUEST', 'body must be {"reason": "<why>"}', { pointer: '/reason' });
  return { reason };
}

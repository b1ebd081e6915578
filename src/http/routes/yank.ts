// POST /v1/manifests/{namespace}/{name}/{version}/yank: a publisher marks its version yanked with a reason (the
// bytes stay served; the yank is a log entry). Bearer token per RFC 6750 §2.1; the body is parsed strictly and is the
// closed type {"reason": string}. A second yank answers 200 with the first reason and `alreadyYanked: true`.

import { ToolsealError } from '../../core/errors.ts';
import { formatPointer } from '../../core/json-pointer.ts';
import { hasOwn, isJsonObject } from '../../core/json.ts';
import { truncateText } from '../../core/text.ts';
import { parseStrict } from '../../pipeline/index.ts';
import type { YankRequest, YankResponse } from '../../protocol/wire.ts';
import type { Registry } from '../../registry/index.ts';
import { readBearerToken } from '../auth.ts';
import { type App, readManifestName } from '../app-env.ts';
import { readBodyWithin } from '../body.ts';
import { mountOperation } from '../operations.ts';

const MAX_YANK_BODY_BYTES = 16 * 1024;

export function mountYankRoutes(app: App, registry: Registry): void {
  mountOperation(app, 'yank', async (c) => {
    const publisher = await registry.authenticate(readBearerToken(c.req.header('Authorization')));
    const body = await readBodyWithin(c, MAX_YANK_BODY_BYTES, 'yank body');
    const { reason } = readYankRequest(body);
    const { record, alreadyYanked } = await registry.yank(
      publisher,
      readManifestName(c),
      c.req.param('version'),
      reason,
    );
    return c.json({
      name: record.name,
      version: record.version,
      digest: record.digest,
      status: record.status,
      yankReason: record.yankReason,
      yankedAt: record.yankedAt,
      yankLogIndex: record.yankLogIndex,
      alreadyYanked,
      ...(alreadyYanked ? { requestedReason: reason } : {}),
    } satisfies YankResponse);
  });
}

/** The body as {"reason": string}: empty (or only whitespace) asks for a reason; any other member is UNKNOWN_FIELD. */
function readYankRequest(body: Uint8Array): YankRequest {
  if (body.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d))
    throw new ToolsealError('BAD_REQUEST', 'a reason is required');
  const parsed = parseStrict(body).value;
  if (!isJsonObject(parsed)) throw new ToolsealError('BAD_REQUEST', 'body must be {"reason": "<why>"}');
  const unknown = Object.keys(parsed).find((key) => key !== 'reason');
  if (unknown !== undefined) {
    throw new ToolsealError(
      'UNKNOWN_FIELD',
      `a yank body has only "reason", not ${JSON.stringify(truncateText(unknown, 64))}`,
      { pointer: formatPointer([unknown]) },
    );
  }
  if (!hasOwn(parsed, 'reason')) throw new ToolsealError('BAD_REQUEST', 'a reason is required', { pointer: '/reason' });
  const reason = parsed['reason'];
  if (typeof reason !== 'string')
    throw new ToolsealError('BAD_REQUEST', 'the reason must be a string', { pointer: '/reason' });
  return { reason };
}

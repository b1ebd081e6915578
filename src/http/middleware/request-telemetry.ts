// The request telemetry middleware (issue 29 §1, §2; OpenTelemetry HTTP semantic conventions): one span per API
// request named after its route template, and the request metrics labelled by that template (hono/route's
// routePath after the handler ran), never by the raw path. A publish also counts its outcome (`ok` or the code).

import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { ToolsealError } from '../../core/errors.ts';
import { ROUTES } from '../../protocol/routes.ts';
import type { RegistryMetrics } from '../../telemetry/metrics-registry-set.ts';
import { observeRequest } from '../../telemetry/request-telemetry.ts';
import type { AppContext, AppEnv } from '../app-env.ts';

/** The route label of a request no route answered (the not-found and 405 answers). */
export const UNMATCHED_ROUTE = 'unmatched';

/** The template of the route that answered `c` (after `await next()`), or `unmatched`. */
export function readRouteTemplate(c: AppContext): string {
  const path = routePath(c);
  return path === '' || path === '*' || path === '/*' ? UNMATCHED_ROUTE : path;
}

/** Write requests (they enter the sequencer): counted in `toolseal_writes_in_flight` while they are answered. */
function isWrite(method: string, path: string): boolean {
  return (
    method === 'POST' &&
    (path === ROUTES.manifests || path.startsWith('/v1/manifests/') || path.startsWith('/v1/approvals'))
  );
}

/** What an answered publish ended with: `ok`, or the ToolsealError code it was refused with (INTERNAL otherwise). */
function readPublishOutcome(c: AppContext) {
  if (c.res.status < 300) return 'ok' as const;
  return c.error instanceof ToolsealError ? c.error.code : ('INTERNAL' as const);
}

/** Spans (when tracing is on) and request metrics (when `metrics` is given) for every request. */
export function createRequestTelemetry(metrics: RegistryMetrics | undefined): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const method = c.req.method;
    const endWrite = metrics !== undefined && isWrite(method, c.req.path) ? metrics.beginWrite() : undefined;
    try {
      await observeRequest(
        method,
        c.req.header(),
        next,
        () => ({ route: readRouteTemplate(c), status: c.res.status }),
        metrics,
      );
    } finally {
      endWrite?.();
    }
    if (metrics !== undefined && method === 'POST' && readRouteTemplate(c) === ROUTES.manifests) {
      metrics.recordPublish(readPublishOutcome(c));
    }
  };
}

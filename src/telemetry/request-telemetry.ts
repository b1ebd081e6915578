// One API request's telemetry (issue 29 §1, §2; OpenTelemetry HTTP semantic conventions: span `METHOD route`,
// `http.route`, `http.response.status_code`): a span under the caller's W3C trace context and the request metrics,
// framework-free so src/http wraps it in a four-line Hono middleware.

import { extractTraceHeaders, withSpan } from './spans.ts';
import type { RegistryMetrics } from './metrics-registry-set.ts';

/** What the router knew once the request was answered. */
export interface AnsweredRequest {
  /** The route template (Hono: `c.req.routePath` after `await next()`; `/*` when no route matched). */
  route: string;
  status: number;
}

/**
 * Runs `handle` (the rest of the middleware chain) in a span that is a child of the request's `traceparent`, then
 * names the span after the route template and records the request in `metrics` (when given) with its duration.
 */
export async function observeRequest(
  method: string,
  headers: Record<string, string | string[] | undefined>,
  handle: () => Promise<void>,
  readAnswer: () => AnsweredRequest,
  metrics: RegistryMetrics | undefined,
): Promise<void> {
  const start = metrics === undefined ? 0 : performance.now();
  await withSpan(
    method,
    async (span) => {
      try {
        await handle();
      } finally {
        const { route, status } = readAnswer();
        span.updateName(`${method} ${route}`);
        span.setAttribute('http.route', route);
        span.setAttribute('http.response.status_code', status);
        metrics?.recordRequest(route, status, (performance.now() - start) / 1000);
      }
    },
    { 'http.request.method': method },
    extractTraceHeaders(headers),
  );
}

// observeRequest as src/http is to wire it: a Hono middleware; the span carries the route template and the caller's
// trace id, and the request metrics count by template (never the raw path), scraped over HTTP.

import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMetricsListener } from '../../src/telemetry/metrics-listener.ts';
import { createRegistryMetrics } from '../../src/telemetry/metrics-registry-set.ts';
import { observeRequest } from '../../src/telemetry/request-telemetry.ts';
import { withSpan } from '../../src/telemetry/spans.ts';
import { startTracing, type Tracing } from '../../src/telemetry/tracing.ts';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.ts';
import { readValue, scrape } from './scrape.ts';

let receiver: OtlpReceiver;
let tracing: Tracing;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = startTracing({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }, serviceName: 'toolseal-registry' });
});
afterAll(async () => {
  await tracing.shutdown();
  await receiver.close();
});

describe('observeRequest in a Hono middleware', () => {
  it('names spans and counts requests by route template, under the caller traceparent', async () => {
    const metrics = createRegistryMetrics();
    const app = new Hono();
    app.use('*', (c, next) =>
      observeRequest(
        c.req.method,
        c.req.header(),
        next,
        () => ({ route: c.req.routePath, status: c.res.status }),
        metrics,
      ),
    );
    app.get('/v1/tools/:namespace/:name', (c) => withSpan('registry.fetch', () => c.text('ok')));
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const callerSpan = 'b7ad6b7169203331';
    const traced = await app.request('/v1/tools/acme/weather', {
      headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
    });
    expect(traced.status).toBe(200);
    expect((await app.request('/v1/tools/other/thing')).status).toBe(200);
    expect((await app.request('/nope/secret-namespace')).status).toBe(404);
    await tracing.forceFlush();

    const request = receiver.spans.find((s) => s.traceId === traceId && s.name === 'GET /v1/tools/:namespace/:name')!;
    expect(request).toMatchObject({ parentSpanId: callerSpan, serviceName: 'toolseal-registry' });
    expect(request.attributes).toMatchObject({
      'http.route': '/v1/tools/:namespace/:name',
      'http.response.status_code': 200,
    });
    const child = receiver.spans.find((s) => s.name === 'registry.fetch' && s.traceId === traceId)!;
    expect(child.parentSpanId).toBe(request.spanId);
    expect(receiver.spans.some((s) => s.name === 'GET /*' && s.attributes['http.response.status_code'] === 404)).toBe(
      true,
    );

    const listener = await startMetricsListener({ port: 0, registry: metrics.registry });
    try {
      const families = await scrape(listener.url);
      expect(
        readValue(families, 'toolseal_http_requests_total', { route: '/v1/tools/:namespace/:name', status: '200' }),
      ).toBe(2);
      expect(readValue(families, 'toolseal_http_requests_total', { route: '/*', status: '404' })).toBe(1);
      const text = await (await fetch(listener.url)).text();
      expect(text).not.toContain('acme');
      expect(text).not.toContain('secret-namespace');
    } finally {
      await listener.close();
    }
  });
});

// The request telemetry middleware: requests counted by route template (`unmatched` when no route answered), a
// publish's outcome by its ToolsealError code (INTERNAL for anything else), and write requests in flight while
// they are answered; scraped with the Prometheus text-format parser.

import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../../src/core/errors.ts';
import type { AppEnv } from '../../../src/http/app-env.ts';
import { createRequestTelemetry } from '../../../src/http/middleware/request-telemetry.ts';
import { createRegistryMetrics } from '../../../src/telemetry/metrics-registry-set.ts';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { readValue } from '../../telemetry/scrape.ts';

describe('createRequestTelemetry', () => {
  it('labels by template and code, and counts writes in flight', async () => {
    const metrics = createRegistryMetrics();
    const app = new Hono<AppEnv>();
    app.onError((error, c) => c.json({}, error instanceof ToolsealError ? 409 : 500));
    app.use(createRequestTelemetry(metrics));
    let inFlightDuringPublish: number | undefined;
    let publishes = 0;
    app.post('/v1/manifests', async (c) => {
      const text = await metrics.registry.render();
      inFlightDuringPublish = readValue(parsePrometheusTextFormat(text), 'toolseal_writes_in_flight');
      publishes++;
      if (publishes === 2) throw new ToolsealError('VERSION_EXISTS', 'exists');
      if (publishes === 3) throw new Error('boom');
      return c.body(null, 201);
    });
    app.get('/v1/manifests/:namespace/:name', (c) => c.text('ok'));
    for (let i = 0; i < 3; i++) await app.request('/v1/manifests', { method: 'POST' });
    await app.request('/v1/manifests/acme-secret/tool');
    await app.request('/acme-secret/nowhere');
    const text = await metrics.registry.render();
    const families = parsePrometheusTextFormat(text);
    expect(inFlightDuringPublish).toBe(1);
    expect(readValue(families, 'toolseal_writes_in_flight')).toBe(0);
    expect(readValue(families, 'toolseal_publish_total', { outcome: 'ok' })).toBe(1);
    expect(readValue(families, 'toolseal_publish_total', { outcome: 'VERSION_EXISTS' })).toBe(1);
    expect(readValue(families, 'toolseal_publish_total', { outcome: 'INTERNAL' })).toBe(1);
    expect(readValue(families, 'toolseal_http_requests_total', { route: '/v1/manifests', status: '201' })).toBe(1);
    expect(readValue(families, 'toolseal_http_requests_total', { route: '/v1/manifests', status: '409' })).toBe(1);
    expect(readValue(families, 'toolseal_http_requests_total', { route: '/v1/manifests', status: '500' })).toBe(1);
    expect(
      readValue(families, 'toolseal_http_requests_total', { route: '/v1/manifests/:namespace/:name', status: '200' }),
    ).toBe(1);
    expect(readValue(families, 'toolseal_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(text).not.toContain('acme-secret');
  });
});

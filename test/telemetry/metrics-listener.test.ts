// The metrics listener: 127.0.0.1 by default, GET /metrics only, nothing else answered with metrics.

import { afterEach, describe, expect, it } from 'vitest';
import { startMetricsListener, type MetricsListener } from '../../src/telemetry/metrics-listener.ts';
import { createGuardMetrics } from '../../src/telemetry/metrics-guard-set.ts';
import { createRegistryMetrics } from '../../src/telemetry/metrics-registry-set.ts';
import { createMetricsRegistry } from '../../src/telemetry/metrics-registry.ts';
import { readValue, scrape } from './scrape.ts';

let listener: MetricsListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

describe('metrics listener', () => {
  it('binds 127.0.0.1 by default and serves only GET /metrics', async () => {
    const metrics = createGuardMetrics();
    listener = await startMetricsListener({ port: 0, registry: metrics.registry });
    expect(listener.url).toBe(`http://127.0.0.1:${listener.port}/metrics`);
    const base = `http://127.0.0.1:${listener.port}`;
    for (const path of ['/', '/metrics/', '/v1/tools', '/metricsx']) {
      const response = await fetch(base + path);
      expect(response.status).toBe(404);
      expect(await response.text()).not.toContain('toolseal_');
    }
    const post = await fetch(`${base}/metrics`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const query = await fetch(`${base}/metrics?name[]=x`);
    expect(query.status).toBe(200);
    expect(await query.text()).toContain('toolseal_guard_sessions_total');
  });

  it('serves a registry shared by the registry and guard sets, and refuses a port in use', async () => {
    const registry = createMetricsRegistry();
    const serverSet = createRegistryMetrics({ registry });
    const guardSet = createGuardMetrics({ registry });
    serverSet.recordBusyRefusal();
    guardSet.recordCallForwarded();
    listener = await startMetricsListener({ port: 0, registry });
    const families = await scrape(listener.url);
    expect(readValue(families, 'toolseal_server_busy_total')).toBe(1);
    expect(readValue(families, 'toolseal_guard_calls_forwarded_total')).toBe(1);
    await expect(startMetricsListener({ port: listener.port, registry })).rejects.toThrow(/EADDRINUSE/);
  });
});

// The registry's metrics, scraped over HTTP from a real metrics listener and parsed with a Prometheus text parser.

import { afterEach, describe, expect, it } from 'vitest';
import { startMetricsListener, type MetricsListener } from '../../src/telemetry/metrics-listener.ts';
import { createRegistryMetrics } from '../../src/telemetry/metrics-registry-set.ts';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { findFamily, readCount, readLabelledCount, readValue, scrape, scrapeText } from './scrape.ts';

let listener: MetricsListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

describe('registry metrics', () => {
  it('counts requests by route template and status, and publishes by outcome', async () => {
    const metrics = createRegistryMetrics();
    listener = await startMetricsListener({ port: 0, registry: metrics.registry });
    const before = await scrape(listener.url);
    expect(readValue(before, 'toolseal_http_requests_total', { route: '/v1/tools/:namespace', status: '200' })).toBe(
      undefined,
    );
    expect(findFamily(before, 'toolseal_http_requests_total')?.type).toBe('COUNTER');

    metrics.recordRequest('/v1/tools/:namespace', 200, 0.004);
    metrics.recordRequest('/v1/tools/:namespace', 200, 0.02);
    metrics.recordRequest('/v1/tools/:namespace', 404, 0.001);
    metrics.recordPublish('ok');
    metrics.recordPublish('VERSION_EXISTS');
    metrics.recordPublish('VERSION_EXISTS');
    metrics.observePipelineSeconds(0.003);
    metrics.observeCommitSeconds(0.002);
    metrics.observeCommitSeconds(0.5);

    const text = await scrapeText(listener.url);
    const after = parsePrometheusTextFormat(text);
    expect(readValue(after, 'toolseal_http_requests_total', { route: '/v1/tools/:namespace', status: '200' })).toBe(2);
    expect(readValue(after, 'toolseal_http_requests_total', { route: '/v1/tools/:namespace', status: '404' })).toBe(1);
    expect(readLabelledCount(text, 'toolseal_http_request_duration_seconds', 'route', '/v1/tools/:namespace')).toBe(3);
    expect(readValue(after, 'toolseal_publish_total', { outcome: 'ok' })).toBe(1);
    expect(readValue(after, 'toolseal_publish_total', { outcome: 'VERSION_EXISTS' })).toBe(2);
    expect(readCount(after, 'toolseal_pipeline_duration_seconds')).toBe(1);
    expect(readCount(after, 'toolseal_commit_duration_seconds')).toBe(2);
    expect(findFamily(after, 'toolseal_commit_duration_seconds')?.type).toBe('HISTOGRAM');
  });

  it('bounds the route label: templates past the bound and non-printable values become "other"', async () => {
    const metrics = createRegistryMetrics({ maxRoutes: 2 });
    listener = await startMetricsListener({ port: 0, registry: metrics.registry });
    metrics.recordRequest('/v1/a', 200, 0.001);
    metrics.recordRequest('/v1/b', 200, 0.001);
    metrics.recordRequest('/v1/c', 200, 0.001);
    metrics.recordRequest('/v1/a', 200, 0.001);
    const families = await scrape(listener.url);
    const routes = findFamily(families, 'toolseal_http_requests_total')?.metrics.map((s) => s.labels?.['route']);
    expect(new Set(routes)).toEqual(new Set(['/v1/a', '/v1/b', 'other']));
    expect(readValue(families, 'toolseal_http_requests_total', { route: '/v1/a', status: '200' })).toBe(2);
    expect(readValue(families, 'toolseal_http_requests_total', { route: 'other', status: '200' })).toBe(1);
    const spaced = createRegistryMetrics({ maxRoutes: 10 });
    spaced.recordRequest('/v1/with space\n', 200, 0.001);
    expect(await spaced.registry.render()).toContain('route="other"');
  });

  it('reports log size, checkpoint age, approvals, writes in flight, SERVER_BUSY and witness lag', async () => {
    let nowMs = 1_000_000;
    const metrics = createRegistryMetrics({ now: () => nowMs });
    listener = await startMetricsListener({ port: 0, registry: metrics.registry });
    const started = await scrape(listener.url);
    expect(readValue(started, 'toolseal_checkpoint_timestamp_seconds')).toBe(0);
    nowMs += 2_000; // before the first checkpoint the age counts from when the metrics were created
    expect(readValue(await scrape(listener.url), 'toolseal_checkpoint_age_seconds')).toBe(2);

    metrics.setLogSize(42);
    metrics.markCheckpoint(nowMs);
    nowMs += 7_500;
    metrics.setPendingApprovals(3);
    const endFirst = metrics.beginWrite();
    const endSecond = metrics.beginWrite();
    metrics.recordBusyRefusal();
    metrics.setWitnessLag('witness.example/a', 5);
    metrics.setWitnessLag('witness.example/b', 0);
    let families = await scrape(listener.url);
    expect(readValue(families, 'toolseal_log_size')).toBe(42);
    expect(readValue(families, 'toolseal_checkpoint_age_seconds')).toBe(7.5);
    expect(readValue(families, 'toolseal_checkpoint_timestamp_seconds')).toBe(1002);
    expect(readValue(families, 'toolseal_approvals_pending')).toBe(3);
    expect(readValue(families, 'toolseal_writes_in_flight')).toBe(2);
    expect(readValue(families, 'toolseal_server_busy_total')).toBe(1);
    expect(readValue(families, 'toolseal_witness_lag_entries', { witness: 'witness.example/a' })).toBe(5);
    expect(readValue(families, 'toolseal_witness_lag_entries', { witness: 'witness.example/b' })).toBe(0);

    endFirst();
    endFirst(); // idempotent: a write leaves the queue once
    nowMs += 500;
    families = await scrape(listener.url);
    expect(readValue(families, 'toolseal_writes_in_flight')).toBe(1);
    expect(readValue(families, 'toolseal_checkpoint_age_seconds')).toBe(8);
    endSecond();
    expect(readValue(await scrape(listener.url), 'toolseal_writes_in_flight')).toBe(0);
  });
});

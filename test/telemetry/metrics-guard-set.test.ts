// Guard's metrics, scraped over HTTP from a real metrics listener and parsed with a Prometheus text parser.

import { afterEach, describe, expect, it } from 'vitest';
import { createGuardMetrics } from '../../src/telemetry/metrics-guard-set.ts';
import { startMetricsListener, type MetricsListener } from '../../src/telemetry/metrics-listener.ts';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { readLabelledCount, readValue, scrape, scrapeText } from './scrape.ts';

let listener: MetricsListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

describe('guard metrics', () => {
  it('moves with sessions, withheld tools, forwarded and refused calls, approvals and upstream latency', async () => {
    const metrics = createGuardMetrics();
    listener = await startMetricsListener({ port: 0, registry: metrics.registry });
    const endSession = metrics.openSession();
    metrics.openSession();
    metrics.recordToolWithheld('differs');
    metrics.recordToolWithheld('differs');
    metrics.recordToolWithheld('not-checked');
    metrics.recordCallForwarded();
    metrics.recordCallRefused('unknown-tool');
    metrics.recordApprovalRequested();
    metrics.recordApprovalConsumed();
    metrics.observeUpstreamSeconds(0.01, 'ok');
    metrics.observeUpstreamSeconds(0.02, 'ok');
    metrics.observeUpstreamSeconds(1, 'failed');
    const text = await scrapeText(listener.url);
    let families = parsePrometheusTextFormat(text);
    expect(readValue(families, 'toolseal_guard_sessions_active')).toBe(2);
    expect(readValue(families, 'toolseal_guard_sessions_total')).toBe(2);
    expect(readValue(families, 'toolseal_guard_tools_withheld_total', { reason: 'differs' })).toBe(2);
    expect(readValue(families, 'toolseal_guard_tools_withheld_total', { reason: 'not-checked' })).toBe(1);
    expect(readValue(families, 'toolseal_guard_calls_forwarded_total')).toBe(1);
    expect(readValue(families, 'toolseal_guard_calls_refused_total', { reason: 'unknown-tool' })).toBe(1);
    expect(readValue(families, 'toolseal_guard_approvals_requested_total')).toBe(1);
    expect(readValue(families, 'toolseal_guard_approvals_consumed_total')).toBe(1);
    expect(readLabelledCount(text, 'toolseal_guard_upstream_duration_seconds', 'outcome', 'ok')).toBe(2);
    expect(readLabelledCount(text, 'toolseal_guard_upstream_duration_seconds', 'outcome', 'failed')).toBe(1);

    endSession();
    endSession();
    metrics.recordCallRefused('unknown-tool');
    families = await scrape(listener.url);
    expect(readValue(families, 'toolseal_guard_sessions_active')).toBe(1);
    expect(readValue(families, 'toolseal_guard_sessions_total')).toBe(2);
    expect(readValue(families, 'toolseal_guard_calls_refused_total', { reason: 'unknown-tool' })).toBe(2);
  });
});

// Tracing off: without the OTEL_* variables startTracing installs nothing and the helpers are pass-throughs.

import { context, propagation, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import {
  extractMcpTraceMeta,
  injectMcpTraceMeta,
  injectTraceHeaders,
  isTracingEnabled,
  withSpan,
} from '../../src/telemetry/spans.ts';
import { parseOtlpHeaders, resolveTracesEndpoint, startTracing } from '../../src/telemetry/tracing.ts';

describe('tracing without OTEL_* variables', () => {
  it('installs nothing and the helpers pass through', async () => {
    const tracing = startTracing({ env: {}, serviceName: 'toolseal-registry' });
    expect(tracing.enabled).toBe(false);
    expect(tracing.reason).toBe('no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER set');
    expect(isTracingEnabled()).toBe(false);
    expect(propagation.fields()).toEqual([]); // the no-op propagator
    expect(withSpan('x', () => 41 + 1)).toBe(42);
    expect(await withSpan('y', async () => trace.getActiveSpan())).toBeUndefined();
    const headers: Record<string, string> = {};
    injectTraceHeaders(headers);
    expect(headers).toEqual({});
    const params = { name: 't', _meta: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } };
    expect(injectMcpTraceMeta(params)).toBe(params);
    expect(extractMcpTraceMeta(params)).toBe(context.active());
    await tracing.shutdown();
  });
});

describe('reading the OTEL_* variables', () => {
  it('resolves the traces endpoint as the SDK specification says', () => {
    expect(resolveTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({
      url: 'http://c:4318/v1/traces',
    });
    expect(
      resolveTracesEndpoint({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/x',
      }),
    ).toEqual({ url: 'http://t/x' });
    expect(resolveTracesEndpoint({ OTEL_TRACES_EXPORTER: 'otlp' })).toEqual({ url: 'http://localhost:4318/v1/traces' });
    expect(resolveTracesEndpoint({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' }).url).toBe(
      undefined,
    );
    expect(resolveTracesEndpoint({ OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' }).url).toBe(
      undefined,
    );
    expect(resolveTracesEndpoint({ OTEL_TRACES_EXPORTER: 'zipkin' }).reason).toMatch(/only otlp/);
    expect(
      resolveTracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).reason,
    ).toMatch(/only http\/json/);
    expect(startTracing({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'file:///x' }, serviceName: 's' }).enabled).toBe(false);
  });

  it('parses OTEL_EXPORTER_OTLP_HEADERS (percent-encoded values, malformed pairs skipped)', () => {
    expect(parseOtlpHeaders('api-key=a%20b, x=1,=bad,novalue,y=%E0%A4%A')).toEqual({ 'api-key': 'a b', x: '1' });
    expect(parseOtlpHeaders(undefined)).toEqual({});
  });
});

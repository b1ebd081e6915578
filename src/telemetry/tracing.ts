// OpenTelemetry traces (issue 29 §2; OpenTelemetry SDK "Environment variable specification" and OTLP/HTTP with the
// JSON encoding; W3C Trace Context): startTracing installs an exporter only when the standard OTEL_* variables ask
// for one; otherwise nothing is installed and every helper in src/telemetry/spans.ts returns at its first test.

import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { setTracingEnabled } from './spans.ts';
import { parseOtlpHeaders, resolveTracesEndpoint, type TracingEnvironment } from './tracing-environment.ts';

export { parseOtlpHeaders, resolveTracesEndpoint, type TracingEnvironment } from './tracing-environment.ts';

export interface TracingOptions {
  /** Default process.env. */
  env?: TracingEnvironment;
  /** service.name when OTEL_SERVICE_NAME is unset: `toolseal-registry` or `toolseal-guard`. */
  serviceName: string;
}

export interface Tracing {
  /** Whether spans are exported. */
  readonly enabled: boolean;
  /** Why not, when not: for the CLI to print once (never contains header values). */
  readonly reason: string | undefined;
  /** Where spans go, when enabled. */
  readonly endpoint: string | undefined;
  /** Exports every ended span now. */
  forceFlush(): Promise<void>;
  /** Flushes, then uninstalls the provider, context manager and propagator. */
  shutdown(): Promise<void>;
}

function off(reason: string): Tracing {
  return {
    enabled: false,
    reason,
    endpoint: undefined,
    forceFlush: async () => {},
    shutdown: async () => {},
  };
}

/**
 * Installs the OpenTelemetry SDK (batching OTLP/HTTP JSON exporter, AsyncLocalStorage context, W3C propagator) when
 * the OTEL_* variables ask for it; otherwise installs nothing. Call once per process, before serving.
 */
export function startTracing(options: TracingOptions): Tracing {
  const env = options.env ?? (process.env as TracingEnvironment);
  const { url, reason } = resolveTracesEndpoint(env);
  if (url === undefined) return off(reason ?? 'tracing not configured');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return off('the OTLP endpoint is not a URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return off('the OTLP endpoint is not http(s)');
  const headers = {
    ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
  };
  const exporter = new OTLPTraceExporter({ url, headers });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME?.trim() || options.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingEnabled(true);
  const endpoint = `${parsed.origin}${parsed.pathname}`;
  return {
    enabled: true,
    reason: undefined,
    endpoint,
    forceFlush: () => provider.forceFlush(),
    async shutdown() {
      setTracingEnabled(false);
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

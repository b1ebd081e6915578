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

/** The OTEL_* variables read (OpenTelemetry SDK environment variable specification). */
export type TracingEnvironment = Partial<
  Record<
    | 'OTEL_SDK_DISABLED'
    | 'OTEL_TRACES_EXPORTER'
    | 'OTEL_EXPORTER_OTLP_ENDPOINT'
    | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'
    | 'OTEL_EXPORTER_OTLP_PROTOCOL'
    | 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    | 'OTEL_EXPORTER_OTLP_HEADERS'
    | 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'
    | 'OTEL_SERVICE_NAME',
    string
  >
>;

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

const DEFAULT_ENDPOINT = 'http://localhost:4318';

function off(reason: string): Tracing {
  return {
    enabled: false,
    reason,
    endpoint: undefined,
    forceFlush: async () => {},
    shutdown: async () => {},
  };
}

/** `k=v,k2=v2` with percent-encoded values (OTEL_EXPORTER_OTLP_HEADERS). Malformed pairs are skipped. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // not percent-encoded correctly: skipped, as the specification allows
    }
  }
  return headers;
}

/** The traces URL the variables name, or undefined when they ask for no exporter (with the reason). */
export function resolveTracesEndpoint(env: TracingEnvironment): { url?: string; reason?: string } {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { reason: 'OTEL_SDK_DISABLED is true' };
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter === 'none') return { reason: 'OTEL_TRACES_EXPORTER is none' };
  if (exporter !== undefined && exporter !== '' && exporter !== 'otlp') {
    return { reason: `OTEL_TRACES_EXPORTER ${exporter} is not supported (only otlp)` };
  }
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (protocol !== undefined && protocol !== '' && protocol !== 'http/json') {
    return { reason: `OTLP protocol ${protocol} is not supported (only http/json)` };
  }
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (tracesEndpoint) return { url: tracesEndpoint };
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return { url: `${base.replace(/\/+$/, '')}/v1/traces` };
  if (exporter === 'otlp') return { url: `${DEFAULT_ENDPOINT}/v1/traces` };
  return { reason: 'no OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_TRACES_EXPORTER set' };
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

// Which OTLP endpoint the standard OTEL_* variables ask for (OpenTelemetry SDK "Environment variable specification",
// OTLP exporter configuration): read without loading OpenTelemetry, so `serve` and `guard` load it only when asked.

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

const DEFAULT_ENDPOINT = 'http://localhost:4318';

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

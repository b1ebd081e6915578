// Span helpers (issue 29 §2; W3C Trace Context §3 traceparent/tracestate; MCP 2026-07-28 `_meta.traceparent`): child
// spans of the active context, and trace context carried in HTTP headers and in an MCP message's params._meta. With
// tracing off (startTracing installed nothing) each helper returns after one boolean test.

import { type Attributes, type Context, context, propagation, SpanStatusCode, trace } from '@opentelemetry/api';

const TRACER_NAME = 'toolseal';
let enabled = false;

/** Set by startTracing / its shutdown only. */
export function setTracingEnabled(value: boolean): void {
  enabled = value;
}

export function isTracingEnabled(): boolean {
  return enabled;
}

/** What a span body may do to its span: nothing happens on any of these when tracing is off. */
export interface SpanHandle {
  setAttribute(key: string, value: string | number | boolean): void;
  /** Renames the span (e.g. `GET /v1/tools/:namespace` once the route is known). */
  updateName(name: string): void;
}

const NOOP_SPAN: SpanHandle = {
  setAttribute() {},
  updateName() {},
};

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * Runs `body` inside a new span, a child of the active span (or of `parent` when given); the span ends when `body`
 * returns or its promise settles, with status ERROR and the exception's type (never its message) if it throws.
 */
export function withSpan<T>(name: string, body: (span: SpanHandle) => T, attributes?: Attributes, parent?: Context): T {
  if (!enabled) return body(NOOP_SPAN);
  const tracer = trace.getTracer(TRACER_NAME);
  return tracer.startActiveSpan(name, { attributes }, parent ?? context.active(), (span) => {
    const fail = (error: unknown) => {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute(
        'error.type',
        (error as { code?: unknown })?.code?.toString() ?? (error as Error)?.name ?? 'Error',
      );
      span.end();
    };
    try {
      const result = body(span);
      if (isPromiseLike(result)) {
        return Promise.resolve(result).then(
          (value) => {
            span.end();
            return value;
          },
          (error: unknown) => {
            fail(error);
            throw error;
          },
        ) as T;
      }
      span.end();
      return result;
    } catch (error) {
      fail(error);
      throw error;
    }
  });
}

/**
 * Records a span that has already happened, from `startMs` to `endMs` (milliseconds since the epoch), as a child of
 * the active span: for a stage whose start and end are only known from outside (the commit after the pipeline).
 */
export function recordSpan(name: string, startMs: number, endMs: number, attributes?: Attributes): void {
  if (!enabled) return;
  const span = trace.getTracer(TRACER_NAME).startSpan(name, { attributes, startTime: startMs }, context.active());
  span.end(endMs);
}

/** Milliseconds since the epoch, with performance.now()'s resolution (for recordSpan). */
export function readEpochMs(): number {
  return performance.timeOrigin + performance.now();
}

type HeaderCarrier = Record<string, string | string[] | undefined>;

const headerGetter = {
  keys: (carrier: HeaderCarrier) => Object.keys(carrier),
  get(carrier: HeaderCarrier, key: string) {
    const found = Object.keys(carrier).find((k) => k.toLowerCase() === key);
    return found === undefined ? undefined : carrier[found];
  },
};

/** Adds `traceparent` (and `tracestate`) of the active span to `headers`; does nothing when tracing is off. */
export function injectTraceHeaders(headers: Record<string, string>): void {
  if (!enabled) return;
  propagation.inject(context.active(), headers);
}

/** The context a request's `traceparent`/`tracestate` headers carry (the active one when tracing is off or none). */
export function extractTraceHeaders(headers: HeaderCarrier): Context {
  if (!enabled) return context.active();
  return propagation.extract(context.active(), headers, headerGetter);
}

type MetaCarrier = { traceparent?: unknown; tracestate?: unknown; [key: string]: unknown };

/**
 * `params` with `_meta.traceparent` (and `tracestate`) of the active span, as the MCP 2026-07-28 revision carries
 * them; a new object (params and its _meta are not changed), or `params` itself when tracing is off.
 */
export function injectMcpTraceMeta<P extends object>(params: P): P {
  if (!enabled) return params;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  if (carrier['traceparent'] === undefined) return params;
  const meta = (params as { _meta?: unknown })._meta;
  return { ...params, _meta: { ...(typeof meta === 'object' && meta !== null ? meta : {}), ...carrier } };
}

/** The context an MCP message's `params._meta.traceparent` carries (the active one when none or tracing is off). */
export function extractMcpTraceMeta(params: { _meta?: unknown } | undefined): Context {
  if (!enabled) return context.active();
  const meta = params?._meta;
  if (meta === null || typeof meta !== 'object') return context.active();
  const { traceparent, tracestate } = meta as MetaCarrier;
  const carrier: Record<string, string> = {};
  if (typeof traceparent === 'string') carrier['traceparent'] = traceparent;
  if (typeof tracestate === 'string') carrier['tracestate'] = tracestate;
  return propagation.extract(context.active(), carrier);
}

// Guard's telemetry, composed (issue 29 §1–§3): each session decision counted in the guard metrics and written to the
// decision audit log, and each upstream HTTP request timed and traced with W3C trace context in its headers and in
// the MCP messages' params._meta (MCP 2026-07-28). The guard hands the interceptor the exact request it would send,
// after the call gate decided (and computed the action digest): the trace context is added to the bytes sent, never
// to the bytes a digest was computed from.

import { randomBytes } from 'node:crypto';
import type { AuditDecision, AuditDecisionKind } from './audit-record.ts';
import type { AuditLog } from './audit-log.ts';
import type { GuardMetrics, UpstreamOutcome } from './metrics-guard-set.ts';
import { injectMcpTraceMeta, injectTraceHeaders, isTracingEnabled, withSpan } from './spans.ts';

/** One decision as guard reports it (src/guard/core/guard-observer.ts, structurally). */
export type GuardTelemetryDecision = Omit<AuditDecision, 'session' | 'upstream'> & { decision: AuditDecisionKind };

export interface GuardTelemetryOptions {
  metrics?: GuardMetrics;
  auditLog?: AuditLog;
  /** The upstream: a command name or the URL (written as origin and path). */
  upstream: string;
  /** A record the audit log could not take (a write error); the guard goes on. */
  onAuditError?: (error: unknown) => void;
}

export interface GuardTelemetrySession {
  readonly id: string;
  decided(decision: GuardTelemetryDecision): void;
  end(): void;
}

/** A guard observer: a session id and the decision sinks for each session. */
export function createGuardTelemetry(options: GuardTelemetryOptions): { openSession(): GuardTelemetrySession } {
  const { metrics, auditLog, upstream } = options;
  const onAuditError = options.onAuditError ?? (() => {});
  return {
    openSession() {
      const id = `s-${randomBytes(8).toString('hex')}`;
      const endMetrics = metrics?.openSession();
      return {
        id,
        decided(decision) {
          if (metrics !== undefined) countDecision(metrics, decision);
          if (auditLog === undefined) return;
          const record: AuditDecision = { ...decision, session: id, upstream };
          try {
            auditLog.record(record);
          } catch (error) {
            // A tool name the record cannot hold (a client's invention) is written as null; other errors reported.
            try {
              auditLog.record({ ...record, tool: null });
            } catch {
              onAuditError(error);
            }
          }
        },
        end() {
          endMetrics?.();
        },
      };
    },
  };
}

function countDecision(metrics: GuardMetrics, decision: GuardTelemetryDecision): void {
  switch (decision.decision) {
    case 'withheld':
      metrics.recordToolWithheld(decision.reason ?? 'unknown');
      return;
    case 'refused':
      metrics.recordCallRefused(decision.reason ?? 'unknown');
      return;
    case 'forwarded':
      metrics.recordCallForwarded();
      if (decision.approvalId !== null) metrics.recordApprovalConsumed();
      return;
    case 'approval-requested':
      if (decision.reason === 'APPROVAL_REQUIRED') metrics.recordApprovalRequested();
      return;
    case 'session-refused':
      return;
  }
}

/** An upstream request as the HTTP guard sends it (src/guard/http/http-upstream.ts, structurally). */
export interface InterceptedRequest {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body?: Uint8Array | string;
}

/**
 * Wraps each upstream request: a span (`mcp.upstream`) whose W3C trace context goes in the headers and in every MCP
 * request's params._meta, and its duration until the answer's headers in `metrics`.
 */
export function createUpstreamInterceptor(
  metrics: GuardMetrics | undefined,
): <R extends InterceptedRequest, A extends { status: number }>(
  request: R,
  send: (request: R) => Promise<A>,
) => Promise<A> {
  return (request, send) =>
    withSpan('mcp.upstream', async (span) => {
      span.setAttribute('http.request.method', request.method);
      let outgoing = request;
      if (isTracingEnabled()) {
        const headers = { ...request.headers };
        injectTraceHeaders(headers as Record<string, string>);
        // The body may change length: the client computes it again.
        if (request.body !== undefined) delete headers['content-length'];
        outgoing = {
          ...request,
          headers,
          ...(request.body === undefined ? {} : { body: injectIntoBody(request.body) }),
        };
      }
      const start = performance.now();
      let outcome: UpstreamOutcome = 'failed';
      try {
        const answer = await send(outgoing);
        outcome = answer.status >= 200 && answer.status < 300 ? 'ok' : 'error';
        span.setAttribute('http.response.status_code', answer.status);
        return answer;
      } finally {
        metrics?.observeUpstreamSeconds((performance.now() - start) / 1000, outcome);
      }
    });
}

/**
 * For the stdio guard: each forwarded client message gets the context of its own `mcp.upstream` span in every
 * request's params._meta (a stdio server has no headers; the span ends once the message is written).
 */
export function createForwardRewriter(): (text: string) => string {
  return (text) => withSpan('mcp.upstream', () => injectIntoBody(text) as string);
}

const decoder = new TextDecoder();

/** `_meta.traceparent` in each JSON-RPC request or notification of a JSON body; other bodies unchanged. */
function injectIntoBody(body: Uint8Array | string): Uint8Array | string {
  const text = typeof body === 'string' ? body : decoder.decode(body);
  let value: unknown;
  try {
    // The guard already read this body strictly (no duplicate keys, no unsafe integers): JSON.parse reads it alike.
    value = JSON.parse(text);
  } catch {
    return body;
  }
  const inject = (message: unknown): unknown => {
    if (message === null || typeof message !== 'object' || Array.isArray(message)) return message;
    const record = message as Record<string, unknown>;
    if (typeof record['method'] !== 'string') return message;
    const params = record['params'];
    if (params !== undefined && (params === null || typeof params !== 'object' || Array.isArray(params)))
      return message;
    return { ...record, params: injectMcpTraceMeta((params ?? {}) as object) };
  };
  return JSON.stringify(Array.isArray(value) ? value.map(inject) : inject(value));
}

// `guard --metrics-listen`, `--audit-log` and the OTEL_* variables (issue 29): what they start, loaded only when one
// is given, so a guard without telemetry never loads prom-client or OpenTelemetry (its start-up pays nothing).

import type { GuardObserver } from '../guard/core/guard-observer.ts';
import type { HttpGuardOptions } from '../guard/http/http-guard.ts';
import { resolveTracesEndpoint } from '../telemetry/tracing-environment.ts';
import { resolveMetricsListen, resolveUserPath } from './config.ts';

/** The options `toolseal guard` parsed that telemetry reads. */
export interface GuardTelemetryValues {
  'metrics-listen'?: string | undefined;
  'audit-log'?: string | undefined;
}

export const guardTelemetryUsage = `  --metrics-listen [HOST:]PORT  serve guard's Prometheus metrics at GET /metrics (host 127.0.0.1 unless named;
                or TOOLSEAL_GUARD_METRICS_LISTEN): sessions, tools withheld and calls refused by reason, calls
                forwarded, approvals requested and consumed, upstream latency
  --audit-log FILE  one JSON line per decision (time, session, tool, tool and action digests, decision, reason,
                approval id, upstream; never arguments or tokens), fsynced in batches, rotated at 10 MiB (FILE.1…
                FILE.5); or TOOLSEAL_AUDIT_LOG
  With the OTEL_* variables (docs/operations.md), each upstream HTTP request is a span and carries W3C trace context
  in its headers and in params._meta.traceparent.`;

export interface GuardTelemetry {
  observer: GuardObserver | undefined;
  interceptUpstream: HttpGuardOptions['interceptUpstream'];
  /** The stdio guard's: trace context in each forwarded message's params._meta (tracing on only). */
  rewriteForwarded: ((text: string) => string) | undefined;
  /** JSON lines for stderr (where metrics are served, where traces go). */
  startLines: Record<string, unknown>[];
  /** Flushes the audit log and the spans, stops the listener. */
  close(): Promise<void>;
}

/** What the flags ask for, started; undefined (nothing loaded) when none is given. */
export async function startGuardTelemetry(
  values: GuardTelemetryValues,
  upstream: string,
): Promise<GuardTelemetry | undefined> {
  const listen = resolveMetricsListen(values['metrics-listen'], 'TOOLSEAL_GUARD_METRICS_LISTEN');
  const auditFile = values['audit-log'] ?? process.env['TOOLSEAL_AUDIT_LOG'];
  const traced = resolveTracesEndpoint(process.env).url !== undefined;
  if (listen === undefined && (auditFile === undefined || auditFile === '') && !traced) return undefined;
  const telemetry = await import('../telemetry/index.ts');
  const tracing = traced ? telemetry.startTracing({ serviceName: 'toolseal-guard' }) : undefined;
  const metrics = listen === undefined ? undefined : telemetry.createGuardMetrics();
  const startLines: Record<string, unknown>[] = [];
  let auditLog: Awaited<ReturnType<typeof telemetry.openAuditLog>> | undefined;
  let listener: Awaited<ReturnType<typeof telemetry.startMetricsListener>> | undefined;
  try {
    if (auditFile !== undefined && auditFile !== '') {
      auditLog = await telemetry.openAuditLog({ file: resolveUserPath(auditFile) });
      startLines.push({ event: 'audit-log', file: resolveUserPath(auditFile) });
    }
    if (metrics !== undefined && listen !== undefined) {
      listener = await telemetry.startMetricsListener({ registry: metrics.registry, ...listen });
      startLines.push({ event: 'metrics', url: listener.url });
    }
  } catch (error) {
    await auditLog?.close();
    await tracing?.shutdown();
    throw error;
  }
  if (tracing !== undefined)
    startLines.push(
      tracing.enabled
        ? { event: 'tracing', endpoint: tracing.endpoint }
        : { event: 'tracing-off', reason: tracing.reason },
    );
  const observer = telemetry.createGuardTelemetry({
    upstream,
    ...(metrics === undefined ? {} : { metrics }),
    ...(auditLog === undefined ? {} : { auditLog }),
    onAuditError: (error) =>
      process.stderr.write(`${JSON.stringify({ event: 'audit-log-error', message: (error as Error).message })}\n`),
  });
  const intercept = metrics !== undefined || tracing?.enabled === true;
  return {
    observer: metrics === undefined && auditLog === undefined ? undefined : observer,
    interceptUpstream: intercept ? telemetry.createUpstreamInterceptor(metrics) : undefined,
    rewriteForwarded: tracing?.enabled === true ? telemetry.createForwardRewriter() : undefined,
    startLines,
    async close() {
      try {
        await listener?.close();
        await auditLog?.close();
      } finally {
        await tracing?.shutdown();
      }
    },
  };
}

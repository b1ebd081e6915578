// src/telemetry's surface (issue 29): what serve, guard, src/http and the registry side import to record metrics,
// audit decisions and spans (docs/operations.md). Guard loads it lazily (src/cli/guard-telemetry.ts).

export { type AuditLog, type AuditLogContents, type AuditLogOptions, openAuditLog, readAuditLog } from './audit-log.ts';
export { type AuditDecision, type AuditDecisionKind, type AuditRecord, describeUpstream } from './audit-record.ts';
export {
  createGuardMetrics,
  type GuardMetrics,
  type GuardMetricsOptions,
  type GuardReason,
  type UpstreamOutcome,
} from './metrics-guard-set.ts';
export {
  createForwardRewriter,
  createGuardTelemetry,
  createUpstreamInterceptor,
  type GuardTelemetryDecision,
  type GuardTelemetryOptions,
  type GuardTelemetrySession,
  type InterceptedRequest,
} from './guard-telemetry.ts';
export { type MetricsListener, type MetricsListenerOptions, startMetricsListener } from './metrics-listener.ts';
export { createMetricsRegistry, type MetricsRegistry } from './metrics-registry.ts';
export {
  createRegistryMetrics,
  type PublishOutcome,
  type RegistryMetrics,
  type RegistryMetricsOptions,
  type RouteTemplate,
} from './metrics-registry-set.ts';
export { type AnsweredRequest, observeRequest } from './request-telemetry.ts';
export {
  extractMcpTraceMeta,
  extractTraceHeaders,
  injectMcpTraceMeta,
  injectTraceHeaders,
  isTracingEnabled,
  readEpochMs,
  recordSpan,
  type SpanHandle,
  withSpan,
} from './spans.ts';
export { startTracing, type Tracing, type TracingEnvironment, type TracingOptions } from './tracing.ts';

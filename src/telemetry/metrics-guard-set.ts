// Guard's Prometheus metrics (issue 29 §1; Prometheus "Instrumentation" best practices): sessions, withheld tools,
// forwarded and refused calls, approvals and upstream latency, through typed record functions with bounded labels.

import { Counter, Gauge, Histogram } from 'prom-client';
import { createLabelBound, createMetricsRegistry, type MetricsRegistry } from './metrics-registry.ts';

const UPSTREAM_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Why a tool was withheld or a call refused: guard's finding reasons (`differs`, `unknown-tool`, `withheld`,
 * `not-checked`, …) or a ToolsealError code. At most `maxReasons` distinct values are named; more are `other`.
 */
export type GuardReason = string;

/** How an upstream exchange ended: an answer (`ok`), a JSON-RPC error answer, or no answer. */
export type UpstreamOutcome = 'ok' | 'error' | 'failed';

export interface GuardMetricsOptions {
  registry?: MetricsRegistry;
  /** Most distinct reasons counted by name per metric (default 32). */
  maxReasons?: number;
}

export interface GuardMetrics {
  readonly registry: MetricsRegistry;
  /** A client session opened; call the returned function once when it ends (idempotent). */
  openSession(): () => void;
  recordToolWithheld(reason: GuardReason): void;
  recordCallForwarded(): void;
  recordCallRefused(reason: GuardReason): void;
  recordApprovalRequested(): void;
  recordApprovalConsumed(): void;
  /** One request forwarded upstream and its answer (or failure) after `seconds`. */
  observeUpstreamSeconds(seconds: number, outcome: UpstreamOutcome): void;
}

export function createGuardMetrics(options: GuardMetricsOptions = {}): GuardMetrics {
  const registry = options.registry ?? createMetricsRegistry();
  const registers = [registry.promRegistry];
  const boundWithheld = createLabelBound(options.maxReasons ?? 32);
  const boundRefused = createLabelBound(options.maxReasons ?? 32);

  const sessionsActive = new Gauge({
    name: 'toolseal_guard_sessions_active',
    help: 'Client sessions open now.',
    registers,
  });
  const sessionsTotal = new Counter({
    name: 'toolseal_guard_sessions_total',
    help: 'Client sessions opened.',
    registers,
  });
  const withheld = new Counter({
    name: 'toolseal_guard_tools_withheld_total',
    help: 'Tools withheld from a tools/list, by reason.',
    labelNames: ['reason'] as const,
    registers,
  });
  const forwarded = new Counter({
    name: 'toolseal_guard_calls_forwarded_total',
    help: 'tools/call requests forwarded upstream.',
    registers,
  });
  const refused = new Counter({
    name: 'toolseal_guard_calls_refused_total',
    help: 'tools/call requests refused, by reason.',
    labelNames: ['reason'] as const,
    registers,
  });
  const approvalsRequested = new Counter({
    name: 'toolseal_guard_approvals_requested_total',
    help: 'Approval requests sent to the registry.',
    registers,
  });
  const approvalsConsumed = new Counter({
    name: 'toolseal_guard_approvals_consumed_total',
    help: 'Approvals consumed (a call forwarded under an approval).',
    registers,
  });
  const upstreamSeconds = new Histogram({
    name: 'toolseal_guard_upstream_duration_seconds',
    help: 'Upstream request duration in seconds, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: UPSTREAM_BUCKETS,
    registers,
  });

  return {
    registry,
    openSession() {
      sessionsTotal.inc();
      sessionsActive.inc();
      let closed = false;
      return () => {
        if (closed) return;
        closed = true;
        sessionsActive.dec();
      };
    },
    recordToolWithheld(reason) {
      withheld.inc({ reason: boundWithheld(reason) });
    },
    recordCallForwarded() {
      forwarded.inc();
    },
    recordCallRefused(reason) {
      refused.inc({ reason: boundRefused(reason) });
    },
    recordApprovalRequested() {
      approvalsRequested.inc();
    },
    recordApprovalConsumed() {
      approvalsConsumed.inc();
    },
    observeUpstreamSeconds(seconds, outcome) {
      upstreamSeconds.observe({ outcome }, seconds);
    },
  };
}

// The registry's Prometheus metrics (issue 29 §1; Prometheus "Metric and label naming", "Instrumentation" best
// practices): typed record functions so no caller touches prom-client, and every label value bounded.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ErrorCode } from '../core/errors.ts';
import { createLabelBound, createMetricsRegistry, type MetricsRegistry } from './metrics-registry.ts';

/** Seconds buckets for the publish pipeline and the commit: sub-millisecond to tens of seconds. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds buckets for a whole HTTP request. */
const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** What a publish ended with: `ok`, or the ToolsealError code it was refused with. */
export type PublishOutcome = 'ok' | ErrorCode;

/**
 * A route template as the router registered it (`/v1/tools/:namespace/:name`), never the raw path: read it from
 * Hono's `c.req.routePath` after `await next()`. Templates beyond the bound are counted under `other`.
 */
export type RouteTemplate = string;

export interface RegistryMetricsOptions {
  /** Registry to register in (default: a new one); one listener serves one registry. */
  registry?: MetricsRegistry;
  /** Most distinct route templates counted by name (default 64); more are counted as `other`. */
  maxRoutes?: number;
  /** Most distinct witnesses counted by name (default 32); more are counted as `other`. */
  maxWitnesses?: number;
  /** Clock in milliseconds since the epoch (tests); default Date.now. */
  now?: () => number;
}

export interface RegistryMetrics {
  readonly registry: MetricsRegistry;
  /** One answered API request: its route template, HTTP status and duration. */
  recordRequest(route: RouteTemplate, status: number, seconds: number): void;
  /** One publish attempt's outcome. */
  recordPublish(outcome: PublishOutcome): void;
  /** Duration of the publish pipeline (parse → canonical bytes) for one manifest. */
  observePipelineSeconds(seconds: number): void;
  /** Duration of one commit (sequence, append to the log, store). */
  observeCommitSeconds(seconds: number): void;
  /** The transparency log's size (leaves) after a commit or at start. */
  setLogSize(size: number): void;
  /** A checkpoint was signed at `atMs` (ms since the epoch; default now). The scrape reports the age. */
  markCheckpoint(atMs?: number): void;
  setPendingApprovals(count: number): void;
  /** A write entered the sequencer's queue; call the returned function once when it leaves (idempotent). */
  beginWrite(): () => void;
  /** A write refused with SERVER_BUSY (backpressure). */
  recordBusyRefusal(): void;
  /** How many log entries a witness's latest cosigned checkpoint is behind the log. */
  setWitnessLag(witness: string, entries: number): void;
}

type Registers = Registry[];

function registerFlowMetrics(registers: Registers) {
  const requests = new Counter({
    name: 'toolseal_http_requests_total',
    help: 'API requests answered, by route template and HTTP status.',
    labelNames: ['route', 'status'] as const,
    registers,
  });
  const requestSeconds = new Histogram({
    name: 'toolseal_http_request_duration_seconds',
    help: 'API request duration in seconds, by route template.',
    labelNames: ['route'] as const,
    buckets: REQUEST_BUCKETS,
    registers,
  });
  const publishes = new Counter({
    name: 'toolseal_publish_total',
    help: 'Publish attempts by outcome: ok or the error code.',
    labelNames: ['outcome'] as const,
    registers,
  });
  const pipelineSeconds = new Histogram({
    name: 'toolseal_pipeline_duration_seconds',
    help: 'Publish pipeline duration in seconds.',
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const commitSeconds = new Histogram({
    name: 'toolseal_commit_duration_seconds',
    help: 'Commit (sequence, log append, store) duration in seconds.',
    buckets: LATENCY_BUCKETS,
    registers,
  });
  return { requests, requestSeconds, publishes, pipelineSeconds, commitSeconds };
}

function registerStateMetrics(
  registers: Registers,
  readCheckpointMs: () => number | undefined,
  createdMs: number,
  now: () => number,
) {
  const logSize = new Gauge({ name: 'toolseal_log_size', help: 'Leaves in the transparency log.', registers });
  new Gauge({
    name: 'toolseal_checkpoint_age_seconds',
    help: 'Seconds since the last checkpoint was signed (since the process started while none was).',
    registers,
    collect() {
      this.set(Math.max(0, (now() - (readCheckpointMs() ?? createdMs)) / 1000));
    },
  });
  new Gauge({
    name: 'toolseal_checkpoint_timestamp_seconds',
    help: 'Unix time of the last checkpoint signed by this process (0 while none was).',
    registers,
    collect() {
      this.set((readCheckpointMs() ?? 0) / 1000);
    },
  });
  const pendingApprovals = new Gauge({
    name: 'toolseal_approvals_pending',
    help: 'Approval requests waiting for a decision.',
    registers,
  });
  const writesInFlight = new Gauge({
    name: 'toolseal_writes_in_flight',
    help: 'Writes queued or running in the sequencer.',
    registers,
  });
  const busyRefusals = new Counter({
    name: 'toolseal_server_busy_total',
    help: 'Writes refused with SERVER_BUSY (backpressure).',
    registers,
  });
  const witnessLag = new Gauge({
    name: 'toolseal_witness_lag_entries',
    help: "Log entries between the log's size and the witness's latest cosigned checkpoint.",
    labelNames: ['witness'] as const,
    registers,
  });

  return { logSize, pendingApprovals, writesInFlight, busyRefusals, witnessLag };
}

/** The registry's metrics, registered in `options.registry` (or a new registry). */
export function createRegistryMetrics(options: RegistryMetricsOptions = {}): RegistryMetrics {
  const registry = options.registry ?? createMetricsRegistry();
  const registers = [registry.promRegistry];
  const now = options.now ?? Date.now;
  const boundRoute = createLabelBound(options.maxRoutes ?? 64);
  const boundWitness = createLabelBound(options.maxWitnesses ?? 32);
  let lastCheckpointMs: number | undefined;
  const { requests, requestSeconds, publishes, pipelineSeconds, commitSeconds } = registerFlowMetrics(registers);
  const { logSize, pendingApprovals, writesInFlight, busyRefusals, witnessLag } = registerStateMetrics(
    registers,
    () => lastCheckpointMs,
    now(),
    now,
  );

  return {
    registry,
    recordRequest(route, status, seconds) {
      const label = boundRoute(route);
      requests.inc({ route: label, status: String(Math.trunc(status)) });
      requestSeconds.observe({ route: label }, seconds);
    },
    recordPublish(outcome) {
      publishes.inc({ outcome });
    },
    observePipelineSeconds(seconds) {
      pipelineSeconds.observe(seconds);
    },
    observeCommitSeconds(seconds) {
      commitSeconds.observe(seconds);
    },
    setLogSize(size) {
      logSize.set(size);
    },
    markCheckpoint(atMs) {
      lastCheckpointMs = atMs ?? now();
    },
    setPendingApprovals(count) {
      pendingApprovals.set(count);
    },
    beginWrite() {
      writesInFlight.inc();
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        writesInFlight.dec();
      };
    },
    recordBusyRefusal() {
      busyRefusals.inc();
    },
    setWitnessLag(witness, entries) {
      witnessLag.set({ witness: boundWitness(witness) }, entries);
    },
  };
}

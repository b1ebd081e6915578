// The registry's telemetry, composed (issue 29 §1, §2): the metrics listener (`serve --metrics-listen`), the publish
// pipeline and commit as child spans of the request and as latency histograms, the gauges read at each scrape (log
// size, checkpoint age, pending approvals, witness lag), and what the HTTP app gets (src/http/middleware). Built only
// when asked for: without it the server runs exactly as before (no wrapper, no middleware).

import type { AppTelemetry } from '../http/app.ts';
import type { ServedWitnesses } from '../http/app-env.ts';
import type { PipelineRunner } from '../registry/pipeline-runner.ts';
import type { Registry } from '../registry/registry.ts';
import {
  createRegistryMetrics,
  type MetricsListener,
  readEpochMs,
  recordSpan,
  type RegistryMetrics,
  startMetricsListener,
  withSpan,
} from '../telemetry/index.ts';

export interface RegistryTelemetryOptions {
  /** Serve `GET /metrics` here (`--metrics-listen`); host defaults to 127.0.0.1. */
  metricsListen?: { host?: string; port: number };
  /** Tracing was started (src/telemetry/tracing.ts): spans for requests, the pipeline and the commit. */
  tracing?: boolean;
  /** Access log lines (`--log-format json`). */
  accessLog?: (line: string) => void;
}

/** Pending approvals counted per scrape, at most (the gauge then reads this many). */
export const PENDING_APPROVALS_COUNTED = 1000;

export interface RegistryTelemetry {
  readonly metrics: RegistryMetrics | undefined;
  /** What createApp gets. */
  readonly app: AppTelemetry;
  /** The pipeline, timed (histogram) and traced (`publish.pipeline`). */
  wrapPipeline(pipeline: PipelineRunner): PipelineRunner;
  /** The registry as the app sees it: publish traced (`registry.publish`, `publish.commit`) and its commit timed. */
  wrapRegistry(registry: Registry): Registry;
  /** Starts the metrics listener, if asked for; it reads the registry's gauges before each scrape. */
  listen(registry: Registry, witnesses: ServedWitnesses | undefined): Promise<MetricsListener | undefined>;
}

/** Reads the gauges a scrape reports from the registry (and the witnesses). */
export async function refreshRegistryGauges(
  metrics: RegistryMetrics,
  registry: Registry,
  witnesses: ServedWitnesses | undefined,
): Promise<void> {
  const checkpoint = await registry.latestCheckpoint();
  if (checkpoint !== undefined) {
    metrics.setLogSize(checkpoint.size);
    metrics.markCheckpoint(Date.parse(checkpoint.createdAt));
  }
  const pending = await registry.listApprovals('pending', PENDING_APPROVALS_COUNTED);
  metrics.setPendingApprovals(pending.items.length);
  for (const witness of witnesses?.status() ?? []) {
    if (witness.behindBy !== undefined) metrics.setWitnessLag(witness.witness, witness.behindBy);
  }
}

export function createRegistryTelemetry(options: RegistryTelemetryOptions): RegistryTelemetry {
  const metrics = options.metricsListen === undefined ? undefined : createRegistryMetrics();
  const tracing = options.tracing === true;
  // When each publish's pipeline ended (keyed by its body: the registry hands the pipeline the same array).
  const pipelineEnds = new WeakMap<Uint8Array, number>();
  const timed = metrics !== undefined || tracing;
  return {
    metrics,
    app: {
      ...(metrics === undefined ? {} : { metrics }),
      ...(tracing ? { tracing } : {}),
      ...(options.accessLog === undefined ? {} : { accessLog: options.accessLog }),
    },
    wrapPipeline(pipeline) {
      if (!timed) return pipeline;
      return {
        whenReady: () => pipeline.whenReady(),
        close: () => pipeline.close(),
        run: (bytes, limits) =>
          withSpan('publish.pipeline', async () => {
            const start = performance.now();
            try {
              return await pipeline.run(bytes, limits);
            } finally {
              metrics?.observePipelineSeconds((performance.now() - start) / 1000);
              pipelineEnds.set(bytes, readEpochMs());
            }
          }),
      };
    },
    wrapRegistry(registry) {
      if (!timed) return registry;
      const publish: Registry['publish'] = (bytes, publisher) =>
        withSpan('registry.publish', async () => {
          let committed = false;
          try {
            const outcome = await registry.publish(bytes, publisher);
            committed = true;
            return outcome;
          } finally {
            const commitStart = pipelineEnds.get(bytes);
            // A publish refused by the pipeline never reached the commit.
            if (commitStart !== undefined) {
              const end = readEpochMs();
              if (committed) metrics?.observeCommitSeconds((end - commitStart) / 1000);
              recordSpan('publish.commit', commitStart, end, { 'toolseal.committed': committed });
            }
          }
        });
      return new Proxy(registry, {
        get(target, property) {
          if (property === 'publish') return publish;
          const value = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
    async listen(registry, witnesses) {
      if (metrics === undefined || options.metricsListen === undefined) return undefined;
      return startMetricsListener({
        registry: metrics.registry,
        port: options.metricsListen.port,
        ...(options.metricsListen.host === undefined ? {} : { host: options.metricsListen.host }),
        refresh: () => refreshRegistryGauges(metrics, registry, witnesses),
      });
    },
  };
}

// The one composition root: store → keys → registry (pipeline and committer, inline or on threads) → app → server,
// in that order, and closed in the reverse order. Used by `toolseal serve`, the benches and the tests.

import { mountWebRoutes } from '../web/index.ts';
import { mkdirSync } from 'node:fs';
import type { AppDeps } from '../http/app.ts';
import { createApp } from '../http/app.ts';
import { DEFAULT_CACHE_BYTES, ImmutableBodyCache } from '../http/immutable-body-cache.ts';
import { type RunningServer, startHttpServer } from '../http/serve.ts';
import type { PublishCommitter } from '../registry/group-commit.ts';
import { inlinePipeline } from '../registry/pipeline-runner.ts';
import { openRegistry, type Registry, type RegistryOptions, type SequencingOptions } from '../registry/registry.ts';
import { startPipelinePool } from '../runtime/pipeline-pool.ts';
import { startPublishWriter } from '../runtime/publish-writer.ts';
import type { Store } from '../store/index.ts';
import { isDatabaseUrl, openPostgresStore } from '../store/postgres/index.ts';
import { openStore } from '../store/sqlite/index.ts';
import { type DataDirLock, lockDataDir } from './data-dir-lock.ts';
import { startWitnessing, type WitnessingOptions } from './witnessing.ts';
import type { RegistryTelemetryOptions } from './registry-telemetry.ts';
import { openTrustedPublishing, type TrustedPublishingConfig } from './trusted-publishing.ts';

/**
 * What a registry is opened with: the registry's own options (keys, origin, clock, limits, where the pipeline runs and
 * where publishes commit; the opener of the registry closes those), and the data folder instead of a store: the data
 * folder (`toolseal.db` inside), or `:memory:` for a store that lives as long as the process; or, with `databaseUrl`
 * (`postgres://…`, `pglite:[DIR]`), a PostgreSQL store instead (the data folder then holds only dev files).
 */
export type RegistryConfig = Omit<RegistryOptions, 'store' | 'sequencing'> & {
  dataDir: string;
  databaseUrl?: string | undefined;
  /**
   * On a PostgreSQL server (`postgres://…`) several processes may share the database: the log is then sequenced by the
   * one holding the lease (issue 16 §2). These tune it; `false` opens the registry as the database's only writer
   * (admin commands). Ignored for SQLite and in-process PGlite, which no other process can open.
   */
  sequencing?: SequencingOptions | false;
};

/** True for a database other processes can open too (a PostgreSQL server, not PGlite in this process). */
export function isSharedDatabaseUrl(url: string | undefined): boolean {
  return url !== undefined && /^(postgres|postgresql):\/\//i.test(url);
}

/** The store at `where`: a database URL (PostgreSQL, migrated on open) or a SQLite data folder (or `:memory:`). */
export async function openStoreFor(where: string): Promise<Store> {
  return isDatabaseUrl(where) ? await openPostgresStore({ url: where }) : openStore({ dataDir: where });
}

export interface OpenedRegistry {
  store: Store;
  registry: Registry;
  /** Closes the pipeline, the committer and the store (after in-flight publishes have drained). */
  close(): Promise<void>;
}

/** Open the store and the registry over it (synchronously: the pipeline and committer, if given, are the caller's). */
export async function openRegistryAt(config: RegistryConfig): Promise<OpenedRegistry> {
  const store = await openStoreFor(config.databaseUrl ?? config.dataDir);
  const pipeline = config.pipeline ?? inlinePipeline;
  let registry: Registry;
  try {
    const { dataDir: _dataDir, databaseUrl: _databaseUrl, sequencing, ...options } = config;
    const shared = isSharedDatabaseUrl(config.databaseUrl) && sequencing !== undefined && sequencing !== false;
    registry = await openRegistry({ ...options, store, pipeline, ...(shared ? { sequencing } : {}) });
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    store,
    registry,
    close: async () => {
      await registry.drain();
      await registry.stopSequencing();
      await pipeline.close();
      await config.committer?.close();
      await store.close();
    },
  };
}

export interface RegistryServerOptions extends Omit<RegistryConfig, 'origin' | 'pipeline' | 'committer'> {
  /** Port on 127.0.0.1 (0 picks a free one). */
  port: number;
  /** Origin recorded in attestations (default: the URL the server listens on). */
  origin?: string;
  /**
   * Pipeline worker threads: 0 runs the pipeline and the commits on the event loop; 1 or more also commits on a
   * writer thread of its own (needs a data folder on disk).
   */
  pipelineWorkers?: number;
  /** HTTP options (body limit, read cache, where unexpected errors go). */
  app?: Omit<AppDeps, 'registry'>;
  /** Submit every checkpoint to these witnesses and serve their cosignatures (witnessing.ts). */
  witnessing?: Omit<WitnessingOptions, 'registry' | 'dataDir'>;
  /** Metrics listener, request spans, access log (issue 29; registry-telemetry.ts). */
  telemetry?: RegistryTelemetryOptions;
  /** How OIDC ID tokens are checked at publish (issue 28; trusted-publishing.ts). */
  trustedPublishing?: TrustedPublishingConfig;
}

/** How a server on a PostgreSQL server keeps the sequencer lease, unless told otherwise (sequencer.ts has the rest). */
export const DEFAULT_SERVER_SEQUENCING: SequencingOptions = {};

export interface RunningRegistryServer extends OpenedRegistry {
  url: string;
  port: number;
  origin: string;
  pipelineWorkers: number;
  writerThread: boolean;
  /** `http://127.0.0.1:PORT/metrics` when `telemetry.metricsListen` was given. */
  metricsUrl?: string;
}

type Fetch = (request: Request, env?: unknown) => Response | Promise<Response>;

/**
 * Start a registry server. The data folder is locked first (DATA_DIR_LOCKED when another server holds it; see
 * data-dir-lock.ts), before anything is opened or bound. The port is bound next (port 0 picks one, and the origin may be the URL), so until the
 * app exists (a few milliseconds) requests get 503. `close()` stops accepting, finishes in-flight requests and
 * publishes, then closes threads and the store, and releases the lock. A failure on the way closes whatever was opened.
 */
export async function startRegistryServer(options: RegistryServerOptions): Promise<RunningRegistryServer> {
  // On PostgreSQL the database orders the writers (see src/store/postgres): no data folder to hold, only one to
  // keep the dev files (--dev's token) in.
  if (options.databaseUrl !== undefined && options.dataDir !== ':memory:')
    mkdirSync(options.dataDir, { recursive: true });
  const lock = options.databaseUrl === undefined ? lockDataDir(options.dataDir) : { release: () => {} };
  try {
    return await startLockedRegistryServer(options, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function startLockedRegistryServer(
  options: RegistryServerOptions,
  lock: DataDirLock,
): Promise<RunningRegistryServer> {
  const workers = options.pipelineWorkers ?? 0;
  // Loaded only when asked for: a server without telemetry never loads prom-client or OpenTelemetry.
  const telemetry =
    options.telemetry === undefined
      ? undefined
      : (await import('./registry-telemetry.ts')).createRegistryTelemetry(options.telemetry);
  const basePipeline = workers > 0 ? startPipelinePool(workers) : inlinePipeline;
  const pipeline = telemetry?.wrapPipeline(basePipeline) ?? basePipeline;
  let committer: PublishCommitter | undefined;
  let server: RunningServer | undefined;
  let opened: OpenedRegistry | undefined;
  try {
    await pipeline.whenReady();
    let app: { fetch: Fetch } | undefined;
    const starting: Fetch = () => new Response('starting', { status: 503, headers: { 'Retry-After': '1' } });
    // One immutable cache for the app and the server: what the app answered from it, the server answers first.
    const cache = options.app?.cache ?? new ImmutableBodyCache(options.app?.cacheBytes ?? DEFAULT_CACHE_BYTES);
    server = await startHttpServer(
      { fetch: (request, env) => (app ?? { fetch: starting }).fetch(request, env) },
      options.port,
      // With telemetry every request goes through the app (its middleware counts and logs it).
      { fastReads: telemetry === undefined ? cache : undefined },
    );
    const origin = options.origin ?? server.url;
    // The writer thread opens a SQLite store of its own: on PostgreSQL, publishes commit on the event loop.
    committer =
      workers > 0 && options.databaseUrl === undefined
        ? startPublishWriter({
            dataDir: options.dataDir,
            keysDir: options.keysDir,
            origin,
            ...(options.logOrigin === undefined ? {} : { logOrigin: options.logOrigin }),
          })
        : undefined;
    // A server on a PostgreSQL server always takes part in the lease: other processes may share the database.
    const sequencing = options.sequencing === undefined ? DEFAULT_SERVER_SEQUENCING : options.sequencing;
    opened = await openRegistryAt({
      ...options,
      origin,
      pipeline,
      sequencing,
      ...(committer === undefined ? {} : { committer }),
    });
    await committer?.whenReady();
    const witnessing = options.witnessing
      ? startWitnessing({ ...options.witnessing, registry: opened.registry, dataDir: options.dataDir })
      : undefined;
    app = createApp({
      ...options.app,
      registry: telemetry?.wrapRegistry(opened.registry) ?? opened.registry,
      trustedPublishing: openTrustedPublishing(opened.store, options.trustedPublishing),
      cache,
      ...(telemetry === undefined ? {} : { telemetry: telemetry.app }),
      ...(witnessing === undefined ? {} : { witnesses: witnessing }),
      mountPages: mountWebRoutes,
    });
    const metricsListener = await telemetry?.listen(opened.registry, witnessing);
    const running = server;
    const registry = opened;
    return {
      ...registry,
      url: running.url,
      port: running.port,
      origin,
      pipelineWorkers: workers,
      writerThread: committer !== undefined,
      ...(metricsListener === undefined ? {} : { metricsUrl: metricsListener.url }),
      close: async () => {
        try {
          await running.close();
          await metricsListener?.close();
          witnessing?.close();
          await registry.close();
        } finally {
          lock.release();
        }
      },
    };
  } catch (error) {
    await server?.close();
    if (opened) await opened.close();
    else {
      await pipeline.close();
      await committer?.close();
    }
    throw error;
  }
}

// `toolseal serve`: start the registry server (the composition root in src/server) and print where it listens.

import { parseArgs } from 'node:util';
import {
  DEV_NAMESPACE,
  defaultPipelineWorkers,
  redactDatabaseUrl,
  type RunningRegistryServer,
  seedDevRegistry,
  startRegistryServer,
} from '../server/index.ts';
import {
  parsePositiveInteger,
  resolveDatabaseUrl,
  resolveDataDir,
  resolveKeysDir,
  resolveLogFormat,
  resolveMetricsListen,
  resolvePipelineWorkers,
  resolvePort,
  resolveUserPath,
} from './config.ts';
import { type ExitCode, UsageError } from './output.ts';
import { describeError } from '../core/errors.ts';
import { readWitnessPolicyFile } from './verify.ts';
import type { SequencerEvent } from '../server/index.ts';
import type { RegistryTelemetryOptions } from '../server/registry-telemetry.ts';

export const serveUsage = `toolseal serve [--port P] [--data DIR] [--keys DIR] [--origin URL] [--max-body-bytes N] [--pipeline-workers N] [--approval-ttl SECONDS] [--database URL] [--sequencer-lease MS] [--witness-policy FILE] [--metrics-listen [HOST:]PORT] [--log-format text|json] [--max-pending-writes N] [--allow-insecure-issuer] [--github-issuer URL] [--dev]
  Serves the registry on 127.0.0.1 (defaults: port 8787, data/, keys/; or TOOLSEAL_PORT, TOOLSEAL_DATA,
  TOOLSEAL_KEYS). A signing key is generated on first start. --pipeline-workers: threads that run the
  publish pipeline (default: one per core beyond the first, at most 4; or TOOLSEAL_PIPELINE_WORKERS); with
  1 or more, publishes are also signed and committed on a writer thread; 0 runs both on the event loop.
  --approval-ttl: how long an approval request stays open, 1..86400 seconds (default 900; or
  TOOLSEAL_APPROVAL_TTL); an expired one fails closed.
  --dev: on an empty database, create a local dev publisher and publish the examples in manifests/.
  --database URL: keep the registry in PostgreSQL (postgres://…, or pglite:[DIR] in process; or
  TOOLSEAL_DATABASE_URL) instead of SQLite under --data; migrated on start; publishes then commit on the event
  loop (the writer thread is SQLite-only). The keys stay in --keys.
  Several serve processes may share one PostgreSQL server database (give them the same --origin and the same
  keys: docs/deploy.md): one at a time holds the sequencer lease and signs the log; the others hand it their
  writes through the database. --sequencer-lease: how long a lease lasts unrenewed, i.e. how soon another
  process takes over from one that died (default 3000 ms; or TOOLSEAL_SEQUENCER_LEASE_MS).
  --witness-policy FILE: a C2SP tlog-policy naming this log and its witnesses: every new checkpoint is submitted to
  each witness (never holding up a publish), the cosignatures are merged into /v1/log/checkpoint and
  /v1/attestations/…, each witness's last cosigned size is kept in DATA/witness-sizes.json, and /healthz shows
  which witnesses are behind (docs/transparency-log.md).
  --max-pending-writes N: writes (publishes, yanks, approvals) this process keeps in flight at most (default 1024;
  or TOOLSEAL_MAX_PENDING_WRITES); one more is answered 503 SERVER_BUSY with Retry-After, having written nothing.
  --metrics-listen [HOST:]PORT: serve Prometheus metrics at GET /metrics on a listener of its own (host
  127.0.0.1 unless named; or TOOLSEAL_METRICS_LISTEN); the API answers /metrics with 404.
  --log-format json: one JSON access-log line per request on stderr, and the other stderr lines as JSON too (or
  TOOLSEAL_LOG_FORMAT). Traces go over OTLP/HTTP when the standard OTEL_* variables ask for it
  (docs/operations.md).
  Publishes also accept a CI's OIDC ID token for a namespace with trust rules (publisher trust; docs/trusted-publishing.md).
  Issuers are fetched over https: only; --allow-insecure-issuer also accepts http://127.0.0.1 issuers (tests and
  local trials, never in production). --github-issuer URL: the issuer io.github namespaces are proven by
  (default https://token.actions.githubusercontent.com).
  Stops gracefully on SIGTERM/SIGINT.`;

/** --max-pending-writes (or TOOLSEAL_MAX_PENDING_WRITES): the bound on writes in flight (issue 24 §3). */
function readMaxPendingWrites(given: string | undefined): number | undefined {
  return parsePositiveInteger(given ?? process.env['TOOLSEAL_MAX_PENDING_WRITES'], '--max-pending-writes');
}

/** How publish checks OIDC ID tokens (issue 28). */
function readTrustedPublishing(allowInsecureIssuer: boolean | undefined, githubIssuer: string | undefined) {
  return { allowInsecureIssuer: allowInsecureIssuer === true, ...(githubIssuer === undefined ? {} : { githubIssuer }) };
}

export async function runServeCommand(args: string[]): Promise<ExitCode> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      data: { type: 'string' },
      keys: { type: 'string' },
      origin: { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'pipeline-workers': { type: 'string' },
      database: { type: 'string' },
      'approval-ttl': { type: 'string' },
      'sequencer-lease': { type: 'string' },
      dev: { type: 'boolean' },
      'witness-policy': { type: 'string' },
      'max-pending-writes': { type: 'string' },
      examples: { type: 'string' },
      'metrics-listen': { type: 'string' },
      'log-format': { type: 'string' },
      'allow-insecure-issuer': { type: 'boolean' },
      'github-issuer': { type: 'string' },
    },
  });
  const tracing = await startServeTelemetry(values['metrics-listen'], values['log-format']);
  const dataDir = resolveDataDir(values.data);
  const databaseUrl = resolveDatabaseUrl(values.database);
  const keysDir = resolveKeysDir(values.keys);
  const maxBodyBytes =
    parsePositiveInteger(values['max-body-bytes'] ?? process.env['TOOLSEAL_MAX_BODY_BYTES'], '--max-body-bytes') ??
    1024 * 1024;
  const origin = values.origin ?? process.env['TOOLSEAL_ORIGIN'];
  const approvalTtlSeconds = resolveApprovalTtl(values['approval-ttl'] ?? process.env['TOOLSEAL_APPROVAL_TTL']);
  const leaseMs = parsePositiveInteger(
    values['sequencer-lease'] ?? process.env['TOOLSEAL_SEQUENCER_LEASE_MS'],
    '--sequencer-lease',
  );
  const maxPendingWrites = readMaxPendingWrites(values['max-pending-writes']);
  const witnessPolicy =
    values['witness-policy'] === undefined ? undefined : await readWitnessPolicyFile(values['witness-policy']);
  const server = await startRegistryServer({
    dataDir,
    databaseUrl,
    keysDir,
    port: resolvePort(values.port),
    ...(origin === undefined ? {} : { origin }),
    pipelineWorkers: resolvePipelineWorkers(values['pipeline-workers'], defaultPipelineWorkers()),
    limits: { maxBytes: maxBodyBytes },
    app: { maxBodyBytes },
    ...(approvalTtlSeconds === undefined ? {} : { approvalTtlSeconds }),
    ...(maxPendingWrites === undefined ? {} : { maxPendingWrites }),
    sequencing: { ...(leaseMs === undefined ? {} : { leaseMs }), onEvent: printSequencerEvent },
    ...(witnessPolicy === undefined ? {} : { witnessing: { policy: witnessPolicy, onError: printWitnessError } }),
    trustedPublishing: readTrustedPublishing(values['allow-insecure-issuer'], values['github-issuer']),
    ...(tracing.options === undefined ? {} : { telemetry: tracing.options }),
  }).catch(async (error: unknown) => {
    await tracing.shutdown();
    throw error;
  });
  try {
    const lines = [
      `toolseal registry listening on ${server.url}`,
      `  web pages: ${server.url}/  (transparency log ${server.url}/ui/log, approvals ${server.url}/ui/approvals)`,
      `  data: ${databaseUrl === undefined ? dataDir : redactDatabaseUrl(databaseUrl)}  keys: ${keysDir}  signing key: ${await server.registry.activeKid()}  pipeline workers: ${server.pipelineWorkers}  writer thread: ${server.writerThread ? 'yes' : 'no'}`,
    ];
    const role = server.registry.sequencingRole;
    if (server.metricsUrl !== undefined) lines.push(`  metrics: ${server.metricsUrl}`);
    if (tracing.enabled) lines.push(`  traces: ${tracing.endpoint}`);
    if (role !== undefined)
      lines.push(`  log: shared with other processes on this database; this one is the ${role} now`);
    if (values.dev)
      lines.push(
        ...(await describeDevRegistry(
          server,
          dataDir,
          values.examples === undefined ? 'manifests' : resolveUserPath(values.examples),
        )),
      );
    process.stdout.write(`${lines.join('\n')}\n`);
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    process.stdout.write(`toolseal: ${signal} received, finishing in-flight requests\n`);
  } finally {
    await server.close();
    await tracing.shutdown();
  }
  return 0;
}

/** `serve --log-format`: how the stderr lines below are written. */
let logFormat: 'text' | 'json' = 'text';

/** One stderr line: the text, or with --log-format json the event as one JSON line. */
function printLogLine(text: string, fields: Record<string, unknown>): void {
  process.stderr.write(
    logFormat === 'json' ? `${JSON.stringify({ time: new Date().toISOString(), ...fields })}\n` : text,
  );
}

interface ServeTelemetry {
  /** What the server is to start (undefined: no telemetry at all). */
  options?: RegistryTelemetryOptions;
  enabled: boolean;
  endpoint?: string;
  shutdown(): Promise<void>;
}

/** --metrics-listen, --log-format, and tracing from the OTEL_* variables (OpenTelemetry loaded only then). */
async function startServeTelemetry(
  listenFlag: string | undefined,
  formatFlag: string | undefined,
): Promise<ServeTelemetry> {
  const metricsListen = resolveMetricsListen(listenFlag);
  logFormat = resolveLogFormat(formatFlag);
  const tracing = await startServeTracing();
  if (metricsListen === undefined && logFormat === 'text' && !tracing.enabled) return tracing;
  const options: RegistryTelemetryOptions = {
    ...(metricsListen === undefined ? {} : { metricsListen }),
    tracing: tracing.enabled,
    ...(logFormat === 'json' ? { accessLog: (line: string) => process.stderr.write(line) } : {}),
  };
  return { ...tracing, options };
}

/** Tracing from the OTEL_* variables; OpenTelemetry is loaded only when they ask for it. */
async function startServeTracing(): Promise<ServeTelemetry> {
  const { resolveTracesEndpoint } = await import('../telemetry/tracing-environment.ts');
  if (resolveTracesEndpoint(process.env).url === undefined) return { enabled: false, shutdown: async () => {} };
  const { startTracing } = await import('../telemetry/tracing.ts');
  const tracing = startTracing({ serviceName: 'toolseal-registry' });
  if (!tracing.enabled) process.stderr.write(`toolseal: tracing off: ${tracing.reason}\n`);
  return {
    enabled: tracing.enabled,
    ...(tracing.endpoint === undefined ? {} : { endpoint: tracing.endpoint }),
    shutdown: () => tracing.shutdown(),
  };
}

/** --approval-ttl (or TOOLSEAL_APPROVAL_TTL): 1 to 86400 seconds in decimal digits. */
function resolveApprovalTtl(text: string | undefined): number | undefined {
  const seconds = parsePositiveInteger(text, '--approval-ttl');
  if (seconds !== undefined && seconds > 86_400) throw new UsageError('--approval-ttl must be 1..86400 seconds');
  return seconds;
}

/** Seed an empty registry with the examples, and say how to try it. */
async function describeDevRegistry(
  server: RunningRegistryServer,
  dataDir: string,
  examplesDir: string,
): Promise<string[]> {
  const { token, tokenFile, published } = await seedDevRegistry(server.registry, dataDir, examplesDir);
  const url = server.url;
  const lines = published.map((line) => `  ${line}`);
  const first = (await server.registry.listManifests(undefined, undefined, 1)).items[0];
  lines.push('', 'Try:', `  curl ${url}/v1/manifests`);
  if (first) {
    const base = `${url}/v1/manifests/${first.name}`;
    lines.push(
      `  curl -i ${base}/latest -L`,
      `  curl ${base}/${first.latestVersion}/attestation`,
      `  curl ${url}/v1/attestations/${first.digest}`,
    );
  }
  lines.push(`  curl ${url}/.well-known/jwks.json`, `  curl ${url}/v1/log/checkpoint`);
  if (token) {
    lines.push('', `Dev publisher token for ${DEV_NAMESPACE} (also in ${tokenFile}):`, `  ${token}`);
    lines.push(`  npm run --silent toolseal -- publish manifests/payments.json --registry ${url} --token ${token}`);
  }
  return lines;
}

/** A witness that failed (down, slow, garbage, a cosignature that does not verify): one line on stderr. */
function printWitnessError(witness: string, message: string): void {
  printLogLine(`toolseal: witness ${witness}: ${message}\n`, { event: 'witness-error', witness, message });
}

/** Lease changes and sequencing failures on stderr, one line each (never a URL or a secret). */
function printSequencerEvent(event: SequencerEvent): void {
  if (event.type === 'role') {
    printLogLine(
      event.role === 'sequencer'
        ? `toolseal: this process now sequences the log (lease epoch ${event.epoch})\n`
        : `toolseal: the sequencer lease passed to another process (epoch ${event.epoch})\n`,
      { event: 'sequencer-role', role: event.role, epoch: event.epoch },
    );
  } else {
    const message = describeError(event.error);
    printLogLine(`toolseal: sequencer ${event.where}: ${message}\n`, {
      event: 'sequencer-error',
      where: event.where,
      message,
    });
  }
}

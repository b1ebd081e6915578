// `toolseal serve`: open the store (migrating it), load or create keys, and serve the API on 127.0.0.1.

import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApp, startHttpServer } from '../http/index.ts';
import {
  openRegistry,
  createPublisher,
  inlinePipeline,
  type PublishCommitter,
  type Registry,
} from '../registry/index.ts';
import { ToolsealError } from '../core/errors.ts';
import { parsePositiveInteger, resolveDataDir, resolveKeysDir, resolvePipelineWorkers, resolvePort } from './config.ts';
import type { ExitCode } from './output.ts';
import { openStore } from '../store/sqlite/index.ts';
import { defaultPipelineWorkers, startPipelinePool, startPublishWriter } from '../runtime/index.ts';

export const serveUsage = `toolseal serve [--port P] [--data DIR] [--keys DIR] [--origin URL] [--max-body-bytes N] [--pipeline-workers N] [--dev]
  Serves the registry on 127.0.0.1 (defaults: port 8787, data/, keys/; or TOOLSEAL_PORT, TOOLSEAL_DATA,
  TOOLSEAL_KEYS). A signing key is generated on first start. --pipeline-workers: threads that run the
  publish pipeline (default: one per core beyond the first, at most 4; or TOOLSEAL_PIPELINE_WORKERS); with
  1 or more, publishes are also signed and committed on a writer thread; 0 runs both on the event loop.
  --dev: on an empty database, create a local dev publisher and publish the examples in manifests/.
  Stops gracefully on SIGTERM/SIGINT.`;

const DEV_NAMESPACE = 'io.github.acme';
const DEV_TOKEN_FILE = 'dev-token.txt';

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
      dev: { type: 'boolean' },
      examples: { type: 'string' },
    },
  });
  const dataDir = resolveDataDir(values.data);
  const keysDir = resolveKeysDir(values.keys);
  const port = resolvePort(values.port);
  const maxBodyBytes =
    parsePositiveInteger(values['max-body-bytes'] ?? process.env['TOOLSEAL_MAX_BODY_BYTES'], '--max-body-bytes') ??
    1024 * 1024;
  const pipelineWorkers = resolvePipelineWorkers(values['pipeline-workers'], defaultPipelineWorkers());

  const store = openStore({ dataDir });
  const pipeline = pipelineWorkers > 0 ? startPipelinePool(pipelineWorkers) : inlinePipeline;
  let committer: PublishCommitter | undefined;
  let registry: Registry;
  try {
    await pipeline.whenReady();
    // The origin is known once we listen (port 0 picks one), so the app is built after the port is bound;
    // until then (a few milliseconds) requests get 503.
    let app: { fetch: (request: Request, env?: unknown) => Response | Promise<Response> } | undefined;
    const server = await startHttpServer(
      {
        fetch: (request, env) =>
          app ? app.fetch(request, env) : new Response('starting', { status: 503, headers: { 'Retry-After': '1' } }),
      },
      port,
    );
    const origin = values.origin ?? process.env['TOOLSEAL_ORIGIN'] ?? server.url;
    try {
      // With worker threads, publishes are also committed on a writer thread of their own (publish-writer.ts).
      committer = pipelineWorkers > 0 ? startPublishWriter({ dataDir, keysDir, origin }) : undefined;
      registry = openRegistry({ store, keysDir, origin, limits: { maxBytes: maxBodyBytes }, pipeline, committer });
      await committer?.whenReady();
    } catch (error) {
      await server.close();
      throw error;
    }
    app = createApp({ registry, maxBodyBytes });

    const lines = [
      `toolseal registry listening on ${server.url}`,
      `  data: ${dataDir}  keys: ${keysDir}  signing key: ${registry.activeKid}  pipeline workers: ${pipelineWorkers}  writer thread: ${committer ? 'yes' : 'no'}`,
    ];
    if (values.dev)
      lines.push(...(await seedDevRegistry(registry, dataDir, values.examples ?? 'manifests', server.url)));
    process.stdout.write(lines.join('\n') + '\n');

    await new Promise<void>((resolve) => {
      const stop = (signal: string): void => {
        process.stdout.write(`toolseal: ${signal} received, finishing in-flight requests\n`);
        resolve();
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });
    await server.close();
    await registry.drain();
    return 0;
  } finally {
    await pipeline.close();
    await committer?.close();
    store.close();
  }
}

/** On an empty database: a dev publisher for the examples' namespace, and every example published. */
async function seedDevRegistry(
  registry: Registry,
  dataDir: string,
  examplesDir: string,
  url: string,
): Promise<string[]> {
  const tokenFile = join(dataDir, DEV_TOKEN_FILE);
  const lines: string[] = [];
  if (registry.store.countPublishers() === 0) {
    const { token } = createPublisher(registry.store, DEV_NAMESPACE);
    writeFileSync(tokenFile, token + '\n', { mode: 0o600 });
    if (existsSync(examplesDir)) {
      const publisher = registry.authenticate(token);
      for (const file of readdirSync(examplesDir)
        .filter((name) => name.endsWith('.json'))
        .sort()) {
        try {
          const outcome = await registry.publish(readFileSync(join(examplesDir, file)), publisher);
          lines.push(`  published ${outcome.record.name}@${outcome.record.version} ${outcome.record.digest}`);
        } catch (error) {
          lines.push(
            `  could not publish ${file}: ${error instanceof ToolsealError ? `${error.code} ${error.message}` : String(error)}`,
          );
        }
      }
    }
  }
  const token = existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : undefined;
  const first = registry.listManifests(undefined, undefined, 1).items[0];
  lines.push('', 'Try:');
  lines.push(`  curl ${url}/v1/manifests`);
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

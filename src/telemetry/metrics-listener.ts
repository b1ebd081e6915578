// The metrics listener (issue 29 §1; Prometheus "Exposition formats", text format 0.0.4): its own node:http server,
// 127.0.0.1 unless told otherwise, answering only GET /metrics. It never shares a port with the API.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsRegistry } from './metrics-registry.ts';

export interface MetricsListenerOptions {
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port (0 picks a free one). */
  port: number;
  registry: MetricsRegistry;
  /** Called before each scrape is rendered (to read gauges such as the log size); a failure answers 500. */
  refresh?: () => Promise<void> | void;
}

export interface MetricsListener {
  /** `http://host:port/metrics` as bound. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

function answer(response: import('node:http').ServerResponse, status: number, text: string, headers = {}): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
  response.end(text);
}

function handle(server: Server, registry: MetricsRegistry, refresh: MetricsListenerOptions['refresh']): void {
  server.on('request', (request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics') return answer(response, 404, 'not found\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return answer(response, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
    }
    Promise.resolve()
      .then(refresh)
      .then(() => registry.render())
      .then(
        (text) => {
          response.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
          response.end(request.method === 'HEAD' ? undefined : text);
        },
        () => answer(response, 500, 'metrics unavailable\n'),
      );
  });
}

/** Starts serving `registry` on `host:port`; resolves once listening. */
export async function startMetricsListener(options: MetricsListenerOptions): Promise<MetricsListener> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer({ requestTimeout: 10_000, headersTimeout: 10_000 });
  handle(server, options.registry, options.refresh);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}/metrics`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

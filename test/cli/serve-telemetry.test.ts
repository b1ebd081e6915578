// `toolseal serve --metrics-listen 127.0.0.1:0 --log-format json` as a real process: it prints where the metrics are,
// the listener answers a Prometheus scrape that counted the request by its template, the API port answers /metrics
// with 404, each request is one JSON access-log line on stderr, and SIGTERM still stops it cleanly.

import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, makeTempDir, type ServerProcess, startServerProcess } from '../helpers/registry-helpers.ts';
import { readValue, scrape } from '../telemetry/scrape.ts';

let server: ServerProcess | undefined;
afterAll(() => {
  server?.kill();
  cleanupTempDirs();
});

describe('serve --metrics-listen --log-format json', () => {
  it('serves metrics on its own listener and logs each request as JSON', async () => {
    const dir = makeTempDir();
    server = await startServerProcess(
      [
        '--port',
        '0',
        '--data',
        join(dir, 'data'),
        '--keys',
        join(dir, 'keys'),
        // PGlite in process (no native module needed).
        '--database',
        `pglite:${join(dir, 'pg')}`,
        '--pipeline-workers',
        '0',
        '--metrics-listen',
        '127.0.0.1:0',
        '--log-format',
        'json',
      ],
      { timeoutMs: 120_000 },
    );
    await server.waitForOutput(/ {2}metrics: http:\/\/127\.0\.0\.1:\d+\/metrics\n/);
    const metricsUrl = /metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(server.stdout())![1]!;
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    const families = await scrape(metricsUrl);
    expect(readValue(families, 'toolseal_http_requests_total', { route: '/healthz', status: '200' })).toBe(1);
    expect(readValue(families, 'toolseal_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    const access = server
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((record) => 'route' in record)
      .map(({ method, route, path, status }) => ({ method, route, path, status }));
    expect(access).toEqual([
      { method: 'GET', route: '/healthz', path: '/healthz', status: 200 },
      { method: 'GET', route: 'unmatched', path: '/metrics', status: 404 },
    ]);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });
});

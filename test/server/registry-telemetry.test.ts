// `serve`'s telemetry on a real server (issue 29 §1, §3): the metrics listener scraped with a Prometheus text-format
// parser sees requests by route template, publish outcomes by code, pipeline and commit latency and the log size
// move; the API answers /metrics with 404; no label or access-log line holds a namespace's raw path or a token. With
// OTEL_* set, the spans reach an OTLP receiver with the right parents: the request (under the caller's traceparent),
// registry.publish, and the pipeline and the commit below it.

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { cleanupTempDirs, makeTempDir, manifestBytes } from '../helpers/registry-helpers.ts';
import { startTracing, type Tracing } from '../../src/telemetry/tracing.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../telemetry/otlp-receiver.ts';
import { readCount, readValue, scrape, scrapeText } from '../telemetry/scrape.ts';

afterAll(cleanupTempDirs);

describe('serve --metrics-listen and --log-format json', () => {
  let server: RunningRegistryServer;
  let token: string;
  let receiver: OtlpReceiver;
  let tracing: Tracing;
  const accessLines: string[] = [];

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    tracing = startTracing({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
      serviceName: 'toolseal-registry',
    });
    const dir = makeTempDir();
    server = await startRegistryServer({
      dataDir: join(dir, 'data'),
      // PGlite in process: the same store port as SQLite, and no native module.
      databaseUrl: 'pglite:',
      keysDir: join(dir, 'keys'),
      port: 0,
      telemetry: { metricsListen: { port: 0 }, tracing: true, accessLog: (line) => accessLines.push(line) },
    });
    ({ token } = await server.registry.createPublisher('io.github.acme'));
  });
  afterAll(async () => {
    await server?.close();
    await tracing?.shutdown();
    await receiver?.close();
  });

  const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
  const CALLER_SPAN = 'b7ad6b7169203331';
  const publish = (body: Uint8Array, bearer: string | undefined) =>
    fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      },
      body,
    });

  it('counts requests by template, publishes by outcome, and the stages, on its own listener only', async () => {
    expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await publish(manifestBytes(), token)).status).toBe(201);
    expect((await publish(manifestBytes({ description: 'other bytes' }), token)).status).toBe(409);
    expect((await publish(manifestBytes(), 'ts_wrong-secret-token')).status).toBe(401);
    const read = await fetch(`${server.url}/v1/manifests/io.github.acme/widgets/1.0.0?token=query-secret`);
    expect(read.status).toBe(200);
    expect((await fetch(`${server.url}/v1/manifests/io.github.acme/widgets/1.0.0`)).status).toBe(200);
    const onApi = await fetch(`${server.url}/metrics`);
    expect(onApi.status).toBe(404);
    expect(await onApi.text()).not.toContain('toolseal_');

    const text = await scrapeText(server.metricsUrl!);
    const families = await scrape(server.metricsUrl!);
    const requests = (route: string, status: string) =>
      readValue(families, 'toolseal_http_requests_total', { route, status });
    expect(requests('/v1/manifests', '201')).toBe(1);
    expect(requests('/v1/manifests', '409')).toBe(1);
    expect(requests('/v1/manifests', '401')).toBe(1);
    expect(requests('/v1/manifests/:namespace/:name/:version', '200')).toBe(2);
    expect(requests('unmatched', '404')).toBe(1);
    expect(readValue(families, 'toolseal_publish_total', { outcome: 'ok' })).toBe(1);
    expect(readValue(families, 'toolseal_publish_total', { outcome: 'VERSION_EXISTS' })).toBe(1);
    expect(readValue(families, 'toolseal_publish_total', { outcome: 'UNAUTHENTICATED' })).toBe(1);
    // The 401 never reached the pipeline; VERSION_EXISTS is found at the commit.
    expect(readCount(families, 'toolseal_pipeline_duration_seconds')).toBe(2);
    expect(readCount(families, 'toolseal_commit_duration_seconds')).toBe(1);
    const checkpoint = await server.registry.latestCheckpoint();
    expect(checkpoint!.size).toBeGreaterThan(0);
    expect(readValue(families, 'toolseal_log_size')).toBe(checkpoint!.size);
    expect(readValue(families, 'toolseal_approvals_pending')).toBe(0);
    expect(readValue(families, 'toolseal_writes_in_flight')).toBe(0);
    const age = readValue(families, 'toolseal_checkpoint_age_seconds')!;
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(60);
    // Labels name templates and codes only: no namespace, no path, no token.
    for (const secret of ['io.github.acme', 'widgets', 'ts_wrong', 'query-secret']) expect(text).not.toContain(secret);
  });

  it('writes one JSON access-log line per request: template, path without query, status; no token', () => {
    const records = accessLines.map((line) => {
      expect(line.endsWith('\n')).toBe(true);
      return JSON.parse(line) as Record<string, unknown>;
    });
    expect(records.map(({ time: _t, durationMs: _d, ...rest }) => rest)).toEqual([
      { method: 'POST', route: '/v1/manifests', path: '/v1/manifests', status: 201 },
      { method: 'POST', route: '/v1/manifests', path: '/v1/manifests', status: 409 },
      { method: 'POST', route: '/v1/manifests', path: '/v1/manifests', status: 401 },
      {
        method: 'GET',
        route: '/v1/manifests/:namespace/:name/:version',
        path: '/v1/manifests/io.github.acme/widgets/1.0.0',
        status: 200,
      },
      {
        method: 'GET',
        route: '/v1/manifests/:namespace/:name/:version',
        path: '/v1/manifests/io.github.acme/widgets/1.0.0',
        status: 200,
      },
      { method: 'GET', route: 'unmatched', path: '/metrics', status: 404 },
    ]);
    for (const record of records) {
      expect(Object.keys(record)).toEqual(['time', 'method', 'route', 'path', 'status', 'durationMs']);
      expect(record['time']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(typeof record['durationMs']).toBe('number');
    }
    expect(accessLines.join('')).not.toMatch(/secret|Bearer|ts_/);
  });

  it('with OTEL_* set, exports the request span under the caller, and registry.publish, the pipeline and the commit below it', async () => {
    await tracing.forceFlush();
    const spans = receiver.spans.filter((span) => span.traceId === CALLER_TRACE);
    const requests = spans.filter((span) => span.name === 'POST /v1/manifests');
    expect(requests.map((span) => span.attributes['http.response.status_code'])).toEqual([201, 409, 401]);
    const [created] = requests;
    expect(created).toMatchObject({ parentSpanId: CALLER_SPAN, serviceName: 'toolseal-registry' });
    expect(created!.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/v1/manifests',
      'http.response.status_code': 201,
    });
    const publishes = spans.filter((span) => span.name === 'registry.publish');
    // The 401 never reached the registry.
    expect(publishes.map((span) => requests.findIndex((r) => r.spanId === span.parentSpanId))).toEqual([0, 1]);
    const childrenOf = (parent: string) =>
      spans.filter((span) => span.parentSpanId === parent).map((span) => [span.name, span.attributes]);
    expect(childrenOf(publishes[0]!.spanId)).toEqual([
      ['publish.pipeline', {}],
      ['publish.commit', { 'toolseal.committed': true }],
    ]);
    // VERSION_EXISTS is found at the commit: an error status and its code, never its message.
    expect(childrenOf(publishes[1]!.spanId)).toEqual([
      ['publish.pipeline', {}],
      ['publish.commit', { 'toolseal.committed': false }],
    ]);
    expect(publishes[1]!.attributes).toEqual({ 'error.type': 'VERSION_EXISTS' });
    expect(publishes[1]!.status).toBe(2);
    const all = JSON.stringify(receiver.spans);
    for (const secret of [token, 'ts_wrong', 'query-secret', 'Bearer']) expect(all).not.toContain(secret);
    // The read's span is named by its template, not its path.
    expect(receiver.spans.some((span) => span.name === 'GET /v1/manifests/:namespace/:name/:version')).toBe(true);
    expect(all).not.toContain('io.github.acme');
  });
});

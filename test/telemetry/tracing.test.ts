// Tracing on: spans exported over OTLP/HTTP (JSON) to a receiver on 127.0.0.1, with the right parents, and the trace
// context propagated to an upstream HTTP server in the headers and in the MCP message's params._meta.traceparent.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolsealError } from '../../src/core/errors.ts';
import {
  extractMcpTraceMeta,
  extractTraceHeaders,
  injectMcpTraceMeta,
  injectTraceHeaders,
  withSpan,
} from '../../src/telemetry/spans.ts';
import { startTracing, type Tracing } from '../../src/telemetry/tracing.ts';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.ts';

let receiver: OtlpReceiver;
let tracing: Tracing;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = startTracing({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.endpoint}/`, OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=a%20b' },
    serviceName: 'toolseal-guard',
  });
});
afterAll(async () => {
  await tracing.shutdown();
  await receiver.close();
});

interface Seen {
  traceparent: string | undefined;
  metaTraceparent: unknown;
  progressToken: unknown;
}

/** A stand-in upstream MCP server: records what trace context arrived and opens its own span under it. */
async function startUpstream(seen: Seen[]) {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      seen.push({
        traceparent: request.headers.traceparent as string | undefined,
        metaTraceparent: message.params._meta.traceparent,
        progressToken: message.params._meta.progressToken,
      });
      const fromMeta = extractMcpTraceMeta(message.params);
      withSpan('upstream tools/call', () => undefined, {}, fromMeta);
      withSpan('upstream http', () => undefined, {}, extractTraceHeaders(request.headers));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp` };
}

describe('tracing with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  it('exports parent/child spans and propagates the trace id upstream in headers and _meta.traceparent', async () => {
    expect(tracing.enabled).toBe(true);
    expect(tracing.endpoint).toBe(`${receiver.endpoint}/v1/traces`);
    const seen: Seen[] = [];
    const upstream = await startUpstream(seen);
    const params = { name: 'get_weather', arguments: { city: 'Paris' }, _meta: { progressToken: 7 } };
    let sentParams: typeof params | undefined;
    await withSpan('POST', async (span) => {
      await withSpan('pipeline.parse', async () => new Promise((resolve) => setImmediate(resolve)));
      await withSpan('guard.upstream', async () => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        injectTraceHeaders(headers);
        sentParams = injectMcpTraceMeta(params);
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: sentParams });
        expect((await fetch(upstream.url, { method: 'POST', headers, body })).status).toBe(200);
      });
      span.updateName('POST /v1/tools/:namespace');
      span.setAttribute('http.route', '/v1/tools/:namespace');
    });
    await expect(
      withSpan('commit', async () => {
        throw new ToolsealError('SERVER_BUSY', 'busy');
      }),
    ).rejects.toThrow('busy');
    await tracing.forceFlush();
    upstream.server.close();

    const byName = new Map(receiver.spans.map((span) => [span.name, span]));
    const root = byName.get('POST /v1/tools/:namespace')!;
    const parse = byName.get('pipeline.parse')!;
    const call = byName.get('guard.upstream')!;
    expect(root).toBeDefined();
    expect(root.parentSpanId).toBe('');
    expect(root.attributes['http.route']).toBe('/v1/tools/:namespace');
    expect(root.serviceName).toBe('toolseal-guard');
    expect(parse.parentSpanId).toBe(root.spanId);
    expect(call.parentSpanId).toBe(root.spanId);
    expect(new Set([root, parse, call].map((s) => s.traceId))).toEqual(new Set([root.traceId]));
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);

    const expectedParent = `00-${root.traceId}-${call.spanId}-01`;
    expect(seen).toEqual([{ traceparent: expectedParent, metaTraceparent: expectedParent, progressToken: 7 }]);
    expect(params._meta).toEqual({ progressToken: 7 }); // the caller's message is not changed
    expect(sentParams!.arguments).toBe(params.arguments);
    for (const name of ['upstream tools/call', 'upstream http']) {
      expect(byName.get(name)).toMatchObject({ traceId: root.traceId, parentSpanId: call.spanId });
    }
    const commit = byName.get('commit')!;
    expect(commit.status).toBe(2); // STATUS_CODE_ERROR
    expect(commit.attributes['error.type']).toBe('SERVER_BUSY');
    expect(commit.traceId).not.toBe(root.traceId); // a new root: nothing was active
    expect(receiver.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
  });
});

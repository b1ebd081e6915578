// Guard's telemetry end to end (issue 29 §1–§3): a real SDK client through the HTTP guard to a real SDK server. The
// guard metrics (scraped with a Prometheus text-format parser) move with withheld tools, forwarded and refused calls
// and upstream requests; the audit log holds exactly one line per decision, with digests and never an argument; the
// upstream server receives the trace context of the guard's exported `mcp.upstream` span, in the traceparent header
// and in the tools/call params._meta.traceparent, added after the gate decided.

import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectSignedTool } from '../../src/dispatch/action-digest.ts';
import { composeGuard, type GuardFinding } from '../../src/guard/index.ts';
import { type HttpGuard, startHttpGuard } from '../../src/guard/http/http-guard.ts';
import { openAuditLog, readAuditLog, type AuditLog } from '../../src/telemetry/audit-log.ts';
import { createGuardTelemetry, createUpstreamInterceptor } from '../../src/telemetry/guard-telemetry.ts';
import { createGuardMetrics } from '../../src/telemetry/metrics-guard-set.ts';
import { type MetricsListener, startMetricsListener } from '../../src/telemetry/metrics-listener.ts';
import { startTracing, type Tracing } from '../../src/telemetry/tracing.ts';
import { readFileSync } from 'node:fs';
import { localSigned } from '../guard/guard-helpers.ts';
import { type HttpTestServer, startHttpTestServer } from '../guard/http/http-guard-helpers.ts';
import { cleanupTempDirs, makeTempDir } from '../helpers/registry-helpers.ts';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.ts';
import { readLabelledCount, readValue, scrape, scrapeText } from './scrape.ts';

const ORIGIN = 'https://registry.example';
const TIME = '2026-12-01T12:00:00.000Z';

let receiver: OtlpReceiver;
let tracing: Tracing;
let server: HttpTestServer;
let guard: HttpGuard;
let listener: MetricsListener;
let auditLog: AuditLog;
let auditFile: string;
const findings: GuardFinding[] = [];

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = startTracing({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }, serviceName: 'toolseal-guard' });
  server = await startHttpTestServer({ mode: 'extra-tool', json: true });
  const metrics = createGuardMetrics();
  listener = await startMetricsListener({ registry: metrics.registry, port: 0 });
  auditFile = join(makeTempDir(), 'audit.jsonl');
  auditLog = await openAuditLog({ file: auditFile, now: () => new Date(TIME), flushIntervalMs: 0 });
  const observer = createGuardTelemetry({ metrics, auditLog, upstream: `${server.url}?key=query-secret` });
  const composed = await composeGuard(
    {
      bytes: localSigned.canonicalBytes,
      digest: localSigned.digest,
      kid: 'test-kid',
      logIndex: 0,
      statement: { predicate: { registry: ORIGIN } },
    },
    { requireListed: true },
  );
  guard = await startHttpGuard({
    createPolicy: () => composed.createSession(observer.openSession()),
    upstream: server.url,
    interceptUpstream: createUpstreamInterceptor(metrics),
    onFinding: (finding) => findings.push(finding),
    onEvent: () => {},
  });
});
afterAll(async () => {
  await guard?.close();
  await server?.close();
  await listener?.close();
  await auditLog?.close();
  await tracing?.shutdown();
  await receiver?.close();
  cleanupTempDirs();
});

describe('guard --metrics-listen, --audit-log and OTEL_* through the HTTP guard', () => {
  it('counts, audits and traces each decision; the upstream gets the span context in headers and _meta', async () => {
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(guard.url)));
    await client.listTools();
    const echoed = await client.callTool({ name: 'echo', arguments: { text: 'argument-secret' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'argument-secret' }]);
    const bad = await client.callTool({ name: 'add', arguments: { a: 'argument-secret-2', b: 1 } });
    expect(bad.isError).toBe(true);
    await expect(client.callTool({ name: 'export_all_notes', arguments: {} })).rejects.toThrow();
    await client.close();
    await guard.close();
    await auditLog.flush();
    await tracing.forceFlush();

    // Metrics.
    const text = await scrapeText(listener.url);
    const families = await scrape(listener.url);
    const withheld = findings.filter((f) => f.event === 'tool-withheld');
    expect(withheld.length).toBeGreaterThan(0);
    expect(readValue(families, 'toolseal_guard_tools_withheld_total', { reason: 'unknown-tool' })).toBe(
      withheld.length,
    );
    expect(readValue(families, 'toolseal_guard_calls_forwarded_total')).toBe(1);
    expect(readValue(families, 'toolseal_guard_calls_refused_total', { reason: 'ARGUMENTS_INVALID' })).toBe(1);
    const refusedByGuard = findings.filter((f) => f.event === 'call-refused');
    expect(refusedByGuard).toHaveLength(1);
    expect(readValue(families, 'toolseal_guard_calls_refused_total', { reason: refusedByGuard[0]!.reason })).toBe(1);
    expect(readValue(families, 'toolseal_guard_sessions_total')).toBe(1);
    expect(readValue(families, 'toolseal_guard_sessions_active')).toBe(0);
    const upstreamOk = readLabelledCount(text, 'toolseal_guard_upstream_duration_seconds', 'outcome', 'ok') ?? 0;
    const upstreamError = readLabelledCount(text, 'toolseal_guard_upstream_duration_seconds', 'outcome', 'error') ?? 0;
    expect(upstreamOk + upstreamError).toBe(server.requests.length);

    // The audit log: exactly these lines (the session id is guard's random one).
    const { records, skipped } = await readAuditLog(auditFile);
    expect(skipped).toBe(0);
    const session = records[0]!.session;
    expect(session).toMatch(/^s-[0-9a-f]{16}$/);
    const digestOf = (name: string) => selectSignedTool(localSigned.canonicalBytes, name, ORIGIN).toolDigest;
    const upstream = server.url;
    const line = (fields: Record<string, unknown>) =>
      JSON.stringify({
        time: TIME,
        session,
        tool: null,
        toolDigest: null,
        actionDigest: null,
        decision: 'forwarded',
        reason: null,
        approvalId: null,
        upstream,
        ...fields,
      });
    const withheldLine = line({ tool: 'export_all_notes', decision: 'withheld', reason: 'unknown-tool' });
    const expected = [
      ...withheld.map(() => withheldLine),
      line({ tool: 'echo', toolDigest: digestOf('echo') }),
      line({ tool: 'add', toolDigest: digestOf('add'), decision: 'refused', reason: 'ARGUMENTS_INVALID' }),
      line({ tool: 'export_all_notes', decision: 'refused', reason: refusedByGuard[0]!.reason }),
    ];
    expect(readFileSync(auditFile, 'utf8')).toBe(`${expected.join('\n')}\n`);

    // Traces: every upstream request carried the context of an exported mcp.upstream span; the call's _meta too.
    const upstreamSpans = receiver.spans.filter((s) => s.name === 'mcp.upstream');
    expect(upstreamSpans.length).toBe(server.requests.length);
    for (const [index, traceparent] of server.traceparents.entries()) {
      const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent ?? '');
      expect(match, `request ${index}`).not.toBeNull();
      const span = upstreamSpans.find((s) => s.traceId === match![1] && s.spanId === match![2]);
      expect(span?.serviceName).toBe('toolseal-guard');
      expect(span?.attributes['http.request.method']).toBe(server.requests[index]!.method);
    }
    expect(server.callMetas).toHaveLength(1);
    const metaTraceparent = (server.callMetas[0] as { traceparent?: string }).traceparent;
    expect(metaTraceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(server.traceparents).toContain(metaTraceparent);

    // Nothing secret anywhere: no argument value, no URL query.
    const spansText = JSON.stringify(receiver.spans);
    for (const secret of ['argument-secret', 'query-secret']) {
      expect(text).not.toContain(secret);
      expect(readFileSync(auditFile, 'utf8')).not.toContain(secret);
      expect(spansText).not.toContain(secret);
    }
  });
});

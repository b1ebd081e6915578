// The stdio guard with OTEL_* set (issue 29 §2): each forwarded client message reaches the server with the context of
// an exported `mcp.upstream` span in params._meta.traceparent; the rest of the message is unchanged, and a message
// the guard refuses is not traced (nothing reaches the server).

import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStdioGuard, ToolGuard } from '../../src/guard/index.ts';
import { createForwardRewriter } from '../../src/telemetry/guard-telemetry.ts';
import { startTracing, type Tracing } from '../../src/telemetry/tracing.ts';
import { localSigned, waitFor } from '../guard/guard-helpers.ts';
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.ts';

let receiver: OtlpReceiver;
let tracing: Tracing;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  tracing = startTracing({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }, serviceName: 'toolseal-guard' });
});
afterAll(async () => {
  await tracing.shutdown();
  await receiver.close();
});

describe('stdio guard rewriteForwarded', () => {
  it('adds the span context to params._meta of each forwarded message', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const errorOutput = new PassThrough();
    let received = '';
    errorOutput.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    // A server that writes every line it receives to its stderr (which the guard passes on).
    const session = startStdioGuard({
      guard: new ToolGuard(localSigned.canonicalBytes),
      command: process.execPath,
      args: ['-e', "process.stdin.on('data', (d) => process.stderr.write(d))"],
      rewriteForwarded: createForwardRewriter(),
      onFinding: () => {},
      input,
      output,
      errorOutput,
    });
    const call = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'hi' }, _meta: { progressToken: 7 } },
    };
    input.write(`${JSON.stringify(call)}\n`);
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'nope' } })}\n`);
    await waitFor(() => received.includes('\n'), 'the forwarded line');
    await waitFor(() => output.readableLength > 0, 'the refusal of the unknown tool');
    input.end();
    await session.done;
    await tracing.forceFlush();

    const lines = received.split('\n').filter((line) => line !== '');
    expect(lines).toHaveLength(1);
    const forwarded = JSON.parse(lines[0]!) as typeof call & { params: { _meta: { traceparent: string } } };
    const { traceparent, ...meta } = forwarded.params._meta;
    expect({ ...forwarded, params: { ...forwarded.params, _meta: meta } }).toEqual(call);
    const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent)!;
    expect(match).not.toBeNull();
    const spans = receiver.spans.filter((span) => span.name === 'mcp.upstream');
    expect(spans.map((span) => [span.traceId, span.spanId])).toEqual([[match[1], match[2]]]);
  });
});

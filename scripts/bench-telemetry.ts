// Benchmark of src/telemetry's hot-path cost (issue 29 §2 "the hot paths pay nothing measurable" with telemetry
// off): the same small unit of work (SHA-256 of 512 bytes, less than any request does) alone and with the calls a
// request would make — metrics absent (`metrics?.record…`), span helpers with tracing off, and, for reference,
// metrics on. Alternating rounds, medians, printed as ratios against the baseline measured in the same run.
//
//   npx tsx scripts/bench-telemetry.ts

import { computeSha256Hex } from '../src/core/digest.ts';
import { createRegistryMetrics, type RegistryMetrics } from '../src/telemetry/metrics-registry-set.ts';
import { injectMcpTraceMeta, injectTraceHeaders, withSpan } from '../src/telemetry/spans.ts';
import { startTracing } from '../src/telemetry/tracing.ts';
import { measureAlternating, median } from './bench-stats.ts';

const OPERATIONS = 20_000;
const ROUNDS = 15;
const payload = new Uint8Array(512).fill(7);
let sink = 0;

function work(i: number): string {
  payload[0] = i & 0xff;
  return computeSha256Hex(payload);
}

/** Mean nanoseconds per operation over OPERATIONS operations. */
function timeNanoseconds(operation: (i: number) => void): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < OPERATIONS; i++) operation(i);
  return Number(process.hrtime.bigint() - start) / OPERATIONS;
}

const baseline = (i: number): void => {
  sink += work(i).length;
};
/** The same code as baseline, as a second function: the A/A line shows the noise floor of this run. */
const baselineCopy = (i: number): void => {
  sink += work(i).length;
};

function withMetrics(metrics: RegistryMetrics | undefined): (i: number) => void {
  return (i) => {
    const start = metrics === undefined ? 0 : performance.now();
    sink += work(i).length;
    metrics?.recordRequest('/v1/tools/:namespace/:name', 200, (performance.now() - start) / 1000);
    metrics?.recordPublish('ok');
  };
}

const withSpansOff = (i: number): void => {
  withSpan('request', (span) => {
    sink += work(i).length;
    span.setAttribute('http.route', '/v1/tools/:namespace/:name');
    const headers: Record<string, string> = {};
    injectTraceHeaders(headers);
    sink += Object.keys(injectMcpTraceMeta({ name: 'tool' })).length;
  });
};

async function compare(label: string, variant: (i: number) => void): Promise<string> {
  for (let i = 0; i < OPERATIONS; i++) {
    baseline(i);
    variant(i);
  }
  const { first, second } = await measureAlternating(
    ROUNDS,
    () => timeNanoseconds(baseline),
    () => timeNanoseconds(variant),
  );
  const base = median(first);
  const with_ = median(second);
  return `  ${label.padEnd(44)} ${with_.toFixed(0).padStart(6)} ns vs ${base.toFixed(0).padStart(6)} ns baseline  ratio ${(with_ / base).toFixed(3)}`;
}

export async function benchTelemetry(): Promise<string[]> {
  const tracing = startTracing({ env: {}, serviceName: 'bench' });
  if (tracing.enabled) throw new Error('tracing must be off for this bench');
  const lines = [
    `telemetry — ${OPERATIONS} operations × ${ROUNDS} alternating rounds, unit of work: SHA-256 of 512 bytes`,
    await compare('A/A: baseline vs an identical copy (noise)', baselineCopy),
    await compare('metrics absent (metrics?.record…)', withMetrics(undefined)),
    await compare('span helpers, tracing off', withSpansOff),
    await compare('metrics on (reference: operator enabled them)', withMetrics(createRegistryMetrics())),
  ];
  if (sink === -1) lines.push('unreachable'); // keeps the work observable
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await benchTelemetry()) console.log(line);
}

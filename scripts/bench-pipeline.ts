// Benchmark of the publish pipeline against the cheapest possible JSON round trip.
//
// Inputs (deterministic, built from test/vectors/corpus): a ~5 KB and a ~50 KB manifest assembled from the tools of the
// smaller corpus files, and the largest corpus file (github-mcp-server) as one manifest; each pretty-printed the way
// a vendor would upload it. For each input: ops/s of runPipeline(bytes), ops/s of the baseline
// JSON.stringify(JSON.parse(decode(bytes))), and their ratio (target: pipeline within 8x of the baseline for the
// 5 KB and 50 KB manifests). Measured for a noisy shared machine: a warm-up, then several rounds that alternate
// baseline and pipeline (order flipped every round), reporting the median ops/s of each.
//
// Run: npx tsx scripts/bench-pipeline.ts        (or import { benchPipeline } and print its lines)

import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseStrict, runPipeline, type JsonObject, type JsonValue } from '../src/pipeline/index.ts';
import { measureAlternating, median } from './bench-stats.ts';

const ROUNDS = 9;
const ROUND_MS = 120;
const WARMUP_MS = 300;
const TARGET_RATIO = 8;

interface Input {
  label: string;
  bytes: Uint8Array;
  tools: number;
  /** Whether the 8x target applies. */
  targeted: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function corpusTools(dir: string, file: string): JsonObject[] {
  const parsed = parseStrict(readFileSync(resolve(dir, file))).value as JsonObject;
  return parsed['tools'] as unknown as JsonObject[];
}

function manifestBytes(name: string, tools: JsonValue[]): Uint8Array {
  return encoder.encode(JSON.stringify({ name, version: '1.0.0', tools }, null, 2));
}

/** Tools of the smaller corpus files in file-name order, names deduplicated, added first-fit while under `target` bytes. */
function assemble(label: string, pool: JsonObject[], target: number): Input {
  const chosen: JsonObject[] = [];
  for (const tool of pool) {
    if (manifestBytes(`io.example.bench/${label}`, [...chosen, tool]).byteLength <= target) chosen.push(tool);
  }
  const bytes = manifestBytes(`io.example.bench/${label}`, chosen);
  return { label, bytes, tools: chosen.length, targeted: true };
}

export function benchInputs(): Input[] {
  const dir = fileURLToPath(new URL('../test/vectors/corpus/', import.meta.url));
  const files = readdirSync(dir)
    .filter(
      (f) => f.endsWith('.tools.json') && f !== 'mcp-spec-examples.tools.json' && f !== 'github-mcp-server.tools.json',
    )
    .sort();
  const seen = new Set<string>();
  const pool: JsonObject[] = [];
  for (const file of files) {
    for (const tool of corpusTools(dir, file)) {
      const name = String(tool['name']);
      if (seen.has(name)) continue;
      seen.add(name);
      pool.push(tool);
    }
  }
  const github = corpusTools(dir, 'github-mcp-server.tools.json');
  return [
    assemble('corpus-5k', pool, 5 * 1024),
    assemble('corpus-50k', pool, 50 * 1024),
    {
      label: 'github-mcp-server',
      bytes: manifestBytes('io.example.bench/github-mcp-server', github),
      tools: github.length,
      targeted: false,
    },
  ];
}

let sink = 0;

/** Run `fn` for about `ms` milliseconds (at least 3 calls); return calls per second. */
function opsPerSecond(fn: () => number, ms: number): number {
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    sink += fn();
    calls++;
    elapsed = performance.now() - start;
  } while (elapsed < ms || calls < 3);
  return (calls * 1000) / elapsed;
}

function format(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1);
}

export async function benchPipeline(): Promise<string[]> {
  const inputs = benchInputs();
  const lines = [
    `pipeline benchmark — node ${process.version}, ${ROUNDS} alternating rounds of ${ROUND_MS} ms each after a ${WARMUP_MS} ms warm-up; median ops/s`,
    `baseline = JSON.stringify(JSON.parse(decode(bytes))); target: pipeline/baseline ≤ ${TARGET_RATIO}x for the 5 KB and 50 KB manifests`,
    '',
    `${'input'.padEnd(20)}${'bytes'.padStart(9)}${'tools'.padStart(7)}${'pipeline ops/s'.padStart(17)}${'baseline ops/s'.padStart(17)}${'ratio'.padStart(9)}  target`,
  ];
  for (const input of inputs) {
    const { bytes } = input;
    const pipeline = () => runPipeline(bytes).size;
    const baseline = () => JSON.stringify(JSON.parse(decoder.decode(bytes))).length;
    // Same answer first: the pipeline accepts the input (a refusal would make the numbers meaningless).
    pipeline();
    opsPerSecond(baseline, WARMUP_MS);
    opsPerSecond(pipeline, WARMUP_MS);
    const runs = await measureAlternating(
      ROUNDS,
      () => opsPerSecond(baseline, ROUND_MS),
      () => opsPerSecond(pipeline, ROUND_MS),
    );
    const p = median(runs.second);
    const b = median(runs.first);
    const ratio = b / p;
    const verdict = input.targeted ? (ratio <= TARGET_RATIO ? 'ok' : 'MISSED') : '(none)';
    lines.push(
      `${input.label.padEnd(20)}${String(input.bytes.byteLength).padStart(9)}${String(input.tools).padStart(7)}${format(p).padStart(17)}${format(b).padStart(17)}${(`${ratio.toFixed(2)}x`).padStart(9)}  ${verdict}`,
    );
  }
  if (sink === -1) lines.push(''); // keeps the measured work observable
  return lines;
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  for (const line of await benchPipeline()) console.log(line);
}

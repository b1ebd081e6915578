// Benchmark of the pure transparency log (in-memory node store): append throughput and proof generation at 1k, 100k and 1M leaves.

import {
  computeRootHash,
  createMemoryNodeStore,
  generateConsistencyProof,
  generateInclusionProof,
  hashLeaf,
  verifyConsistencyProof,
  verifyInclusionProof,
  type MemoryNodeStore,
} from '../src/log/index.ts';

const SIZES = [1_000, 100_000, 1_000_000] as const;
const PROOFS_PER_BATCH = 1_000;
const BATCHES = 5;
const ENTRY_SIZE = 64;

/** A small deterministic PRNG (mulberry32) so every run times the same proofs. */
function createRandom(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

function buildLog(size: number): { store: MemoryNodeStore; seconds: number } {
  const store = createMemoryNodeStore();
  const entry = new Uint8Array(ENTRY_SIZE).fill(0x2a);
  const view = new DataView(entry.buffer);
  const start = performance.now();
  for (let i = 0; i < size; i++) {
    view.setFloat64(0, i);
    store.append(hashLeaf(entry));
  }
  return { store, seconds: (performance.now() - start) / 1000 };
}

/** Median over BATCHES of the mean microseconds per call. */
function timeMicroseconds(run: (i: number) => void): number {
  for (let i = 0; i < PROOFS_PER_BATCH; i++) run(i); // warm-up
  const means: number[] = [];
  for (let batch = 0; batch < BATCHES; batch++) {
    const start = performance.now();
    for (let i = 0; i < PROOFS_PER_BATCH; i++) run(i);
    means.push(((performance.now() - start) * 1000) / PROOFS_PER_BATCH);
  }
  means.sort((a, b) => a - b);
  return means[Math.floor(means.length / 2)]!;
}

function formatNumber(value: number, digits = 1): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export async function benchLog(): Promise<string[]> {
  const lines: string[] = [
    `log bench: in-memory node store, ${ENTRY_SIZE}-byte entries, median of ${BATCHES}x${PROOFS_PER_BATCH} proofs`,
  ];
  const inclusion = new Map<number, number>();
  const consistency = new Map<number, number>();
  buildLog(20_000); // warm up the JIT so the 1k figures are not start-up cost
  for (const size of SIZES) {
    const { store, seconds } = buildLog(size);
    const root = computeRootHash(store, size);
    const random = createRandom(size);

    const indexes = Array.from({ length: PROOFS_PER_BATCH }, () => random(size));
    const fromSizes = Array.from({ length: PROOFS_PER_BATCH }, () => 1 + random(size - 1));
    // Sanity: the proofs being timed verify.
    for (const index of indexes.slice(0, 20)) {
      const leafHash = store.readNode(0, index);
      verifyInclusionProof(leafHash, index, size, generateInclusionProof(store, index, size), root);
    }
    for (const from of fromSizes.slice(0, 20)) {
      verifyConsistencyProof(
        from,
        size,
        computeRootHash(store, from),
        root,
        generateConsistencyProof(store, from, size),
      );
    }

    const inclusionMicros = timeMicroseconds((i) => generateInclusionProof(store, indexes[i]!, size));
    const consistencyMicros = timeMicroseconds((i) => generateConsistencyProof(store, fromSizes[i]!, size));
    inclusion.set(size, inclusionMicros);
    consistency.set(size, consistencyMicros);
    lines.push(
      `n=${size.toLocaleString('en-US').padStart(9)}  append ${formatNumber(size / seconds, 0).padStart(9)} entries/s (${formatNumber(seconds, 2)} s)` +
        `  inclusion ${formatNumber(inclusionMicros, 2).padStart(6)} µs  consistency ${formatNumber(consistencyMicros, 2).padStart(6)} µs`,
    );
    await new Promise((resolve) => setImmediate(resolve));
  }
  const first = SIZES[0];
  const last = SIZES[SIZES.length - 1]!;
  const ratio = (m: Map<number, number>): number => m.get(last)! / m.get(first)!;
  lines.push(
    `ratio 1M/1k: inclusion ${formatNumber(ratio(inclusion), 2)}, consistency ${formatNumber(ratio(consistency), 2)} (O(log n) predicts ~2; expected < 3)`,
  );
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await benchLog()) console.log(line);
}

// Shared benchmark statistics: medians, and A/B measurements in alternating order so drift hits both sides.

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of nothing');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Measure `first` and `second` for `rounds` rounds, flipping their order every round (a noisy shared machine
 * then slows both alike), yielding to the event loop between rounds. Returns each side's measurements.
 */
export async function measureAlternating(
  rounds: number,
  first: () => number | Promise<number>,
  second: () => number | Promise<number>,
): Promise<{ first: number[]; second: number[] }> {
  const result = { first: [] as number[], second: [] as number[] };
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      result.first.push(await first());
      result.second.push(await second());
    } else {
      result.second.push(await second());
      result.first.push(await first());
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return result;
}

/** Operations per second of `run` over about `seconds` (checked every 16 calls). */
export function timeSync(seconds: number, run: (i: number) => void): number {
  const start = performance.now();
  const limit = start + seconds * 1000;
  let count = 0;
  let now = start;
  while (now < limit) {
    for (let j = 0; j < 16; j++) run(count++);
    now = performance.now();
  }
  return count / ((now - start) / 1000);
}

// The checkpoint file beside the keys (issue 25 §1) under concurrent writers: the main thread and the writer thread
// each record the checkpoints they sign; under the folder's checkpoint lock the file always ends at the largest size,
// never the smaller one written last. A lock left by a dead process is taken over; a live holder's is waited for.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { buildWorkerSource } from '../../src/core/worker-source.ts';
import {
  readCheckpointFile,
  withCheckpointFileLock,
  withCheckpointFileLockAsync,
} from '../../src/keys/checkpoint-file.ts';
import { parseCheckpoint } from '../../src/log/index.ts';
import { bodyOf } from '../../src/registry/transparency-log.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function makeDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolseal-checkpoint-file-'));
  dirs.push(dir);
  return dir;
}

function startRacer(
  keysDir: string,
  sizes: number[],
  go: Int32Array,
  concurrent = false,
): { ready: Promise<void>; done: Promise<void> } {
  const source = buildWorkerSource(new URL('../fixtures/checkpoint-file-racer.ts', import.meta.url));
  const worker = new Worker(source, { eval: true, workerData: { keysDir, sizes, go, concurrent } });
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const done = new Promise<void>((resolve, reject) => {
    worker.on('message', (message: string) => (message === 'ready' ? markReady() : resolve()));
    worker.on('error', reject);
  });
  return { ready, done };
}

describe('the checkpoint file under concurrent writers', () => {
  it('ends at the largest size whatever the interleaving (4 threads, 2 rounds; in round 2, two of them record all at once)', async () => {
    for (let round = 0; round < 2; round++) {
      const keysDir = makeDir();
      const go = new Int32Array(new SharedArrayBuffer(4));
      // Interleaved sizes: each thread records increasing sizes, the largest overall is 200 (thread 3's last).
      const racers = [0, 1, 2, 3].map((t) =>
        startRacer(
          keysDir,
          Array.from({ length: 50 }, (_, i) => i * 4 + t + 1),
          go,
          round === 1 && t % 2 === 0,
        ),
      );
      await Promise.all(racers.map((r) => r.ready));
      Atomics.store(go, 0, 1);
      Atomics.notify(go, 0);
      await Promise.all(racers.map((r) => r.done));
      const note = readCheckpointFile(keysDir);
      expect(note, `round ${round}`).toBeDefined();
      expect(parseCheckpoint(bodyOf(note as string)).size).toBe(200);
      // The lock is released.
      expect(() => readFileSync(join(keysDir, 'log-checkpoint.lock'))).toThrow();
    }
  }, 120_000);

  it("takes over a dead process's lock, and runs under it once", () => {
    const keysDir = makeDir();
    // A pid that is not running (pid_max is at most 2^22 on Linux).
    writeFileSync(join(keysDir, 'log-checkpoint.lock'), '4194304\n');
    const started = Date.now();
    expect(withCheckpointFileLock(keysDir, () => 'ran')).toBe('ran');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(() => readFileSync(join(keysDir, 'log-checkpoint.lock'))).toThrow();
  });

  it("waits for a live holder's lock, then runs", async () => {
    const keysDir = makeDir();
    const lock = join(keysDir, 'log-checkpoint.lock');
    writeFileSync(lock, `${process.pid}\n`);
    // Released by another thread after 300 ms while this one waits (synchronously) for it.
    const releaser = new Worker(
      `const { rmSync } = require('node:fs'); setTimeout(() => rmSync(${JSON.stringify(lock)}), 300);`,
      { eval: true },
    );
    await new Promise((resolve) => releaser.once('online', resolve));
    const started = Date.now();
    expect(withCheckpointFileLock(keysDir, () => 'ran')).toBe('ran');
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });

  it("waits for a live holder's lock off the event loop (timers keep firing), then runs", async () => {
    const keysDir = makeDir();
    const lock = join(keysDir, 'log-checkpoint.lock');
    writeFileSync(lock, `${process.pid}\n`);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    setTimeout(() => rmSync(lock), 300);
    const started = Date.now();
    try {
      expect(await withCheckpointFileLockAsync(keysDir, async () => 'ran')).toBe('ran');
    } finally {
      clearInterval(ticker);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    // The event loop ran while it waited (Atomics.wait would have kept every timer back).
    expect(ticks).toBeGreaterThanOrEqual(5);
    expect(() => readFileSync(lock)).toThrow();
    // A dead process's lock is taken over at once.
    writeFileSync(lock, '4194304\n');
    expect(await withCheckpointFileLockAsync(keysDir, async () => 'again')).toBe('again');
  });
});

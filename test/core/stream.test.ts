// core/stream: a stream read within a byte limit — the exact bytes up to it, cancelled and refused past it.

import { describe, expect, it } from 'vitest';
import { readStreamWithin } from '../../src/core/stream.ts';

function streamOf(chunks: number[][], onCancel?: () => void): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(new Uint8Array(chunk));
    },
    cancel: () => onCancel?.(),
  });
}

describe('readStreamWithin', () => {
  it('returns every byte in order, a single chunk as it is, and nothing for no stream', async () => {
    expect([...(await readStreamWithin(streamOf([[1, 2], [3], [4, 5, 6]]), 6, () => new Error('no')))]).toEqual([
      1, 2, 3, 4, 5, 6,
    ]);
    expect([...(await readStreamWithin(streamOf([[7, 8]]), 2, () => new Error('no')))]).toEqual([7, 8]);
    expect((await readStreamWithin(undefined, 0, () => new Error('no'))).byteLength).toBe(0);
  });

  it('one byte past the limit cancels the stream and throws the caller’s error', async () => {
    let cancelled = false;
    const stream = streamOf([[1, 2, 3], [4], [5]], () => {
      cancelled = true;
    });
    await expect(readStreamWithin(stream, 3, () => new Error('too large'))).rejects.toThrow('too large');
    expect(cancelled).toBe(true);
  });
});

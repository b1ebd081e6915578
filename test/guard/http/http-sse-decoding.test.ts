// The HTTP guard's SSE reading (WHATWG HTML §9.2.6 "Interpreting an event stream": UTF-8 decode, a leading BOM
// dropped; src/guard/http/sse.ts): readSseBatches decodes with node:string_decoder, so a BOM (whole or split across
// chunks) is dropped once, at the start only, and bad bytes become U+FFFD as a TextDecoder makes them.

import { describe, expect, it } from 'vitest';
import { readSseBatches, readSseItems, type SseItem } from '../../../src/guard/http/sse.ts';

async function* chunks(...parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield part;
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<SseItem[]> {
  const items: SseItem[] = [];
  for await (const item of readSseItems(stream, 1000)) items.push(item);
  return items;
}

describe('readSseBatches', () => {
  it('drops a leading BOM, also split across chunks, and keeps a U+FEFF later in the stream', async () => {
    const bom = Uint8Array.of(0xef, 0xbb, 0xbf);
    const rest = bytes('data: a\n\ndata: \uFEFFb\n\n');
    expect(await readAll(chunks(bom.subarray(0, 1), bom.subarray(1), rest))).toEqual([
      { kind: 'event', id: undefined, event: undefined, data: 'a' },
      { kind: 'event', id: undefined, event: undefined, data: '\uFEFFb' },
    ]);
    // A BOM that arrives whole with the first bytes is dropped too.
    expect(await readAll(chunks(bytes('\uFEFFdata: x\n\n')))).toEqual([
      { kind: 'event', id: undefined, event: undefined, data: 'x' },
    ]);
  });

  it('replaces bad UTF-8 as TextDecoder does', async () => {
    const bad = Uint8Array.of(...bytes('data: '), 0xff, 0xc3, ...bytes('x\n\n'));
    const expected = new TextDecoder('utf-8').decode(bad).slice('data: '.length, -2);
    expect(await readAll(chunks(bad))).toEqual([{ kind: 'event', id: undefined, event: undefined, data: expected }]);
    expect(expected).toBe('\uFFFD\uFFFDx');
  });

  it('yields the items each chunk completes together, and none for a chunk that completes nothing', async () => {
    const batches: SseItem[][] = [];
    for await (const batch of readSseBatches(
      chunks(bytes('data: 1\n\ndata: 2\n\nda'), bytes('ta: 3'), bytes('\n\n')),
      100,
    ))
      batches.push(batch);
    expect(batches.map((batch) => batch.map((item) => (item.kind === 'event' ? item.data : item.kind)))).toEqual([
      ['1', '2'],
      ['3'],
    ]);
  });
});

// SSE reading and writing (WHATWG HTML §9.2): events split across chunks, CRLF, multi-line data, ids, retry,
// comments, the event size bound, and the writer's round trip through the reader.

import { describe, expect, it } from 'vitest';
import {
  formatSseComment,
  formatSseEvent,
  formatSseRetry,
  readSseItems,
  type SseItem,
} from '../../../src/guard/http/sse.ts';

async function* chunksOf(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield new TextEncoder().encode(part);
}

async function readAll(stream: AsyncIterable<Uint8Array>, max = 1000): Promise<SseItem[]> {
  const items: SseItem[] = [];
  for await (const item of readSseItems(stream, max)) items.push(item);
  return items;
}

describe('readSseItems', () => {
  it('reads events split anywhere (inside a UTF-8 character too), CRLF, ids, retry and comments', async () => {
    const bytes = new TextEncoder().encode(
      'retry: 500\r\nid: 7\r\nevent: message\r\ndata: {"a":"é"}\r\n\r\n: ping\n\ndata: x\n\n',
    );
    const cut = bytes.indexOf(0xc3) + 1;
    const stream = (async function* () {
      yield bytes.subarray(0, 5);
      yield bytes.subarray(5, cut);
      yield bytes.subarray(cut);
    })();
    expect(await readAll(stream)).toEqual([
      { kind: 'retry', ms: 500 },
      { kind: 'event', id: '7', event: 'message', data: '{"a":"é"}' },
      { kind: 'comment', text: 'ping' },
      { kind: 'event', id: undefined, event: undefined, data: 'x' },
    ]);
  });

  it('drops an unfinished last event, and throws on an event over the limit (whole or in pieces)', async () => {
    expect(await readAll(chunksOf('data: done\n\ndata: cut'))).toEqual([
      { kind: 'event', id: undefined, event: undefined, data: 'done' },
    ]);
    await expect(readAll(chunksOf(`data: ${'a'.repeat(50)}\n\n`), 20)).rejects.toThrow(RangeError);
    await expect(readAll(chunksOf('data: ', 'a'.repeat(30), 'a'.repeat(30)), 20)).rejects.toThrow(RangeError);
  });
});

describe('the SSE writer', () => {
  it('writes what the reader reads back: multi-line data, empty data (a priming event), retry, comments', async () => {
    const text =
      formatSseRetry(1500) +
      formatSseEvent({ id: 'e1', data: '' }) +
      formatSseEvent({ id: 'e2', event: 'message', data: 'line 1\nline 2\r\nline 3' }) +
      formatSseComment('keepalive');
    expect(text).toBe(
      'retry: 1500\nid: e1\ndata: \n\nevent: message\nid: e2\ndata: line 1\ndata: line 2\ndata: line 3\n\n: keepalive\n\n',
    );
    expect(await readAll(chunksOf(text))).toEqual([
      { kind: 'retry', ms: 1500 },
      { kind: 'event', id: 'e1', event: undefined, data: '' },
      { kind: 'event', id: 'e2', event: 'message', data: 'line 1\nline 2\nline 3' },
      { kind: 'comment', text: 'keepalive' },
    ]);
  });

  it('cannot be made to start another field by an id or a type holding a line break', () => {
    expect(formatSseEvent({ id: 'a\nretry: 1', event: 'message\ndata: x', data: 'y' })).toBe(
      'event: messagedata: x\nid: aretry: 1\ndata: y\n\n',
    );
  });
});

// Server-Sent Events (WHATWG HTML §9.2 "Server-sent events"; MCP 2025-06-18 "Transports" §Streamable HTTP) read
// with eventsource-parser (the parser the MCP SDK's own client uses) and written back event by event.

import { StringDecoder } from 'node:string_decoder';
import { createParser } from 'eventsource-parser';

/** One thing read from an SSE stream, in stream order. */
export type SseItem =
  /** A dispatched event: its own `id` (undefined when it carries none), its type, its data lines joined by `\n`. */
  | { kind: 'event'; id: string | undefined; event: string | undefined; data: string }
  /** A `retry:` field (the reconnection delay in ms). */
  | { kind: 'retry'; ms: number }
  /** A comment line (a keep-alive), without its leading colon and space. */
  | { kind: 'comment'; text: string };

/**
 * The items of an SSE stream, decoded as UTF-8, as they complete. An event (or a line) longer than `maxEventChars`
 * throws a RangeError and stops reading; an unfinished last event is dropped (as an EventSource drops it).
 */
export async function* readSseItems(
  stream: AsyncIterable<Uint8Array>,
  maxEventChars: number,
): AsyncGenerator<SseItem, void, undefined> {
  for await (const items of readSseBatches(stream, maxEventChars)) yield* items;
}

/** The same, the items completed by each chunk of the stream together (a relay writes them at once). */
export async function* readSseBatches(
  stream: AsyncIterable<Uint8Array>,
  maxEventChars: number,
): AsyncGenerator<SseItem[], void, undefined> {
  let items: SseItem[] = [];
  let overflow = false;
  const parser = createParser({
    onEvent: (event) => {
      // The parser bounds what it buffers across chunks; an event that arrives whole is bounded here.
      if (event.data.length > maxEventChars) overflow = true;
      else items.push({ kind: 'event', id: event.id, event: event.event, data: event.data });
    },
    onRetry: (ms) => items.push({ kind: 'retry', ms }),
    onComment: (text) => items.push({ kind: 'comment', text }),
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') overflow = true;
    },
    maxBufferSize: maxEventChars,
  });
  // node:string_decoder, not TextDecoder: the same replacement of bad bytes, a character split across chunks kept
  // for the next, at a fraction of the cost of a streaming TextDecoder (which also drops a leading BOM: done here).
  const decoder = new StringDecoder('utf8');
  let first = true;
  const feed = (text: string): void => {
    if (first && text !== '') {
      first = false;
      parser.feed(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } else if (text !== '') parser.feed(text);
  };
  // Leaving the loop early (a throw, the consumer stopping) cancels the stream.
  for await (const chunk of stream) {
    feed(decoder.write(chunk));
    if (overflow) throw new RangeError(`an SSE event longer than ${maxEventChars} characters`);
    if (items.length > 0) {
      const batch = items;
      items = [];
      yield batch;
    }
  }
  feed(decoder.end());
  if (items.length > 0) yield items;
}

/** The wire form of one event: `event:`, `id:`, one `data:` line per line of `data`, and the blank line. */
export function formatSseEvent(event: { id?: string | undefined; event?: string | undefined; data: string }): string {
  let text = '';
  if (event.event !== undefined) text += `event: ${stripLineBreaks(event.event)}\n`;
  if (event.id !== undefined) text += `id: ${stripLineBreaks(event.id)}\n`;
  for (const line of event.data.split(/\r\n|\r|\n/)) text += `data: ${line}\n`;
  return `${text}\n`;
}

/** The wire form of a `retry:` field (it applies to the stream, before the next event's lines). */
export function formatSseRetry(ms: number): string {
  return `retry: ${Math.max(0, Math.floor(ms))}\n`;
}

/** The wire form of a comment (a keep-alive) as a block of its own. */
export function formatSseComment(text: string): string {
  return `: ${stripLineBreaks(text)}\n\n`;
}

function stripLineBreaks(text: string): string {
  return text.replace(/[\r\n]/g, '');
}

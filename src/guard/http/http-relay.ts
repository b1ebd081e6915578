// The server's answers through the HTTP guard (MCP 2025-06-18 "Transports" §Streamable HTTP §Sending Messages to the
// Server, §Listening for Messages from the Server, §Resumability): a JSON body or an SSE stream, read message by
// message, each passed to the session's policy; SSE event ids and retry fields are kept so the client can resume.

import { IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { decodeUtf8Strict } from '../../core/bytes.ts';
import { readField, selectClientResponseHeaders } from './http-headers.ts';
import { isSuccess, readBodyWithin, type UpstreamAnswer } from './http-upstream.ts';
import { formatSseComment, formatSseEvent, formatSseRetry, readSseBatches, readSseItems, type SseItem } from './sse.ts';

export interface UpstreamReading {
  readonly maxEventChars: number;
  readonly maxResponseBytes: number;
  /** One message's text: what goes to the client instead (or nothing). */
  onMessage(text: string): Promise<string | undefined>;
}

export interface ClientRelay extends UpstreamReading {
  /** The guard's own answer to part of the client's request (a refused batch member), delivered first. */
  readonly prepend?: string | undefined;
  /** A stream or body the guard could not relay (too large, not UTF-8, cut off). */
  onProblem(message: string): void;
  /** Messages of the guard's own for the client (notifications/message), sent before the next message relayed. */
  takeNotices?(): string[];
  /** The client accepts an SSE answer to this request: a JSON answer with notices goes as a stream of both. */
  readonly acceptsEventStream?: boolean;
}

/** The media type of a Content-Type value, lower case, without parameters. */
export function readMediaType(contentType: string | undefined): string {
  // The two types servers send, as they send them, taken as they are.
  if (contentType === 'application/json' || contentType === 'text/event-stream') return contentType;
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Read a response to one of the guard's own requests: every message is handled, nothing is written anywhere. */
export async function consumeUpstreamResponse(response: UpstreamAnswer, reading: UpstreamReading): Promise<void> {
  const type = readMediaType(readField(response.headers, 'content-type'));
  if (type === 'text/event-stream' && response.body !== null) {
    for await (const item of readSseItems(response.body, reading.maxEventChars))
      if (isMessageEvent(item) && item.data !== '') await reading.onMessage(item.data);
    return;
  }
  const bytes = await readBodyWithin(response.body, reading.maxResponseBytes, () => new RangeError('too large'));
  const text = type === 'application/json' && bytes.byteLength > 0 ? decodeUtf8Strict(bytes) : undefined;
  if (text !== undefined) await reading.onMessage(text);
}

/** Relay the server's answer to the client: JSON and SSE messages through the policy, anything else as it came. */
export async function relayUpstreamResponse(
  upstream: UpstreamAnswer,
  res: ServerResponse,
  relay: ClientRelay,
): Promise<void> {
  if (upstream.status >= 300 && upstream.status < 400) {
    upstream.cancel();
    relay.onProblem(`the server answered with a redirect (${upstream.status}); the guard does not follow it`);
    sendJsonRpcError(res, 502, 'the server answered with a redirect, which the guard does not follow');
    return;
  }
  const headers = selectClientResponseHeaders(upstream.headers);
  const type = readMediaType(readField(upstream.headers, 'content-type'));
  if (type === 'text/event-stream' && upstream.body !== null) {
    await relaySse(upstream, res, headers, relay);
    return;
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBodyWithin(upstream.body, relay.maxResponseBytes, () => new RangeError('too large'));
  } catch {
    relay.onProblem(`the server's answer is larger than ${relay.maxResponseBytes} bytes or was cut off`);
    sendJsonRpcError(res, 502, 'the server’s answer could not be read');
    return;
  }
  if (type === 'application/json' && bytes.byteLength > 0) {
    await relayJson(upstream, res, headers, bytes, relay);
    return;
  }
  if (isSuccess(upstream) && bytes.byteLength > 0) {
    relay.onProblem(`the server answered with ${JSON.stringify(type)}, neither JSON nor SSE; withheld`);
    sendJsonRpcError(res, 502, 'the server’s answer is neither JSON nor an SSE stream');
    return;
  }
  if (relay.prepend !== undefined && isSuccess(upstream)) {
    sendJson(res, 200, headers, relay.prepend);
    return;
  }
  res.writeHead(upstream.status, headers);
  res.end(bytes);
}

async function relayJson(
  upstream: UpstreamAnswer,
  res: ServerResponse,
  headers: OutgoingHttpHeaders,
  bytes: Uint8Array,
  relay: ClientRelay,
): Promise<void> {
  const text = decodeUtf8Strict(bytes);
  if (text === undefined) relay.onProblem('the server answered with JSON that is not UTF-8; withheld');
  const output = text === undefined ? undefined : await relay.onMessage(text);
  // Notices need a stream: the answer goes as SSE, the notices first (Streamable HTTP lets a POST be answered so).
  if (output !== undefined && relay.prepend === undefined && relay.acceptsEventStream === true && isSuccess(upstream)) {
    const notices = relay.takeNotices?.() ?? [];
    if (notices.length > 0) {
      delete headers['content-type'];
      res.writeHead(upstream.status, { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end([...notices, output].map((data) => formatSseEvent({ event: 'message', data })).join(''));
      return;
    }
  }
  const body = joinMessages(relay.prepend, output);
  if (body !== undefined) {
    sendJson(res, upstream.status, headers, body);
    return;
  }
  if (isSuccess(upstream)) {
    sendJsonRpcError(res, 502, 'the guard withheld the server’s answer');
    return;
  }
  delete headers['content-type'];
  res.writeHead(upstream.status, headers);
  res.end();
}

/** The SSE stream event by event: messages through the policy, priming events, retry and comments as they came. */
async function relaySse(
  upstream: UpstreamAnswer,
  res: ServerResponse,
  headers: OutgoingHttpHeaders,
  relay: ClientRelay,
): Promise<void> {
  const body = upstream.body!;
  res.writeHead(upstream.status, headers);
  // The headers go out now, unless the server's first bytes are already here: then they go with its first events.
  if (!(body instanceof Readable && body.readableLength > 0) || relay.prepend !== undefined) res.flushHeaders();
  let ended = false;
  try {
    if (relay.prepend !== undefined) await writeOut(res, formatSseEvent({ event: 'message', data: relay.prepend }));
    for await (const items of readSseBatches(body, relay.maxEventChars)) {
      if (res.destroyed) break;
      if (ended) continue;
      let text = '';
      for (const item of items) text += (await formatRelayedItem(item, relay)) ?? '';
      // The server's stream is complete and nothing of it is left to read: its last events and the end go at once.
      if (isComplete(body)) {
        ended = true;
        res.end(text);
      } else if (text !== '') await writeOut(res, text);
    }
  } catch (error) {
    if (!res.destroyed && error instanceof RangeError)
      relay.onProblem(`the server sent ${error.message}; stream ended`);
  }
  if (!ended) res.end();
}

/** A node:http answer fully received and all read (its `end` is yet to be emitted). */
function isComplete(body: AsyncIterable<Uint8Array>): boolean {
  return body instanceof IncomingMessage && body.complete && body.readableLength === 0;
}

async function formatRelayedItem(item: SseItem, relay: ClientRelay): Promise<string | undefined> {
  if (item.kind === 'retry') return formatSseRetry(item.ms);
  if (item.kind === 'comment') return formatSseComment(item.text);
  // Events of other types are no MCP messages: an SDK client ignores them, so does the guard.
  if (!isMessageEvent(item)) return undefined;
  // A priming event (MCP 2025-11-25): an id and no message, kept so the client can resume from it.
  if (item.data === '') return formatSseEvent({ id: item.id, event: item.event, data: '' });
  const output = await relay.onMessage(item.data);
  if (output === undefined) return undefined;
  const notices = relay.takeNotices?.() ?? [];
  const event = formatSseEvent({ id: item.id, event: item.event, data: output });
  return notices.length === 0
    ? event
    : notices.map((data) => formatSseEvent({ event: 'message', data })).join('') + event;
}

function isMessageEvent(item: SseItem): item is Extract<SseItem, { kind: 'event' }> {
  return item.kind === 'event' && (item.event === undefined || item.event === 'message');
}

function joinMessages(first: string | undefined, second: string | undefined): string | undefined {
  if (first === undefined || second === undefined) return first ?? second;
  const members = (text: string): string => (text.trimStart().startsWith('[') ? text.trim().slice(1, -1) : text);
  return `[${members(first)},${members(second)}]`;
}

/** Write and wait for the socket to take it (or to close), so a slow client slows the server's stream. */
function writeOut(res: ServerResponse, text: string): Promise<void> | undefined {
  if (res.write(text)) return undefined;
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Answer with a JSON body; `headers` (a fresh object of the caller's) gets its Content-Type and Content-Length. */
export function sendJson(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, body: string): void {
  // Set on the caller's object, not spread into a new one (an object spread with members added is slow in V8).
  headers['content-type'] = 'application/json';
  headers['content-length'] = Buffer.byteLength(body);
  res.writeHead(status, headers);
  res.end(body);
}

/** An HTTP error the guard answers itself, with a JSON-RPC error body (id null), as the SDK's server does. */
export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: OutgoingHttpHeaders = {},
  code = -32000,
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message: `toolseal guard: ${message}` } });
  sendJson(res, status, headers, body);
}

// Requests from the HTTP guard to the MCP server (RFC 9112 persistent connections; MCP 2025-06-18 "Transports"
// §Streamable HTTP): node:http(s) over one keep-alive agent by default, or a caller's fetch. Redirects are never
// followed; a body is read only within a limit.

import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Readable } from 'node:stream';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { HeaderFields } from './http-headers.ts';

/** One request to the server. */
export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  headers: HeaderFields;
  body?: Uint8Array | string;
  /** Stops the request (and the reading of its answer's body). */
  stop: Stop;
}

/**
 * What stops a request: an AbortController's job without its cost (Node 20 makes every AbortSignal transferable,
 * tens of µs each, and the guard needs one per request). A child stops with its parent until released.
 */
export class Stop {
  private listeners: Set<(reason: Error) => void> | undefined;
  private reason: Error | undefined;
  private readonly parent: Stop | undefined;
  private readonly stopFromParent: (reason: Error) => void;

  constructor(parent?: Stop) {
    this.parent = parent;
    this.stopFromParent = (reason) => this.stop(reason);
    parent?.listen(this.stopFromParent);
  }

  get stopped(): boolean {
    return this.reason !== undefined;
  }

  /** Call `listener` once when this stops (at once when it already has). */
  listen(listener: (reason: Error) => void): void {
    if (this.reason !== undefined) {
      listener(this.reason);
      return;
    }
    this.listeners ??= new Set();
    this.listeners.add(listener);
  }

  unlisten(listener: (reason: Error) => void): void {
    this.listeners?.delete(listener);
  }

  /** Stop, with `reason` (an AbortError by default) for whatever is stopped. */
  stop(reason: Error = createAbortError()): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    this.parent?.unlisten(this.stopFromParent);
    if (listeners !== undefined) for (const listener of listeners) listener(reason);
  }

  /** The work is over: no longer stopped by the parent, and nothing is left to stop. */
  release(): void {
    this.parent?.unlisten(this.stopFromParent);
    this.listeners = undefined;
  }
}

function createAbortError(): Error {
  const error = new Error('the request was stopped');
  error.name = 'AbortError';
  return error;
}

/** The server's answer: its status and headers, and its body to read once (or to cancel). */
export interface UpstreamAnswer {
  readonly status: number;
  /** By lower-case name; Set-Cookie as a list. */
  readonly headers: HeaderFields;
  readonly body: AsyncIterable<Uint8Array> | null;
  /** Stop reading the body (frees the connection). */
  cancel(): void;
}

export interface Upstream {
  send(request: UpstreamRequest): Promise<UpstreamAnswer>;
  close(): void;
}

export const isSuccess = (answer: UpstreamAnswer): boolean => answer.status >= 200 && answer.status < 300;

/** The server at `url` over node:http or node:https, connections kept alive between requests. */
export function createNodeUpstream(url: URL): Upstream {
  const secure = url.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  // The URL's parts once (node:http would re-derive them from the URL on every request).
  const protocol = url.protocol;
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = url.port === '' ? undefined : Number(url.port);
  const path = `${url.pathname}${url.search}`;
  const auth =
    url.username === '' ? undefined : `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  const send = (request: UpstreamRequest): Promise<UpstreamAnswer> =>
    new Promise((resolve, reject) => {
      const { stop } = request;
      if (stop.stopped) {
        reject(createAbortError());
        return;
      }
      // Built member by member, the request's headers not copied (object spreads with members added are slow in V8).
      const options: RequestOptions = {
        protocol,
        hostname,
        port,
        path,
        method: request.method,
        headers: request.headers,
        agent,
      };
      if (auth !== undefined) options.auth = auth;
      const outgoing = secure ? httpsRequest(options) : httpRequest(options);
      if (request.body !== undefined) outgoing.setHeader('content-length', Buffer.byteLength(request.body));
      // Stopped: the request (and its answer's body) is destroyed, as node:http does for an aborted signal.
      const destroy = (reason: Error): void => void outgoing.destroy(reason);
      stop.listen(destroy);
      outgoing.once('close', () => stop.unlisten(destroy));
      outgoing.once('error', reject);
      outgoing.once('response', (incoming: IncomingMessage) => resolve(answerOf(incoming)));
      outgoing.end(request.body);
    });
  return { send, close: () => agent.destroy() };
}

function answerOf(incoming: IncomingMessage): UpstreamAnswer {
  // Nobody may read the body (a redirect, a 202): its errors are the reader's business, or nobody's.
  incoming.once('error', () => undefined);
  return {
    status: incoming.statusCode ?? 502,
    headers: incoming.headers,
    body: incoming,
    cancel: () => incoming.destroy(),
  };
}

/** The server at `url` through a caller's fetch (tests, or a host with its own network stack). */
export function createFetchUpstream(url: URL, fetchUpstream: typeof fetch): Upstream {
  return {
    send: async (request) => {
      const abort = new AbortController();
      request.stop.listen((reason) => abort.abort(reason));
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers))
        for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value])
          headers.append(name, item);
      const response = await fetchUpstream(url, {
        method: request.method,
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: abort.signal,
        redirect: 'manual',
      });
      const fields: HeaderFields = {};
      for (const [name, value] of response.headers) if (name !== 'set-cookie') fields[name] = value;
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) fields['set-cookie'] = cookies;
      return {
        status: response.status,
        headers: fields,
        body: response.body,
        cancel: () => void response.body?.cancel().catch(() => undefined),
      };
    },
    close: () => undefined,
  };
}

/** The body's bytes, at most `maxBytes` of them; past that reading stops and `tooLarge()` is thrown. */
export async function readBodyWithin(
  body: AsyncIterable<Uint8Array> | null,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<Uint8Array> {
  if (body === null) return new Uint8Array(0);
  if (body instanceof Readable) return readReadableWithin(body, maxBytes, tooLarge);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/**
 * The same for a node stream, by its events (no async iterator: a body is usually one chunk). Past the limit the
 * stream is destroyed, or with `drain` read on and discarded (a request, so its connection can still be answered).
 */
export function readReadableWithin(
  stream: Readable,
  maxBytes: number,
  tooLarge: () => Error,
  drain = false,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer): void => {
      total += chunk.byteLength;
      if (total <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      stream.off('data', onData);
      if (drain) stream.resume();
      else stream.destroy();
      reject(tooLarge());
    };
    stream.on('data', onData);
    stream.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total)));
    stream.once('error', reject);
    stream.once('close', () => {
      if (!stream.readableEnded) reject(new Error('the stream closed before its end'));
    });
  });
}

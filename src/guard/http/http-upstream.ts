// Requests from the HTTP guard to the MCP server (RFC 9112 persistent connections; MCP 2025-06-18 "Transports"
// §Streamable HTTP): undici over a pool of keep-alive connections by default, or a caller's fetch. Redirects are
// never followed; a body is read only within a limit.

import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { type Dispatcher, Pool } from 'undici';
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

/**
 * The server at `url` over undici (Node's own HTTP/1.1 client, the one behind its fetch, used here without fetch's
 * per-request streams and signals), connections pooled and kept alive between requests: the hop the guard adds
 * costs about a third less than over node:http's agent. No timeouts (an SSE stream may stay quiet for long; the
 * client's going away stops it), no redirects (undici's request follows none), no content decoding.
 */
export function createPooledUpstream(url: URL): Upstream {
  const pool = new Pool(url.origin, { pipelining: 1, headersTimeout: 0, bodyTimeout: 0 });
  const path = `${url.pathname}${url.search}`;
  // Credentials in the URL become Basic authentication unless the client sends its own Authorization (as node:http's
  // `auth` option did).
  const basic =
    url.username === ''
      ? undefined
      : `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  const send = async (request: UpstreamRequest): Promise<UpstreamAnswer> => {
    const { stop } = request;
    if (stop.stopped) throw createAbortError();
    let headers = request.headers;
    if (basic !== undefined && headers['authorization'] === undefined) headers = { ...headers, authorization: basic };
    // undici takes an EventEmitter as its signal ("abort" stops the request, or destroys its answer's body).
    const signal = new EventEmitter();
    const abort = (): void => void signal.emit('abort');
    stop.listen(abort);
    let data: Dispatcher.ResponseData;
    try {
      data = await pool.request({ path, method: request.method, headers, body: request.body ?? null, signal });
    } catch (error) {
      stop.unlisten(abort);
      throw error;
    }
    const { body } = data;
    body.once('close', () => stop.unlisten(abort));
    // Nobody may read the body (a redirect, a 202): its errors are the reader's business, or nobody's.
    body.once('error', () => undefined);
    return {
      status: data.statusCode,
      headers: data.headers as HeaderFields,
      body,
      cancel: () => void body.destroy(),
    };
  };
  return { send, close: () => void pool.destroy().catch(() => undefined) };
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

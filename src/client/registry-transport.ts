// One HTTP exchange with a registry (RFC 9110; RFC 9112 §9.3 persistent connections): node:http(s) over a keep-alive
// pool of the client's own, or a given fetch. Every answer is read whole within a byte limit chosen by its status and
// by a deadline; redirects are never followed (a 3xx is an answer like any other, and no success). A gzip-encoded
// answer (RFC 9110 §8.4.1.3; tiles, C2SP tlog-tiles) is decoded within the same limit. Transport failures are
// FETCH_FAILED; what an answer means is the registry client's business (registry-client.ts).

import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { gunzipSync } from 'node:zlib';
import { ToolsealError } from '../core/errors.ts';
import { readStreamWithin } from '../core/stream.ts';

export interface ExchangeRequest {
  method: 'GET' | 'POST';
  /** The path (and query) below the registry's base. */
  path: string;
  headers: Record<string, string>;
  /** The exact body bytes. */
  body?: Uint8Array;
  /** The largest answer accepted for a status, in bytes (decoded). */
  limitFor(status: number): number;
}

export interface ExchangeAnswer {
  status: number;
  /** A response header (lower-case name), or undefined. */
  header(name: string): string | undefined;
  bytes: Uint8Array;
}

export interface TransportOptions {
  /** Each whole exchange, answer included, in milliseconds. */
  timeoutMs: number;
  /** Send with this fetch instead of node:http(s). */
  fetch?: typeof fetch;
  /** Abort everything. */
  signal?: AbortSignal;
}

const agents: { http?: HttpAgent; https?: HttpsAgent } = {};

/**
 * One keep-alive pool per scheme for every client in the process (a guard verifies many manifests, each with a
 * client of its own). Idle pooled sockets are unref'd by node's Agent: they never keep a process alive.
 */
function sharedAgent(scheme: 'http' | 'https'): HttpAgent {
  const options = { keepAlive: true, scheduling: 'lifo' as const };
  if (scheme === 'https') {
    agents.https ??= new HttpsAgent(options);
    return agents.https;
  }
  agents.http ??= new HttpAgent(options);
  return agents.http;
}

/** The request did not complete by its deadline. */
class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
}

/** A kept-alive connection was closed by the server before any answer to this request (safe to send again). */
class StaleConnectionError extends Error {
  override readonly name = 'StaleConnectionError';
}

/** Exchanges with one registry, over one connection pool. */
export class RegistryTransport {
  readonly #agent: HttpAgent | undefined;
  readonly #inFlight = new Set<AbortController>();

  constructor(
    readonly base: string,
    private readonly options: TransportOptions,
  ) {
    if (options.fetch === undefined) this.#agent = sharedAgent(base.startsWith('https:') ? 'https' : 'http');
  }

  /** Abort every exchange still in flight. */
  abortAll(): void {
    for (const controller of this.#inFlight) controller.abort();
    this.#inFlight.clear();
  }

  /** Send one request and read its whole answer (FETCH_FAILED when that cannot be done in time and within limits). */
  async exchange(request: ExchangeRequest): Promise<ExchangeAnswer> {
    const controller = new AbortController();
    this.#inFlight.add(controller);
    const outer = this.options.signal;
    const onAbort = (): void => controller.abort(outer?.reason);
    if (outer?.aborted) onAbort();
    outer?.addEventListener('abort', onAbort, { once: true });
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      controller.abort(new DeadlineError('deadline'));
    }, this.options.timeoutMs);
    try {
      const answer =
        this.#agent === undefined
          ? await this.#exchangeWithFetch(this.options.fetch!, request, controller.signal)
          : await this.#exchangeOverNode(this.#agent, request, controller.signal);
      return decodeAnswer(answer, request);
    } catch (cause) {
      throw this.#failure(request, late || cause instanceof DeadlineError, cause);
    } finally {
      clearTimeout(timer);
      this.#inFlight.delete(controller);
      outer?.removeEventListener('abort', onAbort);
      if (!controller.signal.aborted) controller.abort(); // release the connection of any unread body
    }
  }

  async #exchangeWithFetch(fetchImpl: typeof fetch, request: ExchangeRequest, signal: AbortSignal) {
    const response = await fetchImpl(`${this.base}${request.path}`, {
      method: request.method,
      headers: request.headers,
      redirect: 'error',
      signal,
      ...(request.body === undefined ? {} : { body: request.body as Uint8Array<ArrayBuffer> }),
    });
    const limit = request.limitFor(response.status);
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (Number.isFinite(declared) && declared > limit) throw tooLarge(request.path, limit);
    const bytes = await readStreamWithin(response.body, limit, () => tooLarge(request.path, limit));
    // fetch has already decoded any Content-Encoding.
    return { status: response.status, header: (name: string) => response.headers.get(name) ?? undefined, bytes };
  }

  /** One exchange over a pooled connection; a reused one the server had closed while idle is retried once, fresh. */
  async #exchangeOverNode(agent: HttpAgent, request: ExchangeRequest, signal: AbortSignal): Promise<RawAnswer> {
    try {
      return await sendOverNode(agent, `${this.base}${request.path}`, request, signal);
    } catch (cause) {
      if (!(cause instanceof StaleConnectionError)) throw cause;
    }
    return await sendOverNode(agent, `${this.base}${request.path}`, request, signal);
  }

  #failure(request: ExchangeRequest, late: boolean, cause: unknown): ToolsealError {
    if (cause instanceof ToolsealError) return cause;
    const { method, path } = request;
    const what = method === 'GET' ? path : `${method} ${path}`;
    if (late)
      return new ToolsealError('FETCH_FAILED', `${what}: no complete answer within ${this.options.timeoutMs} ms`, {
        cause,
      });
    if (this.options.signal?.aborted) return new ToolsealError('FETCH_FAILED', `${what}: aborted`, { cause });
    const verb = method === 'GET' ? 'fetch' : 'send';
    return new ToolsealError(
      'FETCH_FAILED',
      `could not ${verb} ${what} ${method === 'GET' ? 'from' : 'to'} ${this.base}`,
      {
        cause,
      },
    );
  }
}

interface RawAnswer extends ExchangeAnswer {
  /** Content-Encoding still to undo (node:http never decodes). */
  encoded?: boolean;
}

/** Undo a gzip Content-Encoding node:http left in place, within the answer's limit. */
function decodeAnswer(answer: RawAnswer, request: ExchangeRequest): ExchangeAnswer {
  if (answer.encoded !== true) return answer;
  const limit = request.limitFor(answer.status);
  try {
    return { ...answer, bytes: new Uint8Array(gunzipSync(answer.bytes, { maxOutputLength: limit })) };
  } catch (cause) {
    if ((cause as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(request.path, limit);
    throw new ToolsealError('FETCH_FAILED', `${request.path}: the answer is not valid gzip`, { cause });
  }
}

/** Send one request over `agent` and read its whole answer within the limit for its status, until `signal` aborts. */
function sendOverNode(
  agent: HttpAgent,
  url: string,
  exchange: ExchangeRequest,
  signal: AbortSignal,
): Promise<RawAnswer> {
  return new Promise<RawAnswer>((resolve, reject) => {
    const headers: Record<string, string | number> = { ...exchange.headers };
    if (exchange.body !== undefined) headers['Content-Length'] = exchange.body.byteLength;
    if (exchange.method === 'GET') headers['Accept-Encoding'] = 'gzip';
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    let answered = false;
    const onAbort = (): void => {
      request.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    const settle = (error: unknown, answer?: RawAnswer): void => {
      signal.removeEventListener('abort', onAbort);
      if (answer !== undefined) resolve(answer);
      else reject(error);
    };
    const request = send(url, { method: exchange.method, agent, headers }, (response) => {
      answered = true;
      readAnswer(response, exchange).then(
        (answer) => settle(undefined, answer),
        (error: unknown) => {
          request.destroy();
          settle(error);
        },
      );
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    request.once('socket', (socket) => socket.setNoDelay(true));
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) return; // the answer's reader reports it
      const stale = request.reusedSocket && !signal.aborted && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      settle(stale ? new StaleConnectionError('the kept-alive connection was closed', { cause: error }) : error);
    });
    request.end(exchange.body);
  });
}

/** The answer's bytes, at most the limit for its status (past it, FETCH_FAILED). */
function readAnswer(response: IncomingMessage, exchange: ExchangeRequest): Promise<RawAnswer> {
  const status = response.statusCode ?? 0;
  const limit = exchange.limitFor(status);
  const encoding = response.headers['content-encoding']?.trim().toLowerCase();
  const header = (name: string): string | undefined => {
    const value = response.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  return new Promise<RawAnswer>((resolve, reject) => {
    if (encoding !== undefined && encoding !== 'identity' && encoding !== 'gzip') {
      response.destroy();
      reject(new ToolsealError('FETCH_FAILED', `${exchange.path}: an answer in an encoding not asked for`));
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    response.on('data', (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limit) {
        response.destroy();
        reject(tooLarge(exchange.path, limit));
        return;
      }
      chunks.push(chunk);
    });
    response.once('end', () =>
      resolve({
        status,
        header,
        bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
        encoded: encoding === 'gzip',
      }),
    );
    response.once('error', reject);
    response.once('close', () => {
      if (!response.complete) reject(new Error('the connection closed during the answer'));
    });
  });
}

function tooLarge(path: string, limit: number): ToolsealError {
  return new ToolsealError('FETCH_FAILED', `${path}: the answer exceeds the ${limit}-byte limit`);
}

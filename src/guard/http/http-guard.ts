// The guard for Streamable HTTP servers (MCP 2025-06-18 and 2025-11-25 "Transports" §Streamable HTTP; issue 14 §1):
// a local endpoint on loopback that an MCP client connects to instead of the server.
//
// Every POST body is read as bytes within a limit and parsed strictly; each message is decided by the session's
// policy before anything is forwarded, and refused calls are answered by the guard itself. Answers (JSON bodies, the
// SSE streams of POST and GET) pass the policy message by message: tools/list results reach the client only as the
// signed bytes. One policy per MCP session (keyed by the upstream's Mcp-Session-Id); the guard lists the tools
// itself when a session starts and after each list_changed. Host and Origin are checked against DNS rebinding.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeUtf8Strict } from '../../core/bytes.ts';
import { ToolsealError } from '../../core/errors.ts';
import { isJsonObject, type JsonValue } from '../../core/json.ts';
import { parseStrictText } from '../../pipeline/parse.ts';
import { GUARD_PARSE_ERROR_CODE, GUARD_SESSION_REFUSED_CODE, type GuardFinding } from '../core/guard-types.ts';
import {
  applyCors,
  describeLoopback,
  findRebindingRefusal,
  readField,
  selectUpstreamRequestHeaders,
  type HeaderFields,
  type LoopbackIdentity,
} from './http-headers.ts';
import { relayUpstreamResponse, sendJson, sendJsonRpcError, type ClientRelay } from './http-relay.ts';
import {
  createFetchUpstream,
  createPooledUpstream,
  isSuccess,
  readReadableWithin,
  Stop,
  type Upstream,
  type UpstreamAnswer,
  type UpstreamRequest,
} from './http-upstream.ts';
import type { ApprovalEvent } from '../core/call-gate.ts';
import { HttpGuardSession, MESSAGE_MAX_DEPTH, type HttpGuardPolicy, type SessionHost } from './http-session.ts';

export type { HttpGuardPolicy, ListingView, MessagePolicy } from './http-session.ts';

export interface HttpGuardLimits {
  /** Largest client POST body (default 4 MiB; 413 beyond). */
  maxBodyBytes?: number;
  /** Largest JSON answer from the server (default 64 MiB). */
  maxResponseBytes?: number;
  /** Longest SSE event from the server, in characters (default 64 Mi). */
  maxEventChars?: number;
  /** MCP sessions held at once (default 64); the least recently used idle one makes room, else 503. */
  maxSessions?: number;
  /** Requests in flight (each may become an SSE stream) per session (default 16) and in all (default 128); 429 beyond. */
  maxStreamsPerSession?: number;
  maxStreams?: number;
  /** How long the guard's own tools/list may take, all pages (default 10 s); a call waiting for it is refused after. */
  listTimeoutMs?: number;
}

export interface HttpGuardOptions {
  /** A fresh policy for each MCP session: a ToolGuard built with `requireListed: true`, or a GuardSession around one. */
  createPolicy: () => HttpGuardPolicy;
  /** The server's Streamable HTTP endpoint (http: or https:). */
  upstream: string | URL;
  /** Only 127.0.0.1 (the default) is accepted. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Origins allowed besides the guard's own http://127.0.0.1:PORT and http://localhost:PORT. */
  allowedOrigins?: readonly string[];
  limits?: HttpGuardLimits;
  /** Called for every finding (default: one JSON line on stderr). Never given a header. */
  onFinding?: (finding: GuardFinding) => void;
  /** Called for every approval event of a GuardSession's call gate (default: one JSON line on stderr). */
  onEvent?: (event: ApprovalEvent) => void;
  /** A fetch to reach the server with (default: undici over pooled keep-alive connections; redirects never followed). */
  fetch?: typeof fetch;
  /**
   * Wraps every request to the server, as the guard would send it after its decisions (issue 29: timing, W3C trace
   * context in the headers and `_meta`); it must call `send` once.
   */
  interceptUpstream?: (
    request: UpstreamRequest,
    send: (request: UpstreamRequest) => Promise<UpstreamAnswer>,
  ) => Promise<UpstreamAnswer>;
}

export interface HttpGuard {
  /** The endpoint for the client: http://127.0.0.1:PORT/mcp. */
  readonly url: string;
  readonly port: number;
  /** MCP sessions held now. */
  readonly sessionCount: number;
  close(): Promise<void>;
}

const DEFAULT_LIMITS: Required<HttpGuardLimits> = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxResponseBytes: 64 * 1024 * 1024,
  maxEventChars: 64 * 1024 * 1024,
  maxSessions: 64,
  maxStreamsPerSession: 16,
  maxStreams: 128,
  listTimeoutMs: 10_000,
};

export const HTTP_GUARD_PATH = '/mcp';
/** GET answers {"status":"ok"} while the guard runs (issue 23 §7). */
export const HEALTH_PATH = '/healthz';
const LOOPBACK = '127.0.0.1';
const MAX_REFUSED_SESSIONS = 1024;

/** Start the guard on 127.0.0.1; the caller must have verified the signed bytes its policies hold. */
export async function startHttpGuard(options: HttpGuardOptions): Promise<HttpGuard> {
  if ((options.host ?? LOOPBACK) !== LOOPBACK)
    throw new ToolsealError('BAD_REQUEST', `the HTTP guard listens on ${LOOPBACK} only, not ${options.host}`);
  const upstream = new URL(options.upstream);
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:')
    throw new ToolsealError('BAD_REQUEST', `the upstream must be an http: or https: URL, not ${upstream.protocol}`);
  const guard = new HttpGuardServer(options, upstream);
  const port = await guard.listen(options.port ?? 0, options.allowedOrigins ?? []);
  return {
    url: `http://${LOOPBACK}:${port}${HTTP_GUARD_PATH}`,
    port,
    get sessionCount() {
      return guard.sessionCount;
    },
    close: () => guard.close(),
  };
}

class HttpGuardServer implements SessionHost {
  private readonly upstreamClient: Upstream;
  readonly maxEventChars: number;
  readonly maxResponseBytes: number;
  readonly listTimeoutMs: number;
  private readonly limits: Required<HttpGuardLimits>;
  private readonly server: Server;
  private identity: LoopbackIdentity = { hosts: new Set(), origins: new Set() };
  private readonly sessions = new Map<string, HttpGuardSession>();
  /** Sessions whose initialize is in flight. */
  private readonly starting = new Set<HttpGuardSession>();
  /** Ids of sessions a strict guard refused (the latest MAX_REFUSED_SESSIONS). */
  private readonly refused = new Set<string>();
  private totalStreams = 0;

  constructor(
    private readonly options: HttpGuardOptions,
    readonly upstream: URL,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...withoutUndefined(options.limits ?? {}) };
    this.upstreamClient =
      options.fetch === undefined ? createPooledUpstream(upstream) : createFetchUpstream(upstream, options.fetch);
    this.maxEventChars = this.limits.maxEventChars;
    this.maxResponseBytes = this.limits.maxResponseBytes;
    this.listTimeoutMs = this.limits.listTimeoutMs;
    this.server = createServer((req, res) => this.handle(req, res));
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  async listen(port: number, extraOrigins: readonly string[]): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, LOOPBACK, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const bound = (this.server.address() as AddressInfo).port;
    this.identity = describeLoopback(bound, extraOrigins);
    return bound;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const session of [...this.sessions.values(), ...this.starting]) void session.end(false);
    this.server.closeAllConnections();
    await closed;
    this.upstreamClient.close();
  }

  send(request: UpstreamRequest): Promise<UpstreamAnswer> {
    const intercept = this.options.interceptUpstream;
    if (intercept !== undefined) return intercept(request, (outgoing) => this.upstreamClient.send(outgoing));
    return this.upstreamClient.send(request);
  }

  report(finding: GuardFinding): void {
    if (this.options.onFinding !== undefined) this.options.onFinding(finding);
    else process.stderr.write(`${JSON.stringify(finding)}\n`);
  }

  reportEvent(event: ApprovalEvent): void {
    if (this.options.onEvent !== undefined) this.options.onEvent(event);
    else process.stderr.write(`${JSON.stringify(event)}\n`);
  }

  ended(session: HttpGuardSession, refused: boolean): void {
    (session.policy as { end?: () => void }).end?.();
    this.starting.delete(session);
    if (session.id === undefined) return;
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    if (!refused || session.id === '') return;
    this.refused.add(session.id);
    if (this.refused.size > MAX_REFUSED_SESSIONS) this.refused.delete(this.refused.values().next().value!);
  }

  /** A session a strict guard refused: every later request is answered with why (403). */
  private refuseSession(res: ServerResponse): void {
    sendJsonRpcError(
      res,
      403,
      'the guard refused this session (strict): the server presented a tool that differs from its signed definition or is not signed; see its findings',
      {},
      GUARD_SESSION_REFUSED_CODE,
    );
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const handling = this.route(req, res);
    handling?.catch(() => {
      // The server could not be reached, or the client went away: nothing of the error reaches the client.
      if (!res.headersSent) sendJsonRpcError(res, 502, 'the MCP server could not be reached');
      else res.destroy();
    });
  }

  /** Refuse what must be refused before anything is read; else the exchange for the method. */
  private route(req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
    const refusal = findRebindingRefusal(req.headers, this.identity);
    if (refusal !== undefined) {
      sendJsonRpcError(res, 403, `forbidden: ${refusal}`);
      return undefined;
    }
    if (req.url === HEALTH_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      // Liveness for a supervisor: the guard is up and verified (it listens only after verifying); no upstream call.
      sendJson(res, 200, { 'cache-control': 'no-store' }, '{"status":"ok"}');
      return undefined;
    }
    if (!isGuardPath(req.url)) {
      sendJsonRpcError(res, 404, `not found: the MCP endpoint is ${HTTP_GUARD_PATH}`);
      return undefined;
    }
    if (applyCors(req.headers, req.method, res)) return undefined;
    if (req.method === 'POST') return this.handlePost(req, res);
    if (req.method === 'GET' || req.method === 'DELETE') return this.handleSessionRequest(req, res, req.method);
    sendJsonRpcError(res, 405, 'method not allowed', { allow: 'GET, POST, DELETE' });
    return undefined;
  }

  private async handlePost(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readRequestBody(req, this.limits.maxBodyBytes);
    if (body === undefined)
      return sendJsonRpcError(res, 413, `the request body is larger than ${this.limits.maxBodyBytes} bytes`, {
        connection: 'close',
      });
    const text = decodeUtf8Strict(body);
    let message: JsonValue;
    try {
      if (text === undefined) throw new Error('not UTF-8');
      message = parseStrictText(text, MESSAGE_MAX_DEPTH);
    } catch {
      return sendJsonRpcError(res, 400, 'parse error: the body is not strict JSON', {}, GUARD_PARSE_ERROR_CODE);
    }
    const session = this.findPostSession(req, res, message);
    if (session === undefined) return;
    try {
      await this.forwardPost(req, res, session, message, text!);
    } finally {
      // An initialize that got no answer leaves no session behind.
      if (session.id === undefined) this.ended(session, false);
    }
  }

  private async forwardPost(
    req: IncomingMessage,
    res: ServerResponse,
    session: HttpGuardSession,
    message: JsonValue,
    text: string,
  ): Promise<void> {
    // This request's headers, on this request only (a GET of the same session must not change what the POST sends).
    const headers = selectUpstreamRequestHeaders(req.headers);
    await this.withStream(session, res, async (stop) => {
      const decision = await session.decideClient(message, text, headers);
      if (decision.forward === undefined) {
        if (decision.reply !== undefined) sendJson(res, 200, {}, decision.reply.text);
        else if (decision.terminate) this.refuseSession(res);
        else res.writeHead(202).end();
        if (decision.terminate) await session.end(true, true, headers);
        return;
      }
      const upstream = await this.send({
        method: 'POST',
        headers,
        // The original as its text: the same bytes (strict UTF-8 decodes and encodes back one to one), sent with the
        // headers in one write (node:http joins a string body to them; a Buffer goes as a second chunk).
        body: decision.forward === 'original' ? text : decision.forward.text,
        stop,
      });
      if (session.id === undefined) this.register(session, upstream);
      await relayUpstreamResponse(upstream, res, this.relayFor(session, headers, decision.reply?.text));
      // The server no longer knows the session: neither does the guard (the client starts a new one).
      if (upstream.status === 404 && session.id !== undefined) void session.end(false);
      if (isSuccess(upstream) && holdsMethod(message, 'notifications/initialized')) session.startListing(headers);
      if (decision.terminate) await session.end(true, true, headers);
    });
  }

  /** GET (the server's SSE stream, resumed with Last-Event-ID) and DELETE (the end of the session), passed on. */
  private async handleSessionRequest(req: IncomingMessage, res: ServerResponse, method: 'GET' | 'DELETE') {
    const session = this.findSession(req, res);
    if (session === undefined) return;
    const headers = selectUpstreamRequestHeaders(req.headers);
    await this.withStream(session, res, async (stop) => {
      const upstream = await this.send({ method, headers, stop });
      await relayUpstreamResponse(upstream, res, this.relayFor(session, headers, undefined));
      if (upstream.status === 404 || (method === 'DELETE' && isSuccess(upstream))) void session.end(false);
    });
  }

  private relayFor(session: HttpGuardSession, headers: HeaderFields, prepend: string | undefined): ClientRelay {
    return {
      maxEventChars: this.maxEventChars,
      maxResponseBytes: this.maxResponseBytes,
      prepend,
      onMessage: (text) => session.handleServerText(text, headers),
      onProblem: (message) => session.reportDropped(message),
      takeNotices: () => session.takeNotices(),
      acceptsEventStream: readField(headers, 'accept')?.includes('text/event-stream') === true,
    };
  }

  /** The session a POST belongs to; a new one for an initialize without Mcp-Session-Id. Answers the client if none. */
  private findPostSession(req: IncomingMessage, res: ServerResponse, message: JsonValue): HttpGuardSession | undefined {
    if (req.headers['mcp-session-id'] === undefined && holdsMethod(message, 'initialize')) {
      if (!this.makeRoom()) {
        sendJsonRpcError(res, 503, `too many sessions (at most ${this.limits.maxSessions})`);
        return undefined;
      }
      const session = new HttpGuardSession(
        this.options.createPolicy(),
        this,
        selectUpstreamRequestHeaders(req.headers),
      );
      this.starting.add(session);
      return session;
    }
    return this.findSession(req, res);
  }

  private findSession(req: IncomingMessage, res: ServerResponse): HttpGuardSession | undefined {
    const id = req.headers['mcp-session-id'];
    const session = this.sessions.get(typeof id === 'string' ? id : '');
    if (session !== undefined) {
      session.lastUsed = Date.now();
      return session;
    }
    if (typeof id === 'string' && this.refused.has(id)) this.refuseSession(res);
    else if (typeof id === 'string') sendJsonRpcError(res, 404, 'session not found', {}, -32001);
    else sendJsonRpcError(res, 400, 'bad request: the Mcp-Session-Id header is required');
    return undefined;
  }

  /** The initialize was answered: the session is known by the server's Mcp-Session-Id ('' when it gives none). */
  private register(session: HttpGuardSession, upstream: UpstreamAnswer): void {
    this.starting.delete(session);
    if (!isSuccess(upstream) || session.ended) return;
    const id = readField(upstream.headers, 'mcp-session-id') ?? '';
    const previous = this.sessions.get(id);
    session.id = id;
    this.sessions.set(id, session);
    if (previous !== undefined && previous !== session) void previous.end(false);
  }

  /** Below the session limit, or made so by ending the least recently used idle session. */
  private makeRoom(): boolean {
    if (this.sessions.size + this.starting.size < this.limits.maxSessions) return true;
    let oldest: HttpGuardSession | undefined;
    for (const session of this.sessions.values())
      if (session.openStreams === 0 && (oldest === undefined || session.lastUsed < oldest.lastUsed)) oldest = session;
    if (oldest === undefined) return false;
    void oldest.end(true);
    return true;
  }

  /** Run one exchange with the server within the stream limits, aborted when the client goes away. */
  private async withStream(
    session: HttpGuardSession,
    res: ServerResponse,
    exchange: (stop: Stop) => Promise<void>,
  ): Promise<void> {
    if (session.openStreams >= this.limits.maxStreamsPerSession || this.totalStreams >= this.limits.maxStreams)
      return sendJsonRpcError(res, 429, 'too many requests in flight', { 'retry-after': '1' });
    session.openStreams++;
    this.totalStreams++;
    // Stopped when the session ends, or when the client goes away before the end.
    const exchangeStop = new Stop(session.stop);
    const stop = (): void => exchangeStop.stop();
    res.once('close', stop);
    try {
      await exchange(exchangeStop);
    } finally {
      // Only a client gone before the end stops the exchange (a stop costs an exception and events).
      res.off('close', stop);
      exchangeStop.release();
      session.openStreams--;
      this.totalStreams--;
    }
  }
}

/** The body's bytes, or undefined when it is larger than `maxBytes` (a declared length is not trusted, only checked). */
async function readRequestBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > maxBytes) return undefined;
  return readReadableWithin(req, maxBytes, () => new RangeError('too large'), true).catch((error: unknown) => {
    if (error instanceof RangeError) return undefined;
    throw error;
  });
}

/** The request target names the MCP endpoint (its path; a query is allowed). */
function isGuardPath(target: string | undefined): boolean {
  // The usual target as the client sends it, without parsing a URL for it.
  if (target === HTTP_GUARD_PATH) return true;
  return new URL(target ?? '/', 'http://guard').pathname === HTTP_GUARD_PATH;
}

function holdsMethod(message: JsonValue, method: string): boolean {
  return (Array.isArray(message) ? message : [message]).some((item) => isJsonObject(item) && item['method'] === method);
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}

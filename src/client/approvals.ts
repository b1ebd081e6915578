// The approvals client (issue 13 §3, docs/approvals.md): a host's guard asks for and consumes approvals, an operator
// lists and decides them, each with a Bearer token (RFC 6750 §2.1). Timed, bounded, never following a redirect;
// answers are read with the strict parser and shape-checked (anything else is FETCH_FAILED); a refusal keeps the
// registry's own code and pointer (a code only a verifier may reach is FETCH_FAILED). The token is never echoed.
// Requests go over node:http(s) with persistent connections (RFC 9112 §9.3; issue 13 §5: a consumption is on the
// path of every approved call), unless a fetch is given.

import { Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isSha256Digest } from '../core/digest.ts';
import { type ErrorCode, ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { readStreamWithin } from '../core/stream.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../pipeline/limits.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { isRegistryRefusalCode, readProblem } from '../protocol/problem.ts';
import {
  approvalConsumePath,
  approvalDecisionPath,
  approvalPath,
  approvalsListPath,
  ROUTES,
} from '../protocol/routes.ts';
import {
  APPROVAL_STATUSES,
  type ApprovalCreatedResponse,
  type ApprovalDecisionRequest,
  type ApprovalListResponse,
  type ApprovalResponse,
  type ApprovalStatus,
  type ApprovalTransitionResponse,
  type WhoamiResponse,
} from '../protocol/wire.ts';
import { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS, normaliseRegistryUrl } from './registry-client.ts';

import { APPROVAL_ID_PATTERN } from '../log/entries.ts';

export { APPROVAL_ID_PATTERN };

/** Largest refusal body read (a problem document is far smaller). */
const MAX_PROBLEM_BYTES = 64 * 1024;

export interface ApprovalsClientOptions {
  /** The registry's base URL (http or https, no query, fragment or credentials). */
  registry: string;
  /** A host token (request, get, consume, whoami) or an operator token (list, get, decide, whoami). */
  token: string;
  /** A fetch to send requests with (default: node:http(s) over a keep-alive connection pool of this client's own). */
  fetch?: typeof fetch;
  /** Timeout for each whole request, answer included, in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Largest answer accepted, in bytes (default 8 MiB: an approval carries its signed tool). */
  maxResponseBytes?: number;
}

export type ApprovalCreated = ApprovalCreatedResponse & { created: boolean };

export type ApprovalDecision = Omit<ApprovalDecisionRequest, 'digest'> & { digest: string };

interface Answer {
  status: number;
  value: JsonObject;
}

/** One request as sent: the exact body bytes, and the largest answer accepted for a status. */
interface Exchange {
  method: 'GET' | 'POST';
  url: string;
  path: string;
  headers: Record<string, string>;
  body: Uint8Array | undefined;
  limitFor(status: number): number;
}

interface RawAnswer {
  status: number;
  bytes: Uint8Array;
}

/** One registry's approvals API, as one principal. */
export class ApprovalsClient {
  readonly registry: string;
  readonly #token: string;
  readonly #fetch: typeof fetch | undefined;
  readonly #agent: HttpAgent | undefined;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;

  constructor(options: ApprovalsClientOptions) {
    this.registry = normaliseRegistryUrl(options.registry);
    // RFC 6750 §2.1 b64token: also keeps a token out of any header-syntax error (whose text would carry it).
    if (!/^[A-Za-z0-9._~+/-]+=*$/.test(options.token)) {
      throw new ToolsealError('UNAUTHENTICATED', 'the token is not a bearer token (RFC 6750 b64token characters)');
    }
    this.#token = options.token;
    this.#fetch = options.fetch;
    // Idle connections are unref'd (they never keep a process alive) and closed before the server's Keep-Alive hint.
    const agentOptions = { keepAlive: true, scheduling: 'lifo' as const };
    if (options.fetch === undefined)
      this.#agent = this.registry.startsWith('https:') ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /** The principal the token belongs to (a host's name is the audience of its approvals). */
  async whoami(): Promise<WhoamiResponse> {
    const { value } = await this.#send('GET', ROUTES.whoami);
    const { kind, name } = value;
    if ((kind !== 'publisher' && kind !== 'operator' && kind !== 'host') || !isText(name)) {
      throw malformed(ROUTES.whoami, 'a principal');
    }
    return { kind, name };
  }

  /** Ask for an approval of the action envelope (sent as these exact bytes): 201 is a new request, 200 an open one. */
  async request(envelopeBytes: Uint8Array): Promise<ApprovalCreated> {
    const { status, value } = await this.#send('POST', ROUTES.approvals, envelopeBytes);
    const created = readCreated(value);
    if ((status !== 200 && status !== 201) || created === undefined) throw malformed(ROUTES.approvals, 'a request');
    return { ...created, created: status === 201 };
  }

  /** One approval request, with its envelope, the signed tool and the material view its digest binds. */
  async get(id: string): Promise<ApprovalResponse> {
    const path = approvalPath(id);
    const { value } = await this.#send('GET', path);
    const approval = readApproval(value);
    if (approval === undefined || approval.id !== id) throw malformed(path, `approval ${id}`);
    return approval;
  }

  /** The approval requests (operators), newest first; `status` filters. */
  async list(status?: ApprovalStatus): Promise<ApprovalListResponse> {
    const path = approvalsListPath(status);
    const { value } = await this.#send('GET', path);
    const items = Array.isArray(value['items']) ? value['items'].map(readSummary) : undefined;
    if (items === undefined || items.some((item) => item === undefined || (status && item.status !== status))) {
      throw malformed(path, 'a list of approvals');
    }
    return { items: items as ApprovalListResponse['items'] };
  }

  /** Approve or deny request `id` (operators); `digest` is the one the operator was shown. */
  async decide(id: string, decision: ApprovalDecision): Promise<ApprovalTransitionResponse> {
    const body: JsonObject = { decision: decision.decision, digest: decision.digest };
    if (decision.reason !== undefined) body['reason'] = decision.reason;
    const path = approvalDecisionPath(id);
    const { value } = await this.#send('POST', path, canonicalizeToBytes(body));
    const want: ApprovalStatus = decision.decision === 'approve' ? 'approved' : 'denied';
    return readTransition(value, path, id, want, decision.digest);
  }

  /** Consume an approved request for the call about to be dispatched (its envelope, these exact bytes). */
  async consume(id: string, envelopeBytes: Uint8Array): Promise<ApprovalTransitionResponse> {
    const path = approvalConsumePath(id);
    const { value } = await this.#send('POST', path, envelopeBytes);
    return readTransition(value, path, id, 'consumed');
  }

  async #send(method: 'GET' | 'POST', path: string, body?: Uint8Array): Promise<Answer> {
    const headers: Record<string, string> = { Authorization: `Bearer ${this.#token}`, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const exchange: Exchange = {
      method,
      url: `${this.registry}${path}`,
      path,
      headers,
      body,
      limitFor: (status) => (isSuccess(status) ? this.#maxBytes : MAX_PROBLEM_BYTES),
    };
    const answer =
      this.#agent === undefined
        ? await this.#exchangeWithFetch(this.#fetch!, exchange)
        : await this.#exchangeOverNode(this.#agent, exchange);
    if (!isSuccess(answer.status)) throw refusalOf(path, answer.status, answer.bytes);
    return { status: answer.status, value: this.#parse(path, answer.bytes) };
  }

  async #exchangeWithFetch(fetchImpl: typeof fetch, exchange: Exchange): Promise<RawAnswer> {
    const { method, path, body } = exchange;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.#timeoutMs);
    try {
      const response = await fetchImpl(exchange.url, {
        method,
        headers: exchange.headers,
        redirect: 'error',
        signal: controller.signal,
        ...(body === undefined ? {} : { body: body as Uint8Array<ArrayBuffer> }),
      });
      const limit = exchange.limitFor(response.status);
      const bytes = await readStreamWithin(response.body, limit, () => tooLarge(path, limit));
      return { status: response.status, bytes };
    } catch (cause) {
      throw this.#unreachable(method, path, timedOut, cause);
    } finally {
      clearTimeout(timer);
      if (!controller.signal.aborted) controller.abort(); // release the connection of any unread body
    }
  }

  /** One exchange over a pooled connection; a reused one the server had closed while idle is retried once, fresh. */
  async #exchangeOverNode(agent: HttpAgent, exchange: Exchange): Promise<RawAnswer> {
    const deadline = Date.now() + this.#timeoutMs;
    try {
      return await sendOverNode(agent, exchange, deadline);
    } catch (cause) {
      if (!(cause instanceof StaleConnectionError))
        throw this.#unreachable(exchange.method, exchange.path, false, cause);
    }
    try {
      return await sendOverNode(agent, exchange, deadline);
    } catch (cause) {
      throw this.#unreachable(exchange.method, exchange.path, false, cause);
    }
  }

  #unreachable(method: string, path: string, timedOut: boolean, cause: unknown): ToolsealError {
    if (cause instanceof ToolsealError) return cause;
    const late = timedOut || cause instanceof DeadlineError;
    const why = late ? `no complete answer within ${this.#timeoutMs} ms` : `could not reach ${this.registry}`;
    return new ToolsealError('FETCH_FAILED', `${method} ${path}: ${why}`, { cause });
  }

  #parse(path: string, bytes: Uint8Array): JsonObject {
    let value: JsonValue;
    try {
      value = parseStrict(bytes, { ...SIGNED_MANIFEST_PARSE_LIMITS, maxBytes: this.#maxBytes }).value;
    } catch (cause) {
      throw new ToolsealError('FETCH_FAILED', `${path}: the answer is not strict JSON`, { cause });
    }
    if (!isJsonObject(value)) throw malformed(path, 'a JSON object');
    return value;
  }
}

/** The request did not complete by its deadline. */
class DeadlineError extends Error {
  override readonly name = 'DeadlineError';
}

/** A kept-alive connection was closed by the server before any answer to this request (safe to send again). */
class StaleConnectionError extends Error {
  override readonly name = 'StaleConnectionError';
}

/**
 * Send one request over `agent` and read its whole answer within the limit for its status, by `deadline`. Redirects
 * are answers like any other (node:http never follows them): a 3xx is not a success, so it is refused.
 */
function sendOverNode(agent: HttpAgent, exchange: Exchange, deadline: number): Promise<RawAnswer> {
  return new Promise<RawAnswer>((resolve, reject) => {
    const headers: Record<string, string | number> = { ...exchange.headers };
    if (exchange.body !== undefined) headers['Content-Length'] = exchange.body.byteLength;
    const send = exchange.url.startsWith('https:') ? httpsRequest : httpRequest;
    let answered = false;
    let late = false;
    const settle = (error: unknown, answer?: RawAnswer): void => {
      clearTimeout(timer);
      if (answer !== undefined) resolve(answer);
      else reject(late ? new DeadlineError('deadline', { cause: error }) : error);
    };
    const request = send(exchange.url, { method: exchange.method, agent, headers }, (response) => {
      answered = true;
      readAnswer(response, exchange).then(
        (answer) => settle(undefined, answer),
        (error: unknown) => {
          request.destroy();
          settle(error);
        },
      );
    });
    const timer = setTimeout(
      () => {
        late = true;
        request.destroy(new DeadlineError('deadline'));
      },
      Math.max(0, deadline - Date.now()),
    );
    request.once('socket', (socket) => socket.setNoDelay(true));
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) return; // the answer's reader reports it
      const stale = request.reusedSocket && !late && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      settle(stale ? new StaleConnectionError('the kept-alive connection was closed', { cause: error }) : error);
    });
    request.end(exchange.body);
  });
}

/** The answer's bytes, at most the limit for its status (past it, TOO_LARGE as FETCH_FAILED). */
function readAnswer(response: IncomingMessage, exchange: Exchange): Promise<RawAnswer> {
  const status = response.statusCode ?? 0;
  const limit = exchange.limitFor(status);
  return new Promise<RawAnswer>((resolve, reject) => {
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
    response.once('end', () => resolve({ status, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) }));
    response.once('error', reject);
    response.once('close', () => {
      if (!response.complete) reject(new Error('the connection closed during the answer'));
    });
  });
}

function isSuccess(status: number): boolean {
  return status >= 200 && status <= 299;
}

function tooLarge(path: string, limit: number): ToolsealError {
  return new ToolsealError('FETCH_FAILED', `${path}: the answer exceeds the ${limit}-byte limit`);
}

function malformed(path: string, what: string): ToolsealError {
  return new ToolsealError('FETCH_FAILED', `${path}: the registry's answer is not ${what}`);
}

/** The registry's refusal: its code and pointer when it is a code a registry may refuse with, else FETCH_FAILED. */
function refusalOf(path: string, status: number, body: Uint8Array): ToolsealError {
  const { code: claimed, detail, pointer } = readProblem(body);
  const code: ErrorCode = claimed !== undefined && isRegistryRefusalCode(claimed) ? claimed : 'FETCH_FAILED';
  const prefix = claimed !== undefined && claimed !== code ? `${claimed}: ` : '';
  return new ToolsealError(
    code,
    `${path}: ${prefix}${detail ?? `HTTP ${status}`}`,
    pointer === undefined || code === 'FETCH_FAILED' ? undefined : { pointer },
  );
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

function isStatus(value: unknown): value is ApprovalStatus {
  return typeof value === 'string' && (APPROVAL_STATUSES as readonly string[]).includes(value);
}

function isLogIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function readCreated(value: JsonObject): ApprovalCreatedResponse | undefined {
  const { id, digest, status, expiresAt, url } = value;
  if (typeof id !== 'string' || !APPROVAL_ID_PATTERN.test(id) || !isSha256Digest(digest)) return undefined;
  if ((status !== 'pending' && status !== 'approved') || !isText(expiresAt) || !isText(url)) return undefined;
  return { id, digest, status, expiresAt, url };
}

type ApprovalSummary = ApprovalListResponse['items'][number];

const OPTIONAL_TEXT = ['decidedBy', 'decidedAt', 'reason', 'consumedAt'] as const;
const OPTIONAL_INDEXES = ['decisionLogIndex', 'consumptionLogIndex'] as const;

/** The members every approval answer has (a list item is exactly these). */
function readSummary(value: JsonValue): ApprovalSummary | undefined {
  if (!isJsonObject(value)) return undefined;
  const { id, digest, status, createdAt, expiresAt } = value;
  if (typeof id !== 'string' || !APPROVAL_ID_PATTERN.test(id) || !isSha256Digest(digest) || !isStatus(status)) {
    return undefined;
  }
  if (!isText(createdAt) || !isText(expiresAt)) return undefined;
  const summary: ApprovalSummary = { id, digest, status, createdAt, expiresAt };
  for (const key of OPTIONAL_TEXT) {
    const field = value[key];
    if (field === undefined) continue;
    if (typeof field !== 'string') return undefined;
    summary[key] = field;
  }
  for (const key of OPTIONAL_INDEXES) {
    const field = value[key];
    if (field === undefined) continue;
    if (!isLogIndex(field)) return undefined;
    summary[key] = field;
  }
  return summary;
}

function readApproval(value: JsonObject): ApprovalResponse | undefined {
  const summary = readSummary(value);
  const { envelope, tool, material, commitmentSalt } = value;
  if (summary === undefined || !isJsonObject(envelope) || !isJsonObject(tool) || !isJsonObject(material)) {
    return undefined;
  }
  if (typeof commitmentSalt !== 'string' || !/^[A-Za-z0-9_-]+$/.test(commitmentSalt)) return undefined;
  return { ...summary, envelope, tool, material, commitmentSalt };
}

/** A transition answer must be about request `id`, now in `want` (with `digest`, when the caller named one). */
function readTransition(
  value: JsonObject,
  path: string,
  id: string,
  want: ApprovalStatus,
  digest?: string,
): ApprovalTransitionResponse {
  const answer = { id: value['id'], digest: value['digest'], status: value['status'], logIndex: value['logIndex'] };
  if (
    answer.id !== id ||
    !isSha256Digest(answer.digest) ||
    (digest !== undefined && answer.digest !== digest) ||
    answer.status !== want ||
    !isLogIndex(answer.logIndex)
  ) {
    throw malformed(path, `approval ${id} ${want}`);
  }
  return { id, digest: answer.digest, status: want, logIndex: answer.logIndex };
}

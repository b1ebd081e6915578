// The one HTTP client of a registry (toolseal HTTP API, src/protocol/routes.ts): evidence reads for verify, audit,
// mirror and guard; publish and yank as a publisher; the approvals API (./approvals.ts) as a host or an operator.
// Every answer is read within a byte limit and by a deadline, never following a redirect (./registry-transport.ts);
// a success is parsed with the strict parser and shape-checked (./answers.ts); a refusal is an RFC 9457 problem read
// once (src/protocol/problem.ts). Evidence reads report only NOT_FOUND or FETCH_FAILED; calls relay the registry's
// own refusal codes, never one only a verifier may reach. A 503 SERVER_BUSY publish is retried with backoff,
// honouring Retry-After (RFC 9110 §10.2.3). Bearer tokens (RFC 6750 §2.1) are never echoed.

import type { Jwks } from '../attest/index.ts';
import { type ErrorCode, ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { parseVerifierString } from '../log/index.ts';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../pipeline/limits.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { isRegistryRefusalCode, readProblem } from '../protocol/problem.ts';
import { ROUTES, yankPath } from '../protocol/routes.ts';
import type { YankResponse } from '../protocol/wire.ts';
import { type PublishAnswer, readPublishAnswer, readYankAnswer } from './answers.ts';
import { type ExchangeAnswer, RegistryTransport } from './registry-transport.ts';

export type { PublishAnswer } from './answers.ts';

/** Largest response accepted from a registry (bytes). */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Each request (headers and body) must complete within this many milliseconds. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Largest refusal body read (a problem document is far smaller). */
const MAX_PROBLEM_BYTES = 64 * 1024;

export interface RegistryClientOptions {
  /** Per-request timeout in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Largest response accepted, in bytes (default 8 MiB). */
  maxResponseBytes?: number;
  /** Abort everything. */
  signal?: AbortSignal;
  /** A fetch to send requests with (default: node:http(s) over a shared keep-alive connection pool). */
  fetch?: typeof fetch;
  /** A bearer token sent with every call (a publisher's, a host's or an operator's). */
  token?: string;
}

/** How `publish` waits out a registry that answers 503 SERVER_BUSY. */
export interface BusyRetry {
  /** Further attempts after the first (default 4). */
  retries?: number;
  /** The first wait when the registry gives no Retry-After, doubled each time (default 250 ms). */
  baseDelayMs?: number;
  /** No single wait is longer (default 10 s, whatever Retry-After says). */
  maxDelayMs?: number;
  /** Told of each wait (for a progress line). */
  onRetry?: (attempt: number, delayMs: number) => void;
}

/** A call's parsed answer. */
export interface CallAnswer {
  status: number;
  value: JsonObject;
  header(name: string): string | undefined;
}

/** The registry base URL without a trailing slash; BAD_REQUEST for anything but plain http(s). */
export function normaliseRegistryUrl(registryUrl: string): string {
  let url: URL;
  try {
    url = new URL(registryUrl);
  } catch {
    throw new ToolsealError('BAD_REQUEST', `${JSON.stringify(registryUrl)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolsealError('BAD_REQUEST', 'the registry URL must be http(s)');
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ToolsealError('BAD_REQUEST', 'the registry URL must have no query, fragment or credentials');
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** UNAUTHENTICATED unless `token` is an RFC 6750 b64token (which also keeps it out of any header-syntax error). */
export function checkBearerToken(token: string): string {
  if (!/^[A-Za-z0-9._~+/-]+=*$/.test(token)) {
    throw new ToolsealError('UNAUTHENTICATED', 'the token is not a bearer token (RFC 6750 b64token characters)');
  }
  return token;
}

/** One registry, as one principal (or none, for reads). */
export class RegistryClient {
  readonly #transport: RegistryTransport;
  readonly #maxBytes: number;
  readonly #token: string | undefined;

  constructor(
    readonly base: string,
    options: RegistryClientOptions = {},
  ) {
    this.#token = options.token === undefined ? undefined : checkBearerToken(options.token);
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.#transport = new RegistryTransport(base, {
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }

  /** Abort every request still in flight. */
  abortAll(): void {
    this.#transport.abortAll();
  }

  // ── evidence reads: any refusal but the registry's own 404 is FETCH_FAILED ──

  async getBytes(path: string): Promise<Uint8Array> {
    const answer = await this.#transport.exchange({
      method: 'GET',
      path,
      headers: { Accept: 'application/json, application/jose+json, text/plain' },
      limitFor: (status) => (isSuccess(status) ? this.#maxBytes : MAX_PROBLEM_BYTES),
    });
    if (!isSuccess(answer.status)) throw evidenceRefusal(path, answer.status, answer.bytes);
    return answer.bytes;
  }

  async getText(path: string): Promise<string> {
    const bytes = await this.getBytes(path);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (cause) {
      throw new ToolsealError('FETCH_FAILED', `${path} is not UTF-8 text`, { cause });
    }
  }

  async getJson(path: string): Promise<JsonValue> {
    return this.#parse(path, await this.getBytes(path));
  }

  /** The registry's attestation keys (GET /.well-known/jwks.json), as a JWKS; not yet filtered for use. */
  async jwks(): Promise<Jwks> {
    const value = await this.getJson(ROUTES.jwks);
    if (!isJsonObject(value) || !Array.isArray(value['keys'])) {
      throw new ToolsealError('FETCH_FAILED', 'the registry JWKS is not {"keys": [...]}');
    }
    return value as unknown as Jwks;
  }

  /** The registry's log key (GET /v1/log/key): a C2SP note verifier string. */
  async logKey(): Promise<string> {
    const key = (await this.getText(ROUTES.logKey)).trim();
    try {
      parseVerifierString(key);
    } catch (cause) {
      throw new ToolsealError('FETCH_FAILED', 'the registry log key is not a note verifier string', { cause });
    }
    return key;
  }

  // ── calls: the registry's own refusal codes are relayed ──

  /** One call with this client's token; a 2xx answer must be a strict JSON object. */
  async call(method: 'GET' | 'POST', path: string, body?: Uint8Array): Promise<CallAnswer> {
    const answer = await this.#send(method, path, body);
    if (!isSuccess(answer.status)) throw relayedRefusal(path, answer.status, answer.bytes);
    const value = this.#parse(path, answer.bytes);
    if (!isJsonObject(value)) throw new ToolsealError('FETCH_FAILED', `${path}: the answer is not a JSON object`);
    return { status: answer.status, value, header: answer.header };
  }

  /**
   * Publish the manifest `bytes` (POST /v1/manifests) and return the registry's answer, checked for shape. A 503
   * SERVER_BUSY (the registry wrote nothing) is retried as `busy` says; after the last, SERVER_BUSY is thrown.
   */
  async publish(bytes: Uint8Array, busy: BusyRetry = {}): Promise<PublishAnswer> {
    const retries = busy.retries ?? 4;
    for (let attempt = 0; ; attempt++) {
      const answer = await this.#send('POST', ROUTES.manifests, bytes);
      if (isSuccess(answer.status)) {
        const value = this.#parse(ROUTES.manifests, answer.bytes);
        return readPublishAnswer(value, answer.status);
      }
      const refusal = relayedRefusal(ROUTES.manifests, answer.status, answer.bytes);
      if (refusal.code !== 'SERVER_BUSY' || answer.status !== 503 || attempt >= retries) throw refusal;
      const delay = busyDelay(answer, attempt, busy);
      busy.onRetry?.(attempt + 1, delay);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** Yank name@version as its publisher; the answer must be exactly that version, now yanked. */
  async yank(name: string, version: string, reason: string): Promise<YankResponse> {
    const path = yankPath(name, version);
    const { value } = await this.call('POST', path, new TextEncoder().encode(JSON.stringify({ reason })));
    return readYankAnswer(value, name, version);
  }

  async #send(method: 'GET' | 'POST', path: string, body?: Uint8Array): Promise<ExchangeAnswer> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.#token !== undefined) headers['Authorization'] = `Bearer ${this.#token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    return await this.#transport.exchange({
      method,
      path,
      headers,
      ...(body === undefined ? {} : { body }),
      limitFor: (status) => (isSuccess(status) ? this.#maxBytes : MAX_PROBLEM_BYTES),
    });
  }

  #parse(path: string, bytes: Uint8Array): JsonValue {
    try {
      return parseStrict(bytes, { ...SIGNED_MANIFEST_PARSE_LIMITS, maxBytes: this.#maxBytes }).value;
    } catch (cause) {
      throw new ToolsealError('FETCH_FAILED', `${path}: the answer is not strict JSON`, { cause });
    }
  }
}

function isSuccess(status: number): boolean {
  return status >= 200 && status <= 299;
}

/** A refused read. Only a 404 NOT_FOUND is passed through; no server can make a host emit a verification code. */
function evidenceRefusal(path: string, status: number, body: Uint8Array): ToolsealError {
  const { code, detail } = readProblem(body);
  const text = detail === undefined ? '' : `: ${detail}`;
  if (status === 404 && code === 'NOT_FOUND') return new ToolsealError('NOT_FOUND', `${path}: not found${text}`);
  return new ToolsealError('FETCH_FAILED', `${path}: HTTP ${status}${code === undefined ? '' : ` ${code}`}${text}`);
}

/** A refused call: its code and pointer when it is a code a registry may refuse with, else FETCH_FAILED. */
function relayedRefusal(path: string, status: number, body: Uint8Array): ToolsealError {
  const { code: claimed, detail, pointer } = readProblem(body);
  const code: ErrorCode = claimed !== undefined && isRegistryRefusalCode(claimed) ? claimed : 'FETCH_FAILED';
  const prefix = claimed !== undefined && claimed !== code ? `${claimed}: ` : '';
  return new ToolsealError(
    code,
    `${path}: ${prefix}${detail ?? `HTTP ${status}`}`,
    pointer === undefined || code === 'FETCH_FAILED' ? undefined : { pointer },
  );
}

/** The wait before retry `attempt + 1`: Retry-After (delay-seconds or an HTTP-date) when given, else backoff. */
function busyDelay(answer: ExchangeAnswer, attempt: number, busy: BusyRetry): number {
  const max = busy.maxDelayMs ?? 10_000;
  const backoff = (busy.baseDelayMs ?? 250) * 2 ** attempt;
  const retryAfter = answer.header('retry-after')?.trim();
  let asked: number | undefined;
  if (retryAfter !== undefined && /^\d+$/.test(retryAfter)) asked = Number(retryAfter) * 1000;
  else if (retryAfter !== undefined && !Number.isNaN(Date.parse(retryAfter)))
    asked = Math.max(0, Date.parse(retryAfter) - Date.now());
  // Jitter (up to a quarter) spreads clients that were refused together.
  const chosen = Math.max(asked ?? 0, backoff);
  return Math.min(max, Math.round(chosen * (1 + Math.random() / 4)));
}

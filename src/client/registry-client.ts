// The registry HTTP client: bounded, timed GETs against one registry (used by verify, audit and guard).
// Never follows redirects (immutable URLs do not move); every response is read within a byte limit; a non-2xx
// answer is FETCH_FAILED (or NOT_FOUND for the registry's own 404), never a code the server chose.

import { ToolsealError } from '../core/errors.ts';
import type { JsonValue } from '../core/json.ts';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../pipeline/limits.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { readProblem } from '../protocol/problem.ts';
import { readStreamWithin } from '../core/stream.ts';

/** Largest response accepted from a registry (bytes). */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Each request (headers and body) must complete within this many milliseconds. */
export const DEFAULT_TIMEOUT_MS = 10_000;

export interface RegistryClientOptions {
  /** Per-request timeout in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Largest response accepted, in bytes (default 8 MiB). */
  maxResponseBytes?: number;
  /** Abort everything. */
  signal?: AbortSignal;
  /** The fetch implementation (default globalThis.fetch). */
  fetch?: typeof fetch;
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

/** Bounded, timed GETs against one registry. Never follows redirects (immutable URLs do not move). */
export class RegistryClient {
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly inFlight = new Set<AbortController>();

  constructor(
    readonly base: string,
    private readonly options: RegistryClientOptions = {},
  ) {
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /** Abort every request still in flight. */
  abortAll(): void {
    for (const controller of this.inFlight) controller.abort();
    this.inFlight.clear();
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
    const bytes = await this.getBytes(path);
    try {
      return parseStrict(bytes, { ...SIGNED_MANIFEST_PARSE_LIMITS, maxBytes: this.maxBytes }).value;
    } catch (cause) {
      throw new ToolsealError('FETCH_FAILED', `${path} is not strict JSON`, { cause });
    }
  }

  async getBytes(path: string): Promise<Uint8Array> {
    const url = `${this.base}${path}`;
    const controller = new AbortController();
    this.inFlight.add(controller);
    const onAbort = (): void => controller.abort(this.options.signal?.reason);
    if (this.options.signal?.aborted) onAbort();
    this.options.signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    try {
      let response: Response;
      try {
        response = await this.fetchImpl(url, {
          signal: controller.signal,
          redirect: 'error',
          headers: { Accept: 'application/json, application/jose+json, text/plain' },
        });
      } catch (cause) {
        throw this.transportError(path, timedOut, cause);
      }
      if (!response.ok) {
        const problem = await this.readBody(response, 64 * 1024, path, () => timedOut).catch(() => new Uint8Array());
        throw problemError(path, response.status, problem);
      }
      const declared = Number(response.headers.get('content-length'));
      if (Number.isFinite(declared) && declared > this.maxBytes) {
        controller.abort();
        throw new ToolsealError(
          'FETCH_FAILED',
          `${path}: the response is ${declared} bytes, over the ${this.maxBytes}-byte limit`,
        );
      }
      return await this.readBody(response, this.maxBytes, path, () => timedOut);
    } finally {
      clearTimeout(timer);
      this.inFlight.delete(controller);
      this.options.signal?.removeEventListener('abort', onAbort);
      if (!controller.signal.aborted) controller.abort(); // release the connection of any unread body
    }
  }

  private async readBody(
    response: Response,
    limit: number,
    path: string,
    timedOut: () => boolean,
  ): Promise<Uint8Array> {
    try {
      return await readStreamWithin(
        response.body,
        limit,
        () => new ToolsealError('FETCH_FAILED', `${path}: the response exceeds the ${limit}-byte limit`),
      );
    } catch (cause) {
      if (cause instanceof ToolsealError) throw cause;
      throw this.transportError(path, timedOut(), cause);
    }
  }

  private transportError(path: string, timedOut: boolean, cause: unknown): ToolsealError {
    if (timedOut)
      return new ToolsealError('FETCH_FAILED', `${path}: no complete response within ${this.timeoutMs} ms`, { cause });
    if (this.options.signal?.aborted) return new ToolsealError('FETCH_FAILED', `${path}: aborted`, { cause });
    return new ToolsealError('FETCH_FAILED', `could not fetch ${path} from ${this.base}`, { cause });
  }
}

/** A non-2xx answer. Only a 404 NOT_FOUND is passed through; no server can make a host emit a verification code. */
function problemError(path: string, status: number, body: Uint8Array): ToolsealError {
  const { code, detail } = readProblem(body);
  const text = detail === undefined ? '' : `: ${detail}`;
  if (status === 404 && code === 'NOT_FOUND') return new ToolsealError('NOT_FOUND', `${path}: not found${text}`);
  return new ToolsealError('FETCH_FAILED', `${path}: HTTP ${status}${code === undefined ? '' : ` ${code}`}${text}`);
}

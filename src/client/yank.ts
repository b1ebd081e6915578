// POST /v1/manifests/{namespace}/{name}/{version}/yank as a publisher (Bearer token, RFC 6750 §2.1): the one write a
// client makes. Timed, bounded, never following a redirect. A refusal keeps the registry's own refusal code; a
// verification code a server claims, or an answer that is not about the version asked for, is FETCH_FAILED.

import { isSha256Digest } from '../core/digest.ts';
import { type ErrorCode, ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject } from '../core/json.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { isRegistryRefusalCode, readProblem } from '../protocol/problem.ts';
import { yankPath } from '../protocol/routes.ts';
import type { YankResponse } from '../protocol/wire.ts';
import { DEFAULT_TIMEOUT_MS } from './registry-client.ts';

/** Largest yank answer read (a problem or a YankResponse is far smaller). */
const MAX_YANK_RESPONSE_BYTES = 64 * 1024;

export interface YankOptions {
  token: string;
  reason: string;
  /** Timeout for the whole request in milliseconds (default 10 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Yank name@version on the registry at `base` (no trailing slash) and return its answer, checked. */
export async function requestYank(
  base: string,
  name: string,
  version: string,
  options: YankOptions,
): Promise<YankResponse> {
  const url = `${base}${yankPath(name, version)}`;
  const signal = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  let status: number;
  let body: Uint8Array;
  try {
    const response = await (options.fetch ?? globalThis.fetch)(url, {
      method: 'POST',
      body: JSON.stringify({ reason: options.reason }),
      headers: { Authorization: `Bearer ${options.token}`, 'Content-Type': 'application/json' },
      redirect: 'error',
      signal,
    });
    status = response.status;
    body = await readBounded(response);
  } catch (cause) {
    if (cause instanceof ToolsealError) throw cause;
    throw new ToolsealError('FETCH_FAILED', `could not reach ${new URL(url).origin}`, { cause });
  }
  if (status < 200 || status > 299) throw refusalOf(status, body);
  return checkYankResponse(body, name, version);
}

async function readBounded(response: Response): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  for (;;) {
    const next = await reader?.read();
    if (!next || next.done) break;
    total += next.value.byteLength;
    if (total > MAX_YANK_RESPONSE_BYTES) {
      await reader?.cancel().catch(() => undefined);
      throw new ToolsealError('FETCH_FAILED', `the yank answer exceeds ${MAX_YANK_RESPONSE_BYTES} bytes`);
    }
    chunks.push(next.value);
  }
  return Buffer.concat(chunks, total);
}

/** The registry's refusal as the error to report: its code when it is one a registry may refuse with. */
function refusalOf(status: number, body: Uint8Array): ToolsealError {
  const { code: claimed, detail, pointer } = readProblem(body);
  const code: ErrorCode = claimed !== undefined && isRegistryRefusalCode(claimed) ? claimed : 'FETCH_FAILED';
  const prefix = claimed !== undefined && claimed !== code ? `${claimed}: ` : '';
  return new ToolsealError(
    code,
    `registry refused the yank: ${prefix}${detail ?? `HTTP ${status}`}`,
    pointer === undefined ? undefined : { pointer },
  );
}

/** A 2xx answer must be a YankResponse for exactly name@version, now yanked. */
function checkYankResponse(body: Uint8Array, name: string, version: string): YankResponse {
  let parsed: unknown;
  try {
    parsed = parseStrict(body).value;
  } catch (cause) {
    throw new ToolsealError('FETCH_FAILED', 'the yank answer is not strict JSON', { cause });
  }
  const answer: JsonObject = isJsonObject(parsed) ? parsed : {};
  const { digest, yankReason, yankedAt, yankLogIndex, alreadyYanked, requestedReason } = answer;
  if (
    answer['name'] !== name ||
    answer['version'] !== version ||
    answer['status'] !== 'yanked' ||
    !isSha256Digest(digest) ||
    typeof yankReason !== 'string' ||
    typeof yankedAt !== 'string' ||
    typeof yankLogIndex !== 'number' ||
    !Number.isSafeInteger(yankLogIndex) ||
    (alreadyYanked !== undefined && typeof alreadyYanked !== 'boolean') ||
    (requestedReason !== undefined && typeof requestedReason !== 'string')
  ) {
    throw new ToolsealError('FETCH_FAILED', `the registry's answer is not a yank of ${name}@${version}`);
  }
  return {
    name,
    version,
    digest,
    status: 'yanked',
    yankReason,
    yankedAt,
    yankLogIndex,
    ...(alreadyYanked === undefined ? {} : { alreadyYanked }),
    ...(requestedReason === undefined ? {} : { requestedReason }),
  };
}

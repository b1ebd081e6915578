// RFC 9457 problem details as toolseal's HTTP API sends them, and how a client reads one without trusting it.

import { type ErrorCode, isErrorCode } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** RFC 9457 §3.1 members, plus our stable `code` and (RFC 6901) `pointer`. */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  pointer?: string;
}

/** The problem `type` URI of a code: `https://toolseal.dev/problems/<code in kebab case>`. */
export function problemTypeOf(code: ErrorCode): string {
  return `https://toolseal.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`;
}

/**
 * Codes a registry never sends: the verdicts only a verifier reaches about a registry's evidence, and the command
 * line's own. A client never relays one of these from a server's answer: no registry can make a host (or
 * `toolseal publish`) report a verification code.
 */
export const CLIENT_SIDE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'SIGNATURE_INVALID',
  'SUBJECT_MISMATCH',
  'UNKNOWN_KEY',
  'KEY_NOT_VALID',
  'NOT_IN_LOG',
  'PIN_MISMATCH',
  'DISPATCH_MISMATCH',
  'DIGEST_MISMATCH',
  'FETCH_FAILED',
  'VERSION_YANKED',
  'FILE_NOT_FOUND',
]);

/** A code a registry may refuse with (pipeline, auth, conflicts…), and so one a client may relay as is. */
export function isRegistryRefusalCode(code: unknown): code is ErrorCode {
  return isErrorCode(code) && !CLIENT_SIDE_CODES.has(code);
}

/** What a client takes from a non-2xx body: strings only, each bounded; never throws. */
export interface ReadProblem {
  code: string | undefined;
  detail: string | undefined;
  pointer: string | undefined;
}

/** Read a problem body leniently (it may be anything: a proxy's HTML, truncated JSON). */
export function readProblem(body: Uint8Array): ReadProblem {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    parsed = undefined;
  }
  const text = (key: string, limit: number): string | undefined => {
    const value = isJsonObject(parsed) ? parsed[key] : undefined;
    return typeof value === 'string' ? value.slice(0, limit) : undefined;
  };
  return { code: text('code', 40), detail: text('detail', 200), pointer: text('pointer', 1000) };
}

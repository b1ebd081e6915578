// RFC 9457 problem details as toolseal's HTTP API sends them, and how a client reads one without trusting it.

import { type ErrorCode, isErrorCode } from '../core/errors.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import { parseStrict } from '../pipeline/parse.ts';

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
  'KEY_NOT_PINNED',
  'FILE_NOT_FOUND',
  'NO_REGISTRY',
]);

/** A code a registry may refuse with (pipeline, auth, conflicts…), and so one a client may relay as is. */
export function isRegistryRefusalCode(code: unknown): code is ErrorCode {
  return isErrorCode(code) && !CLIENT_SIDE_CODES.has(code);
}

/** What a client takes from a non-2xx body: strings only, never throws. */
export interface ReadProblem {
  code: string | undefined;
  /** The whole detail: never cut short (the body itself is read within a byte limit). */
  detail: string | undefined;
  pointer: string | undefined;
}

/**
 * Read a problem body once, with the strict parser (a duplicated `code` is no code), leniently: it may be anything
 * (a proxy's HTML, truncated JSON), and then has no code, detail or pointer. A code longer than any of ours is none.
 */
export function readProblem(body: Uint8Array): ReadProblem {
  let parsed: JsonValue | undefined;
  try {
    parsed = parseStrict(body).value;
  } catch {
    parsed = undefined;
  }
  const text = (key: string): string | undefined => {
    const value = isJsonObject(parsed) ? parsed[key] : undefined;
    return typeof value === 'string' ? value : undefined;
  };
  const code = text('code');
  return {
    code: code !== undefined && code.length <= 40 ? code : undefined,
    detail: text('detail'),
    pointer: text('pointer'),
  };
}

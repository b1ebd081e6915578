// RFC 9457 problem details: every refusal as application/problem+json with our stable `code` and, where it applies,
// the JSON `pointer`. The code → HTTP status table lives here, with HTTP, and nowhere else.

import type { Context } from 'hono';
import type { ErrorCode } from '../core/errors.ts';
import { PROBLEM_CONTENT_TYPE, problemTypeOf, type ProblemDocument } from '../protocol/problem.ts';

/** HTTP status for each code; `satisfies` makes a missing mapping a compile error. */
export const httpStatusByCode = {
  INVALID_JSON: 422,
  INVALID_UTF8: 422,
  DUPLICATE_KEY: 422,
  LONE_SURROGATE: 422,
  UNSAFE_NUMBER: 422,
  DEPTH_LIMIT: 422,
  TOO_LARGE: 413,
  INVALID_MANIFEST: 422,
  UNKNOWN_FIELD: 422,
  RESERVED_KEY: 422,
  EXTERNAL_REF: 422,
  UNSUPPORTED_REF: 422,
  CIRCULAR_REF: 422,
  MISSING_REF: 422,
  REF_SIBLINGS: 422,
  EXPANSION_LIMIT: 422,
  NAME_COLLISION: 422,
  NOT_NFC: 422,
  HIDDEN_CHARACTER: 422,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VERSION_EXISTS: 409,
  NAMESPACE_TAKEN: 409,
  METHOD_NOT_ALLOWED: 405,
  DIGEST_MISMATCH: 409,
  BAD_REQUEST: 400,
  INTEGRITY_ERROR: 500,
  INTERNAL: 500,
  STORAGE_FULL: 507,
  DATA_DIR_LOCKED: 409,
  STORAGE_UNAVAILABLE: 503,
  SEQUENCER_UNAVAILABLE: 503,
  SERVER_BUSY: 503,
  HEADERS_TOO_LARGE: 431,
  REQUEST_TIMEOUT: 408,
  LOG_INCONSISTENT: 500,
  LOG_ROLLBACK: 500,
  PROOF_INVALID: 400,
  WITNESS_QUORUM: 502,
  SIGNATURE_INVALID: 502,
  SUBJECT_MISMATCH: 502,
  UNKNOWN_KEY: 502,
  KEY_NOT_VALID: 502,
  NOT_IN_LOG: 502,
  PIN_MISMATCH: 502,
  DISPATCH_MISMATCH: 422,
  FETCH_FAILED: 502,
  VERSION_YANKED: 409,
  KEY_NOT_PINNED: 502,
  PUBLISHER_MISMATCH: 502,
  SERVER_NOT_SIGNED: 422,
  ARGUMENTS_INVALID: 422,
  MONEY_INVALID: 422,
  MONEY_CEILING_EXCEEDED: 422,
  APPROVAL_DIGEST_MISMATCH: 409,
  APPROVAL_PENDING: 409,
  APPROVAL_DENIED: 403,
  APPROVAL_CONSUMED: 409,
  APPROVAL_EXPIRED: 410,
  APPROVAL_DECIDED: 409,
  APPROVAL_REQUIRED: 403,
  FILE_NOT_FOUND: 404,
  NO_REGISTRY: 404,
} as const satisfies Record<ErrorCode, number>;

/** The problem response for `code` (RFC 9457 §3: type, title, status, detail; plus code and pointer). */
export function respondWithProblem(c: Context, code: ErrorCode, detail: string, pointer?: string): Response {
  const { status, text } = formatProblem(code, detail, pointer);
  // A busy registry says when to ask again (RFC 9110 §10.2.3): it wrote nothing, so the same request is safe to repeat.
  const headers: Record<string, string> = { 'Content-Type': PROBLEM_CONTENT_TYPE };
  if (code === 'SERVER_BUSY') headers['Retry-After'] = '1';
  return c.body(text, status, headers);
}

/** The problem document for `code` as JSON text, with its HTTP status (for answers written without a Context). */
export function formatProblem(
  code: ErrorCode,
  detail: string,
  pointer?: string,
): { status: (typeof httpStatusByCode)[ErrorCode]; text: string } {
  const status = httpStatusByCode[code];
  const body: ProblemDocument = {
    type: problemTypeOf(code),
    title: code,
    status,
    detail,
    code,
    ...(pointer === undefined ? {} : { pointer }),
  };
  return { status, text: JSON.stringify(body) };
}

// One error type for the whole registry: a stable string code, a message, and a JSON pointer where one applies.

/** Every code the registry can answer with. Codes are API: never rename one, only add. */
export type ErrorCode =
  // strict parse (pipeline stage 1)
  | 'INVALID_JSON'
  | 'INVALID_UTF8'
  | 'DUPLICATE_KEY'
  | 'LONE_SURROGATE'
  | 'UNSAFE_NUMBER'
  | 'DEPTH_LIMIT'
  | 'TOO_LARGE'
  // closed envelope (stage 2)
  | 'INVALID_MANIFEST'
  | 'UNKNOWN_FIELD'
  | 'RESERVED_KEY'
  // refs (stage 3)
  | 'EXTERNAL_REF'
  | 'UNSUPPORTED_REF'
  | 'CIRCULAR_REF'
  | 'MISSING_REF'
  | 'REF_SIBLINGS'
  | 'EXPANSION_LIMIT'
  // names (stage 4)
  | 'NAME_COLLISION'
  | 'NOT_NFC'
  // registry
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'VERSION_EXISTS'
  | 'NAMESPACE_TAKEN'
  | 'METHOD_NOT_ALLOWED'
  | 'DIGEST_MISMATCH'
  | 'BAD_REQUEST'
  | 'INTEGRITY_ERROR'
  | 'INTERNAL'
  // log
  | 'LOG_INCONSISTENT'
  | 'PROOF_INVALID'
  // host verification
  | 'SIGNATURE_INVALID'
  | 'SUBJECT_MISMATCH'
  | 'UNKNOWN_KEY'
  | 'KEY_NOT_VALID'
  | 'NOT_IN_LOG'
  | 'PIN_MISMATCH'
  | 'DISPATCH_MISMATCH'
  | 'FETCH_FAILED';

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
  LOG_INCONSISTENT: 500,
  PROOF_INVALID: 400,
  SIGNATURE_INVALID: 502,
  SUBJECT_MISMATCH: 502,
  UNKNOWN_KEY: 502,
  KEY_NOT_VALID: 502,
  NOT_IN_LOG: 502,
  PIN_MISMATCH: 502,
  DISPATCH_MISMATCH: 422,
  FETCH_FAILED: 502,
} as const satisfies Record<ErrorCode, number>;

export interface ErrorJson {
  code: ErrorCode;
  message: string;
  pointer?: string;
}

export class ToolsealError extends Error {
  override readonly name = 'ToolsealError';
  readonly code: ErrorCode;
  readonly pointer: string | undefined;

  constructor(code: ErrorCode, message: string, options?: { pointer?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.pointer = options?.pointer;
  }

  /** The public form: never includes the cause, whose text may carry server paths. */
  toJSON(): ErrorJson {
    return this.pointer === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, pointer: this.pointer };
  }
}

export function isToolsealError(value: unknown): value is ToolsealError {
  return value instanceof ToolsealError;
}

/** RFC 6901 §3: encode one reference token. */
export function escapePointerToken(token: string | number): string {
  const text = String(token);
  return text.includes('~') || text.includes('/') ? text.replace(/~/g, '~0').replace(/\//g, '~1') : text;
}

/** RFC 6901: build a pointer from tokens ("" is the whole document). */
export function formatPointer(tokens: readonly (string | number)[]): string {
  let pointer = '';
  for (const token of tokens) pointer += '/' + escapePointerToken(token);
  return pointer;
}

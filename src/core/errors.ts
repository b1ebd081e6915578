// One error type for every part of toolseal: a stable string code, a message, and a JSON pointer (RFC 6901) where one applies.
// No transport here: the code → HTTP status table lives with HTTP (src/http/problem.ts).

/** Every code toolseal can refuse with. Codes are API: never rename one, only add. */
export const ERROR_CODES = [
  // strict parse (pipeline stage 1)
  'INVALID_JSON',
  'INVALID_UTF8',
  'DUPLICATE_KEY',
  'LONE_SURROGATE',
  'UNSAFE_NUMBER',
  'DEPTH_LIMIT',
  'TOO_LARGE',
  // closed envelope (stage 2)
  'INVALID_MANIFEST',
  'UNKNOWN_FIELD',
  'RESERVED_KEY',
  // refs (stage 3)
  'EXTERNAL_REF',
  'UNSUPPORTED_REF',
  'CIRCULAR_REF',
  'MISSING_REF',
  'REF_SIBLINGS',
  'EXPANSION_LIMIT',
  // names (stage 4)
  'NAME_COLLISION',
  'NOT_NFC',
  'HIDDEN_CHARACTER',
  // registry
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'VERSION_EXISTS',
  'NAMESPACE_TAKEN',
  'METHOD_NOT_ALLOWED',
  'DIGEST_MISMATCH',
  'BAD_REQUEST',
  'INTEGRITY_ERROR',
  'INTERNAL',
  'STORAGE_FULL',
  'DATA_DIR_LOCKED',
  'STORAGE_UNAVAILABLE',
  // several processes on one database (issue 16 §2): no process sequenced the write in time; nothing was written
  'SEQUENCER_UNAVAILABLE',
  // backpressure (issue 24 §3): too many writes in flight; nothing was written, retry after Retry-After
  'SERVER_BUSY',
  // HTTP transport: refused by the server's HTTP parser before any route runs
  'HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
  // log
  'LOG_INCONSISTENT',
  // the database's log is shorter than, or differs from, the checkpoint the registry last signed (issue 25 §1)
  'LOG_ROLLBACK',
  'PROOF_INVALID',
  // witnesses (C2SP tlog-witness, tlog-policy): a checkpoint without the policy's quorum of cosignatures
  'WITNESS_QUORUM',
  // host verification
  'SIGNATURE_INVALID',
  'SUBJECT_MISMATCH',
  'UNKNOWN_KEY',
  'KEY_NOT_VALID',
  'NOT_IN_LOG',
  'PIN_MISMATCH',
  'DISPATCH_MISMATCH',
  'FETCH_FAILED',
  'VERSION_YANKED',
  // a registry's signing keys or log key are not the ones the lockfile pinned (issue 23 §6)
  'KEY_NOT_PINNED',
  // the attestation's provenance does not carry the publisher claims the host requires (issue 28 §3)
  'PUBLISHER_MISMATCH',
  // call arguments and action digests (dispatch)
  'ARGUMENTS_INVALID',
  'MONEY_INVALID',
  'MONEY_CEILING_EXCEEDED',
  // approvals (the registry's approval service; guard)
  'APPROVAL_DIGEST_MISMATCH',
  'APPROVAL_PENDING',
  'APPROVAL_DENIED',
  'APPROVAL_CONSUMED',
  'APPROVAL_EXPIRED',
  'APPROVAL_DECIDED',
  'APPROVAL_REQUIRED',
  // guard was given a server (upstream URL, command) the manifest's signed `server` member does not name (issue 27 §2)
  'SERVER_NOT_SIGNED',
  // command line
  'FILE_NOT_FOUND',
  // a --data folder that holds no registry (only serve and migrate create one)
  'NO_REGISTRY',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const errorCodes: ReadonlySet<string> = new Set(ERROR_CODES);

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && errorCodes.has(value);
}

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

/** An error as one line for a report or a finding: `CODE: message` for a ToolsealError, else its message. */
export function describeError(error: unknown): string {
  if (error instanceof ToolsealError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** Anything thrown, as an Error (a thrown string or object becomes an Error with its text). */
export function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

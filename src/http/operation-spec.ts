// The shape of an entry of the API's route table (operations.ts; OpenAPI 3.1 §4.8.10 Operation) and the problem
// codes routes share, grouped from the ERROR_CODES table by where they come from (statuses: src/http/problem.ts).

import { ERROR_CODES, type ErrorCode } from '../core/errors.ts';

/** A named schema of the document's components (src/http/openapi.ts), or an inline JSON Schema. */
export type SchemaSpec = ComponentName | { readonly inline: Readonly<Record<string, unknown>> };
export type ComponentName =
  | 'Manifest'
  | 'Problem'
  | 'FlattenedJws'
  | 'PublishResponse'
  | 'ManifestListResponse'
  | 'VersionListResponse'
  | 'YankRequest'
  | 'YankResponse'
  | 'BindingsResponse'
  | 'HealthResponse'
  | 'Jwks'
  | 'InclusionProofResponse'
  | 'ConsistencyProofResponse'
  | 'WhoamiResponse'
  | 'ActionEnvelope'
  | 'ApprovalCreatedResponse'
  | 'ApprovalResponse'
  | 'ApprovalListResponse'
  | 'ApprovalDecisionRequest'
  | 'ApprovalTransitionResponse'
  | 'OfficialServerList'
  | 'OfficialServerResponse'
  | 'OfficialNotFound'
  | 'OpenApiDocument';

export interface ParameterSpec {
  readonly description: string;
  /** JSON Schema of the value (path parameters with a Hono regex get its pattern added). */
  readonly schema?: Readonly<Record<string, unknown>>;
  /** A query parameter the route refuses to go without (BAD_REQUEST). */
  readonly required?: boolean;
}

export interface AnswerSpec {
  readonly description: string;
  /** Media type → schema; absent for an answer without a body (302, 304, 204). */
  readonly content?: Readonly<Record<string, SchemaSpec>>;
  /** Response headers always sent with this answer (name → description). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Who may call: a bearer token of that principal kind (RFC 6750 §2.1), or anyone. */
export type Caller = 'anyone' | 'publisher' | 'operator' | 'host' | 'host or operator' | 'any principal';

export interface OperationSpec {
  readonly method: 'get' | 'post';
  /** The Hono pattern, from ROUTES: `:name`, `:name{regex}`, and one trailing `*`. */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly tag: 'registry' | 'log' | 'approvals' | 'mcp-registry' | 'meta';
  readonly caller: Caller;
  /** Path parameters by name (every `:name` of the pattern; `*` is named by `wildcard`). */
  readonly pathParams?: Readonly<Record<string, ParameterSpec>>;
  readonly wildcard?: { readonly name: string } & ParameterSpec;
  readonly query?: Readonly<Record<string, ParameterSpec>>;
  /** Read as exact bytes (src/http/body.ts), never through a JSON parser that forgives: this only describes it. */
  readonly body?: { readonly description: string; readonly maxBytes?: number; readonly schema: SchemaSpec };
  /** Success and other non-problem answers by status. */
  readonly answers: Readonly<Record<number, AnswerSpec>>;
  /**
   * The codes its own work can refuse with (application/problem+json; the status from src/http/problem.ts). The
   * document adds EVERY_ROUTE_CODES to each operation.
   */
  readonly problems: readonly ErrorCode[];
  /** CORS headers and an OPTIONS preflight answered 204 (the /v0.1 routes). */
  readonly cors?: boolean;
}

// ── problem codes, by where they come from ──

/** The codes of the ERROR_CODES table from `first` to `last` (one stage's codes are listed together there). */
function codesFrom(first: ErrorCode, last: ErrorCode): ErrorCode[] {
  return ERROR_CODES.slice(ERROR_CODES.indexOf(first), ERROR_CODES.indexOf(last) + 1);
}

/**
 * What any request can get before or beside its route: the HTTP parser's refusals, a fault, a store that cannot be
 * reached, and a stored row that fails its check (every read of stored bytes checks them, INTEGRITY_ERROR).
 */
export const EVERY_ROUTE_CODES: readonly ErrorCode[] = [
  'BAD_REQUEST',
  'HEADERS_TOO_LARGE',
  'REQUEST_TIMEOUT',
  'INTERNAL',
  'INTEGRITY_ERROR',
  'STORAGE_UNAVAILABLE',
];
/** The strict parse of a JSON body (pipeline stage 1, TOO_LARGE included). */
export const STRICT_PARSE_CODES = codesFrom('INVALID_JSON', 'TOO_LARGE');
/** The whole publish pipeline: parse, envelope, refs, names. */
export const PIPELINE_CODES = codesFrom('INVALID_JSON', 'HIDDEN_CHARACTER');
export const AUTH_CODES: readonly ErrorCode[] = ['UNAUTHENTICATED', 'FORBIDDEN'];
/** A write that goes through admission, the sequencer and the log. */
export const WRITE_CODES: readonly ErrorCode[] = [
  'SERVER_BUSY',
  'SEQUENCER_UNAVAILABLE',
  'STORAGE_FULL',
  'LOG_INCONSISTENT',
  'LOG_ROLLBACK',
];
/** An action envelope recomputed against the signed tool (docs/approvals.md). */
export const ENVELOPE_CODES: readonly ErrorCode[] = [
  ...STRICT_PARSE_CODES,
  'UNKNOWN_FIELD',
  'NOT_FOUND',
  'VERSION_YANKED',
  'DIGEST_MISMATCH',
  'ARGUMENTS_INVALID',
  'MONEY_INVALID',
  'MONEY_CEILING_EXCEEDED',
];

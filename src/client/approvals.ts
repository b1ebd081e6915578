// The approvals client (issue 13 §3, docs/approvals.md): a host's guard asks for and consumes approvals, an operator
// lists and decides them, each with a Bearer token (RFC 6750 §2.1), through the one registry client
// (./registry-client.ts: timed, bounded, never following a redirect, node:http(s) keep-alive unless a fetch is given;
// issue 13 §5: a consumption is on the path of every approved call). Answers are shape-checked here (anything else
// is FETCH_FAILED); a refusal keeps the registry's own code and pointer. The token is never echoed.

import { isSha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { APPROVAL_ID_PATTERN } from '../log/entries.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
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
import { checkBearerToken, normaliseRegistryUrl, RegistryClient } from './registry-client.ts';

export { APPROVAL_ID_PATTERN };

export interface ApprovalsClientOptions {
  /** The registry's base URL (http or https, no query, fragment or credentials). */
  registry: string;
  /** A host token (request, get, consume, whoami) or an operator token (list, get, decide, whoami). */
  token: string;
  /** A fetch to send requests with (default: node:http(s) over a keep-alive connection pool). */
  fetch?: typeof fetch;
  /** Timeout for each whole request, answer included, in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Largest answer accepted, in bytes (default 8 MiB: an approval carries its signed tool). */
  maxResponseBytes?: number;
}

export type ApprovalCreated = ApprovalCreatedResponse & { created: boolean };

export type ApprovalDecision = Omit<ApprovalDecisionRequest, 'digest'> & { digest: string };

/** One registry's approvals API, as one principal. */
export class ApprovalsClient {
  readonly registry: string;
  readonly #client: RegistryClient;

  constructor(options: ApprovalsClientOptions) {
    this.registry = normaliseRegistryUrl(options.registry);
    this.#client = new RegistryClient(this.registry, {
      token: checkBearerToken(options.token),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
    });
  }

  /** The principal the token belongs to (a host's name is the audience of its approvals). */
  async whoami(): Promise<WhoamiResponse> {
    const { value } = await this.#client.call('GET', ROUTES.whoami);
    const { kind, name } = value;
    if ((kind !== 'publisher' && kind !== 'operator' && kind !== 'host') || !isText(name)) {
      throw malformed(ROUTES.whoami, 'a principal');
    }
    return { kind, name };
  }

  /** Ask for an approval of the action envelope (sent as these exact bytes): 201 is a new request, 200 an open one. */
  async request(envelopeBytes: Uint8Array): Promise<ApprovalCreated> {
    const { status, value } = await this.#client.call('POST', ROUTES.approvals, envelopeBytes);
    const created = readCreated(value);
    if ((status !== 200 && status !== 201) || created === undefined) throw malformed(ROUTES.approvals, 'a request');
    return { ...created, created: status === 201 };
  }

  /** One approval request, with its envelope, the signed tool and the material view its digest binds. */
  async get(id: string): Promise<ApprovalResponse> {
    const path = approvalPath(id);
    const { value } = await this.#client.call('GET', path);
    const approval = readApproval(value);
    if (approval === undefined || approval.id !== id) throw malformed(path, `approval ${id}`);
    return approval;
  }

  /** The approval requests (operators), newest first; `status` filters. */
  async list(status?: ApprovalStatus): Promise<ApprovalListResponse> {
    const path = approvalsListPath(status);
    const { value } = await this.#client.call('GET', path);
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
    const { value } = await this.#client.call('POST', path, canonicalizeToBytes(body));
    const want: ApprovalStatus = decision.decision === 'approve' ? 'approved' : 'denied';
    return readTransition(value, path, id, want, decision.digest);
  }

  /** Consume an approved request for the call about to be dispatched (its envelope, these exact bytes). */
  async consume(id: string, envelopeBytes: Uint8Array): Promise<ApprovalTransitionResponse> {
    const path = approvalConsumePath(id);
    const { value } = await this.#client.call('POST', path, envelopeBytes);
    return readTransition(value, path, id, 'consumed');
  }
}

function malformed(path: string, what: string): ToolsealError {
  return new ToolsealError('FETCH_FAILED', `${path}: the registry's answer is not ${what}`);
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

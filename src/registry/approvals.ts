// The approval service (issue 13 §3, docs/approvals.md): a host asks for one exact call of one signed tool, an operator
// approves or denies that digest, and the host consumes the approval once. The registry recomputes every digest itself
// from the envelope and the signed manifest it stores (dispatch/action-request.ts); nothing a client computed is
// trusted. Each decision and consumption is a transparency-log leaf (log/entries.ts) committing to the digest with a
// secret salt, signed into a checkpoint in the same transaction as the state change (as yank.ts does).

import { randomBytes } from 'node:crypto';
import type { Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { formatPointer } from '../core/json-pointer.ts';
import { hasOwn, isJsonObject, type JsonObject } from '../core/json.ts';
import { truncateText } from '../core/text.ts';
import { type Action, selectSignedTool, type SignedTool } from '../dispatch/action-digest.ts';
import { computeActionFromRequest, readActionRequest, type ActionRequest } from '../dispatch/action-request.ts';
import {
  APPROVAL_SALT_BYTES,
  computeApprovalCommitment,
  formatApprovalConsumptionEntry,
  formatApprovalDecisionEntry,
} from '../log/entries.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { formatManifestRef, parseManifestRef } from '../protocol/manifest-ref.ts';
import type {
  ApprovalCreatedResponse,
  ApprovalDecisionRequest,
  ApprovalListResponse,
  ApprovalResponse,
  ApprovalStatus,
  ApprovalTransitionResponse,
} from '../protocol/wire.ts';
import type { ApprovalRecord, PrincipalRecord, Store } from '../store/index.ts';
import { assertPrincipalCurrent } from './principals.ts';
import type { TransparencyLog } from './transparency-log.ts';
import { checkYankReason } from './yank.ts';

/** The most a listing returns. */
export const MAX_APPROVAL_LIST_LIMIT = 500;

export interface ApprovalDeps {
  store: Store;
  log: TransparencyLog;
  clock: () => Date;
  /** The registry's origin, as its attestations record it (an envelope's `registry`). */
  origin: string;
  ttlSeconds: number;
  /** The verified bytes of a stored name@version (NOT_FOUND, INTEGRITY_ERROR). */
  readManifest: (name: string, version: string) => Promise<{ bytes: Uint8Array }>;
}

/** POST /v1/approvals: the request, and whether it is new (201) or an identical open one (200). */
export type ApprovalRequestOutcome = Omit<ApprovalCreatedResponse, 'url'> & { created: boolean };

/** Ask for an approval of the action in `envelopeBytes`, for `host`. */
export async function requestApproval(
  deps: ApprovalDeps,
  host: PrincipalRecord,
  envelopeBytes: Uint8Array,
): Promise<ApprovalRequestOutcome> {
  const { store } = deps;
  const { request, signed, action } = await recomputeAction(deps, host, envelopeBytes);
  return await store.transaction(async () => {
    await assertPrincipalCurrent(store, host);
    const now = deps.clock();
    // An identical request gets the standing one back: pending, approved, or denied (a denial is sticky until it expires).
    const standing = await store.findStandingApproval(host.id, action.digest, now.toISOString());
    if (standing) return { ...describeCreated(standing, now), created: false };
    const { name, version } = splitManifest(request.manifest);
    const row = {
      id: `apr_${randomBytes(16).toString('base64url')}`,
      hostId: host.id,
      audience: host.name,
      manifestName: name,
      manifestVersion: version,
      tool: signed.tool.name,
      digest: action.digest,
      envelope: Buffer.from(envelopeBytes),
      salt: randomBytes(APPROVAL_SALT_BYTES),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + deps.ttlSeconds * 1000).toISOString(),
    };
    await store.insertApproval(row);
    return { id: row.id, digest: action.digest, status: 'pending', expiresAt: row.expiresAt, created: true };
  });
}

/** One request as its host (only its own: another host's is NOT_FOUND) or any operator sees it. */
export async function readApproval(
  deps: ApprovalDeps,
  principal: PrincipalRecord,
  id: string,
): Promise<ApprovalResponse> {
  const record = await findVisible(deps.store, principal, id);
  const envelope = parseStrict(record.envelope).value as JsonObject;
  const request = readActionRequest(record.envelope);
  // The stored envelope's own registry: the digest was bound to it, whatever origin this server has now.
  const signed = await selectStoredTool(deps, record, request.registry);
  const action = computeActionFromRequest(signed, request);
  if (action.digest !== record.digest) {
    throw new ToolsealError('INTEGRITY_ERROR', `approval ${id} no longer recomputes to its digest`);
  }
  return {
    ...describeListed(record, deps.clock()),
    envelope,
    tool: signed.tool as unknown as JsonObject,
    material: action.envelope.arguments as JsonObject,
    commitmentSalt: record.salt.toString('base64url'),
  };
}

/** The operators' listing, newest first, at most `limit` (1..500). */
export async function listApprovals(
  deps: ApprovalDeps,
  status: ApprovalStatus | undefined,
  limit: number,
): Promise<ApprovalListResponse> {
  const now = deps.clock();
  const rows = await deps.store.listApprovals({
    ...(status === undefined ? {} : { status }),
    now: now.toISOString(),
    limit: Math.min(Math.max(limit, 1), MAX_APPROVAL_LIST_LIMIT),
  });
  return { items: rows.map((row) => describeListed(row, now)) };
}

/**
 * An operator's decision on request `id`, from the exact body bytes: NOT_FOUND, APPROVAL_DIGEST_MISMATCH (the operator
 * was shown another digest), APPROVAL_EXPIRED, APPROVAL_DECIDED; else the state, its leaf and a checkpoint at once.
 */
export async function decideApproval(
  deps: ApprovalDeps,
  operator: PrincipalRecord,
  id: string,
  bodyBytes: Uint8Array,
): Promise<ApprovalTransitionResponse> {
  const body = readDecisionRequest(bodyBytes);
  const { store, log } = deps;
  const outcome: ApprovalTransitionResponse = await store.transaction(async () => {
    await assertPrincipalCurrent(store, operator);
    const record = await findVisible(store, operator, id);
    if (body.digest !== record.digest) {
      throw new ToolsealError(
        'APPROVAL_DIGEST_MISMATCH',
        `approval ${id} is for ${record.digest}, not ${truncateText(body.digest, 80)}: the operator was shown another action`,
        { pointer: '/digest' },
      );
    }
    const now = deps.clock();
    refuseUnlessState(record, now, 'pending', 'decide');
    const decidedAt = now.toISOString();
    const leaf = formatApprovalDecisionEntry({
      approval: record.id,
      commitment: computeApprovalCommitment(record.salt, record.digest),
      decision: body.decision,
      operator: operator.name,
      audience: record.audience,
      manifest: formatManifestRef(record.manifestName, record.manifestVersion),
      tool: record.tool,
      decidedAt,
    });
    const logIndex = await log.appendLeaf('approval-decision', leaf);
    const status = body.decision === 'approve' ? 'approved' : 'denied';
    const decision = { status, decidedById: operator.id, decidedAt, reason: body.reason ?? null, logIndex } as const;
    if (!(await store.decideApproval(record.id, decision))) {
      throw new ToolsealError('APPROVAL_DECIDED', `approval ${id} has already been decided`);
    }
    await log.signLatestCheckpoint();
    return { id: record.id, digest: record.digest as Sha256Digest, status, logIndex };
  });
  await log.recordLatestCheckpoint();
  return outcome;
}

/**
 * The host consumes approval `id` for the call it is about to dispatch: everything is recomputed from `envelopeBytes`
 * as for a request; NOT_FOUND, APPROVAL_DIGEST_MISMATCH, then APPROVAL_CONSUMED, APPROVAL_DENIED, APPROVAL_EXPIRED,
 * APPROVAL_PENDING; else consumed, with its leaf and a checkpoint, in one transaction (of concurrent consumes one wins).
 */
export async function consumeApproval(
  deps: ApprovalDeps,
  host: PrincipalRecord,
  id: string,
  envelopeBytes: Uint8Array,
): Promise<ApprovalTransitionResponse> {
  const { store, log } = deps;
  await findVisible(store, host, id);
  const { action } = await recomputeAction(deps, host, envelopeBytes);
  const outcome: ApprovalTransitionResponse = await store.transaction(async () => {
    await assertPrincipalCurrent(store, host);
    const record = await findVisible(store, host, id);
    if (action.digest !== record.digest) {
      throw new ToolsealError(
        'APPROVAL_DIGEST_MISMATCH',
        `approval ${id} is for ${record.digest}; this call is ${action.digest}: it was not approved`,
      );
    }
    const now = deps.clock();
    refuseUnlessState(record, now, 'approved', 'consume');
    const consumedAt = now.toISOString();
    const commitment = computeApprovalCommitment(record.salt, record.digest);
    const logIndex = await log.appendLeaf(
      'approval-consumption',
      formatApprovalConsumptionEntry({ approval: record.id, commitment, consumedAt }),
    );
    if (!(await store.consumeApproval(record.id, consumedAt, logIndex))) {
      throw new ToolsealError('APPROVAL_CONSUMED', `approval ${id} has already been used`);
    }
    await log.signLatestCheckpoint();
    return { id: record.id, digest: record.digest as Sha256Digest, status: 'consumed', logIndex };
  });
  await log.recordLatestCheckpoint();
  return outcome;
}

/** `expired` for a pending or approved request whose time is up; else the stored status. */
export function computeApprovalStatus(record: ApprovalRecord, now: Date): ApprovalStatus {
  const open = record.status === 'pending' || record.status === 'approved';
  return open && Date.parse(record.expiresAt) <= now.getTime() ? 'expired' : record.status;
}

/**
 * The envelope read strictly, its manifest looked up here (NOT_FOUND, VERSION_YANKED) and its action recomputed against
 * the signed tool (the codes of computeActionFromRequest); the audience must be the caller (FORBIDDEN).
 */
async function recomputeAction(
  deps: ApprovalDeps,
  host: PrincipalRecord,
  envelopeBytes: Uint8Array,
): Promise<{ request: ActionRequest; signed: SignedTool; action: Action }> {
  const request = readActionRequest(envelopeBytes);
  if (request.audience !== host.name) {
    throw new ToolsealError('FORBIDDEN', `this host is ${host.name}; it cannot ask on behalf of another audience`, {
      pointer: '/audience',
    });
  }
  const { name, version } = splitManifest(request.manifest);
  const stored = await deps.store.getVersion(name, version);
  if (!stored)
    throw new ToolsealError('NOT_FOUND', `${name}@${version} is not in this registry`, { pointer: '/manifest' });
  if (stored.status === 'yanked') {
    throw new ToolsealError('VERSION_YANKED', `${name}@${version} is yanked: its tools are not approved for calls`, {
      pointer: '/manifest',
    });
  }
  const signed = selectSignedTool((await deps.readManifest(name, version)).bytes, request.tool, deps.origin);
  return { request, signed, action: computeActionFromRequest(signed, request) };
}

async function selectStoredTool(deps: ApprovalDeps, record: ApprovalRecord, registry: string): Promise<SignedTool> {
  const { bytes } = await deps.readManifest(record.manifestName, record.manifestVersion);
  return selectSignedTool(bytes, record.tool, registry);
}

function splitManifest(manifest: string): { name: string; version: string } {
  let ref: ReturnType<typeof parseManifestRef>;
  try {
    ref = parseManifestRef(manifest);
  } catch (error) {
    const message = error instanceof ToolsealError ? error.message : 'not name@version';
    throw new ToolsealError('BAD_REQUEST', message, { pointer: '/manifest' });
  }
  if (ref.kind !== 'version') {
    throw new ToolsealError('BAD_REQUEST', "an envelope's manifest is name@version", { pointer: '/manifest' });
  }
  return { name: ref.name, version: ref.version };
}

/** The request, if `principal` may see it: a host only its own (another host's is NOT_FOUND, revealing nothing). */
async function findVisible(store: Store, principal: PrincipalRecord, id: string): Promise<ApprovalRecord> {
  const record = await store.getApproval(id);
  if (!record || (principal.kind === 'host' && record.hostId !== principal.id)) {
    throw new ToolsealError('NOT_FOUND', `no approval ${truncateText(id, 40)}`);
  }
  return record;
}

/** Refuse a transition out of any state but `wanted`, with the code of the state the request is in. */
function refuseUnlessState(
  record: ApprovalRecord,
  now: Date,
  wanted: 'pending' | 'approved',
  action: 'decide' | 'consume',
): void {
  const status = computeApprovalStatus(record, now);
  if (status === wanted) return;
  const id = record.id;
  if (status === 'expired')
    throw new ToolsealError('APPROVAL_EXPIRED', `approval ${id} expired at ${record.expiresAt}`);
  if (action === 'decide') throw new ToolsealError('APPROVAL_DECIDED', `approval ${id} has already been decided`);
  if (status === 'consumed') throw new ToolsealError('APPROVAL_CONSUMED', `approval ${id} has already been used`);
  if (status === 'denied') throw new ToolsealError('APPROVAL_DENIED', `approval ${id} was denied`);
  throw new ToolsealError('APPROVAL_PENDING', `approval ${id} is still waiting for an operator`);
}

function describeCreated(record: ApprovalRecord, now: Date): Omit<ApprovalCreatedResponse, 'url'> {
  return {
    id: record.id,
    digest: record.digest as Sha256Digest,
    status: computeApprovalStatus(record, now),
    expiresAt: record.expiresAt,
  };
}

function describeListed(record: ApprovalRecord, now: Date): ApprovalListResponse['items'][number] {
  return {
    id: record.id,
    digest: record.digest as Sha256Digest,
    status: computeApprovalStatus(record, now),
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    ...(record.decidedBy === null ? {} : { decidedBy: record.decidedBy }),
    ...(record.decidedAt === null ? {} : { decidedAt: record.decidedAt }),
    ...(record.reason === null ? {} : { reason: record.reason }),
    ...(record.consumedAt === null ? {} : { consumedAt: record.consumedAt }),
    ...(record.decisionLogIndex === null ? {} : { decisionLogIndex: record.decisionLogIndex }),
    ...(record.consumptionLogIndex === null ? {} : { consumptionLogIndex: record.consumptionLogIndex }),
  };
}

const DECISION_MEMBERS: ReadonlySet<string> = new Set(['decision', 'digest', 'reason']);

/** The decision body, strictly parsed and closed: {"decision": "approve"|"deny", "digest": string, "reason"?: text}. */
function readDecisionRequest(bytes: Uint8Array): ApprovalDecisionRequest {
  const parsed = parseStrict(bytes).value;
  if (!isJsonObject(parsed)) {
    throw new ToolsealError('BAD_REQUEST', 'a decision is {"decision": "approve"|"deny", "digest": "sha256:…"}', {
      pointer: '',
    });
  }
  const unknown = Object.keys(parsed).find((key) => !DECISION_MEMBERS.has(key));
  if (unknown !== undefined) {
    throw new ToolsealError('UNKNOWN_FIELD', `a decision has no member ${JSON.stringify(truncateText(unknown, 64))}`, {
      pointer: formatPointer([unknown]),
    });
  }
  const { decision, digest } = parsed;
  if (decision !== 'approve' && decision !== 'deny') {
    throw new ToolsealError('BAD_REQUEST', 'decision must be "approve" or "deny"', { pointer: '/decision' });
  }
  if (typeof digest !== 'string' || digest === '') {
    throw new ToolsealError('BAD_REQUEST', 'digest must be the digest the operator was shown', { pointer: '/digest' });
  }
  if (!hasOwn(parsed, 'reason')) return { decision, digest };
  const reason = parsed['reason'];
  if (typeof reason !== 'string') {
    throw new ToolsealError('BAD_REQUEST', 'the reason must be a string', { pointer: '/reason' });
  }
  checkYankReason(reason, 'a decision');
  return { decision, digest, reason };
}

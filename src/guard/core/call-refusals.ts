// How the call gate answers a refused call and what it logs (MCP 2025-11-25 "Tools" §Error Handling: a call of a tool
// that exists but cannot run is a tool result with isError, which the model reads; docs/approvals.md "Guard and
// policy" for the events). Split from call-gate.ts, which decides; this module only words the decision.

import type { Sha256Digest } from '../../core/digest.ts';
import { type ErrorCode, ToolsealError } from '../../core/errors.ts';
import type { JsonObject } from '../../core/json.ts';
import type { SignedTool } from '../../dispatch/action-digest.ts';
import { REFUSAL_META_KEY } from './guard-types.ts';

export type ApprovalEventName =
  /** A new approval request was stored; the client was told approval is needed. */
  | 'approval-requested'
  /** The call's approval exists and is still pending (or an identical open request was found). */
  | 'approval-pending'
  /** An approval was consumed: the call was forwarded. */
  | 'approval-consumed'
  /** The registry refused a request or a consumption (digest mismatch, denied, expired, unreachable, ...). */
  | 'approval-refused'
  /** The call's arguments were refused before anything was asked or forwarded. */
  | 'arguments-refused';

/** One approval event (a JSON line on the guard's stderr). Never arguments, never a token. */
export interface ApprovalEvent {
  event: ApprovalEventName;
  /** `name@version` of the signed manifest. */
  manifest: string;
  tool: string;
  /** The approval request, when there is one. */
  id: string | null;
  /** The action digest, once computed. */
  digest: Sha256Digest | null;
  /** The refusal's code (APPROVAL_REQUIRED for a request, APPROVAL_PENDING while pending); null when consumed. */
  code: ErrorCode | null;
  /** The refusal's pointer, when it has one. */
  pointer?: string;
  message: string;
}

/** What the gate decided for one tools/call. */
export interface GateOutcome {
  /** True: forward the message as the ToolGuard decided; false: it goes nowhere. */
  forward: boolean;
  /** The answer to the client (exact JSON text) when not forwarded and the call has an id. */
  reply: string | undefined;
  events: ApprovalEvent[];
  /** The decision's digests, code and approval, for the audit log (issue 29 §3); never an argument. */
  audit?: GateAudit;
}

/** One gate decision as the audit log records it. */
export interface GateAudit {
  toolDigest: Sha256Digest;
  /** The action digest, once computed (only calls a policy rule matched have one). */
  actionDigest: Sha256Digest | null;
  /** Why it was not forwarded (APPROVAL_REQUIRED / APPROVAL_PENDING when an approval was asked for); null when forwarded. */
  code: ErrorCode | null;
  approvalId: string | null;
}

/** Refusals whose messages quote argument values (the registry's checks of an envelope too). */
const ARGUMENT_CODES: ReadonlySet<string> = new Set(['ARGUMENTS_INVALID', 'MONEY_INVALID', 'MONEY_CEILING_EXCEEDED']);

/** A thrown error as a refusal: its own code when it has one; anything else is the registry not answering. */
export function asRefusal(error: unknown): ToolsealError {
  if (error instanceof ToolsealError) return error;
  return new ToolsealError('FETCH_FAILED', 'the registry could not be reached; the call was not forwarded', {
    cause: error,
  });
}

export function event(
  name: ApprovalEventName,
  signed: SignedTool,
  id: string | null,
  digest: Sha256Digest | null,
  refusal: ToolsealError | undefined,
): ApprovalEvent {
  const base: ApprovalEvent = {
    event: name,
    manifest: signed.manifest,
    tool: signed.tool.name,
    id,
    digest,
    code: refusal?.code ?? null,
    message: refusal === undefined ? '' : describeForLog(name, refusal),
  };
  return refusal?.pointer === undefined ? base : { ...base, pointer: refusal.pointer };
}

/**
 * A refusal's text for the event log. The refusals of arguments (schema, money, the strict parser) quote what the call
 * sent (an amount, a currency, a key): the log gets only their code and pointer; the client's answer keeps the text.
 */
function describeForLog(name: ApprovalEventName, refusal: ToolsealError): string {
  if (name !== 'arguments-refused' && !ARGUMENT_CODES.has(refusal.code)) return refusal.message;
  const at = refusal.pointer === undefined || refusal.pointer === '' ? '' : ` at ${refusal.pointer}`;
  return `the call's arguments were refused (${refusal.code}${at})`;
}

/** What a model is told to do after a refusal, by its code (MCP 2025-11-25 "Tools" §Error Handling: it may correct itself). */
const NEXT_STEP: Partial<Record<ErrorCode, string>> = {
  ARGUMENTS_INVALID: "Correct the arguments to match the tool's inputSchema and call again.",
  MONEY_INVALID: 'Give the amount as an integer in minor units and a currency the tool declares, then call again.',
  MONEY_CEILING_EXCEEDED: 'The amount is above the largest the tool declares: do not retry it as is.',
  APPROVAL_DENIED: 'An operator denied exactly this call: do not retry it.',
  APPROVAL_EXPIRED: 'The approval expired before it was used: calling again asks for a new one.',
  APPROVAL_PENDING: 'It is still waiting for an operator: call again once it is approved.',
  APPROVAL_CONSUMED: 'That approval was already used: calling again asks for a new one.',
  FETCH_FAILED: 'The approvals service could not be reached: try again later.',
};

/**
 * The tool result answering a refused call (MCP 2025-11-25 "Tools" §Error Handling: a call the tool exists for but
 * that cannot run is a result with isError, which the model reads): a text and, in `_meta["io.toolseal/refusal"]`,
 * the code, the pointer, the tool, the manifest (and the approval's id and the action digest when there is one).
 */
export function refuse(
  requestId: string | number | null,
  signed: SignedTool,
  refusal: ToolsealError,
  events: ApprovalEvent[],
  approvalId?: string,
  digest?: Sha256Digest,
): GateOutcome {
  const audit: GateAudit = {
    toolDigest: signed.toolDigest,
    actionDigest: digest ?? null,
    code: refusal.code,
    approvalId: approvalId ?? null,
  };
  if (requestId === null) return { forward: false, reply: undefined, events, audit };
  const data: JsonObject = {
    code: refusal.code,
    pointer: refusal.pointer ?? '',
    tool: signed.tool.name,
    manifest: signed.manifest,
  };
  if (approvalId !== undefined) data['id'] = approvalId;
  if (digest !== undefined) data['digest'] = digest;
  const at = refusal.pointer === undefined || refusal.pointer === '' ? '' : ` (at ${refusal.pointer})`;
  const text =
    `toolseal guard did not run this call of ${signed.tool.name} (${signed.manifest}): ${refusal.code}${at}: ` +
    `${refusal.message.replace(/\.$/, '')}.${NEXT_STEP[refusal.code] === undefined ? '' : ` ${NEXT_STEP[refusal.code]}`}`;
  const result = { content: [{ type: 'text', text }], isError: true, _meta: { [REFUSAL_META_KEY]: data } };
  return { forward: false, reply: JSON.stringify({ jsonrpc: '2.0', id: requestId, result }), events, audit };
}

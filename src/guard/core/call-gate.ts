// The guard's call gate (issue 13 §4; docs/approvals.md "Guard and policy"): every tools/call of a signed tool that
// the ToolGuard would forward has its arguments checked from the exact request bytes (the signed inputSchema, then
// money) before anything is forwarded; with a policy, a call that needs approval is forwarded only once the registry
// has consumed an approval whose digest it recomputed from the same call. One async implementation for every
// transport (stdio, in-process, Streamable HTTP). Fails closed: no answer from the registry, nothing forwarded.

import { ToolsealError } from '../../core/errors.ts';
import { escapePointerToken } from '../../core/json-pointer.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../../core/json.ts';
import { APPROVAL_ID_PATTERN } from '../../client/approvals.ts';
import {
  type Action,
  type ActionEnvelope,
  bindCheckedAction,
  checkCallArguments,
  selectSignedTool,
  type SignedTool,
} from '../../dispatch/action-digest.ts';
import { readParsedToolCall, readToolCall, type ToolCall } from '../../dispatch/arguments.ts';
import {
  APPROVAL_META_KEY,
  type ApprovalCreatedResponse,
  type ApprovalResponse,
  type ApprovalTransitionResponse,
  type WhoamiResponse,
} from '../../protocol/wire.ts';
import {
  type ApprovalEvent,
  type ApprovalEventName,
  asRefusal,
  event,
  type GateAudit,
  type GateOutcome,
  refuse,
} from './call-refusals.ts';
import { REFUSAL_META_KEY } from './guard-types.ts';

export type { ApprovalEvent, ApprovalEventName, GateAudit, GateOutcome } from './call-refusals.ts';
import { type GuardPolicy, matchPolicy } from './policy.ts';

/** What the gate needs from the registry: the methods of ApprovalsClient (src/client/approvals.ts) with a host token. */
export interface ApprovalsPort {
  whoami(): Promise<WhoamiResponse>;
  request(envelopeBytes: Uint8Array): Promise<ApprovalCreatedResponse & { created: boolean }>;
  consume(id: string, envelopeBytes: Uint8Array): Promise<ApprovalTransitionResponse>;
  get(id: string): Promise<ApprovalResponse>;
}

export interface CallGateOptions {
  /** The signed manifest bytes, verified by the caller (fetchVerified, or a lockfile digest). */
  signedBytes: Uint8Array;
  /** The registry's origin as recorded in the verified attestation (the envelope's `registry`). */
  registry: string;
  /** The operator's policy; without it nothing needs approval (arguments are still checked). */
  policy?: GuardPolicy;
  /** The registry's approvals API with a host token; required with a policy. */
  approvals?: ApprovalsPort;
  /** The host's name (from whoami); required with a policy (CallGate.open asks for it). */
  audience?: string;
  /** Approvals remembered by action digest (default 1024; the oldest is forgotten first). */
  maxRemembered?: number;
  /** The clock denials expire by (milliseconds; tests move it). */
  now?: () => number;
}

/** Approval codes after which a remembered approval is forgotten and a new one requested. */
const STALE_CODES: ReadonlySet<string> = new Set(['APPROVAL_CONSUMED', 'APPROVAL_EXPIRED', 'NOT_FOUND']);
const DEFAULT_MAX_REMEMBERED = 1024;
const encoder = new TextEncoder();

/** One call being decided. */
interface Pending {
  call: ToolCall;
  signed: SignedTool;
  action: Action;
  envelopeBytes: Uint8Array;
  params: JsonObject;
  events: ApprovalEvent[];
}

/** Checks arguments and enforces approvals for the tools/call requests of one session (or one guard process). */
export class CallGate {
  readonly policy: GuardPolicy | undefined;
  readonly audience: string | undefined;
  private readonly signedBytes: Uint8Array;
  private readonly registry: string;
  private readonly approvals: ApprovalsPort | undefined;
  private readonly tools = new Map<string, SignedTool>();
  /** Open approval requests by action digest (insertion order: the oldest first). */
  private readonly remembered = new Map<string, ApprovalCreatedResponse>();
  /**
   * Denied action digests, until their approval expires: the identical call is APPROVAL_DENIED at once, without asking
   * the registry (or an operator) again and without a second event (issue 23 §4: a denial is sticky).
   */
  private readonly denied = new Map<string, { id: string; until: number; refusal: ToolsealError }>();
  private readonly maxRemembered: number;
  private readonly now: () => number;

  /** A gate with a policy asks the registry who its token belongs to first: that host's name is the audience. */
  static async open(options: Omit<CallGateOptions, 'audience'>): Promise<CallGate> {
    if (options.policy === undefined) return new CallGate(options);
    if (options.approvals === undefined)
      throw new ToolsealError('BAD_REQUEST', 'a guard policy needs the registry approvals API and a host token');
    const principal = await options.approvals.whoami();
    if (principal.kind !== 'host')
      throw new ToolsealError(
        'FORBIDDEN',
        `the token belongs to a ${principal.kind}, not a host: guard needs a host token`,
      );
    return new CallGate({ ...options, audience: principal.name });
  }

  constructor(options: CallGateOptions) {
    this.signedBytes = options.signedBytes;
    this.registry = options.registry;
    this.policy = options.policy;
    this.approvals = options.approvals;
    this.audience = options.audience;
    this.maxRemembered = options.maxRemembered ?? DEFAULT_MAX_REMEMBERED;
    this.now = options.now ?? Date.now;
    if (this.policy !== undefined && (this.approvals === undefined || !this.audience))
      throw new ToolsealError('BAD_REQUEST', 'a guard policy needs the registry approvals API and an audience');
    if (this.registry === '') throw new ToolsealError('BAD_REQUEST', 'the call gate needs the registry origin');
  }

  /**
   * Decide one tools/call the ToolGuard would forward: `name` is the signed (NFC) tool it calls, `requestId` its
   * JSON-RPC id (null for a notification), `bytes` the exact bytes of the request (arguments and approval id are
   * read from them, strictly).
   */
  decideCall(name: string, requestId: string | number | null, bytes: Uint8Array): Promise<GateOutcome> {
    return this.decideReadCall(name, requestId, () => readToolCall(bytes));
  }

  /**
   * {@link decideCall} for the UTF-8 bytes of `text`, when the caller has already read `message` from exactly `text`
   * with the strict parser (parseStrict or parseStrictText, any depth limit; a batch member's text and value qualify):
   * the same outcome, without a second strict parse (readParsedToolCall). Never for a message read otherwise (such as
   * JSON.parse, which keeps duplicate keys and unsafe integers that the strict parser refuses).
   */
  decideParsedCall(
    name: string,
    requestId: string | number | null,
    message: JsonValue,
    text: string,
  ): Promise<GateOutcome> {
    return this.decideReadCall(name, requestId, () => readParsedToolCall(message, text));
  }

  private async decideReadCall(
    name: string,
    requestId: string | number | null,
    readCall: () => ToolCall,
  ): Promise<GateOutcome> {
    const signed = this.signedTool(name);
    const events: ApprovalEvent[] = [];
    let call: ToolCall;
    try {
      call = readCall();
      checkCallArguments(signed, call.arguments);
    } catch (error) {
      const refusal = asRefusal(error);
      events.push(event('arguments-refused', signed, null, null, refusal));
      return refuse(requestId, signed, refusal, events);
    }
    if (this.policy === undefined || matchPolicy(this.policy, signed.tool, call.arguments.value).length === 0)
      return {
        forward: true,
        reply: undefined,
        events,
        audit: { toolDigest: signed.toolDigest, actionDigest: null, code: null, approvalId: null },
      };
    // The request was read and its arguments checked once, above: bind them (the material view, the digest).
    const action = bindCheckedAction(signed, call.arguments, this.audience!);
    const pending: Pending = {
      call,
      signed,
      action,
      envelopeBytes: encodeEnvelope(action.request, call.arguments.text),
      params: call.params,
      events,
    };
    return this.approve(pending);
  }

  /** The signed tool `name` (from the signed bytes, with its digest), looked up once. */
  private signedTool(name: string): SignedTool {
    let signed = this.tools.get(name);
    if (signed === undefined) {
      signed = selectSignedTool(this.signedBytes, name, this.registry);
      this.tools.set(name, signed);
    }
    return signed;
  }

  private async approve(pending: Pending): Promise<GateOutcome> {
    const { action, signed, events } = pending;
    let named: string | undefined;
    try {
      named = readApprovalId(pending.params);
    } catch (error) {
      const refusal = asRefusal(error);
      events.push(event('approval-refused', signed, null, action.digest, refusal));
      return refuse(pending.call.id, signed, refusal, events);
    }
    if (named !== undefined) {
      const consumed = await this.consume(pending, named);
      return consumed.outcome ?? refuse(pending.call.id, signed, consumed.refusal, events, named, action.digest);
    }
    const denial = this.denied.get(action.digest);
    if (denial !== undefined) {
      if (this.now() < denial.until)
        return refuse(pending.call.id, signed, denial.refusal, events, denial.id, action.digest);
      this.denied.delete(action.digest);
    }
    const remembered = this.remembered.get(action.digest);
    if (remembered !== undefined) {
      const consumed = await this.consume(pending, remembered.id);
      if (consumed.outcome !== undefined) return consumed.outcome;
      if (consumed.refusal.code === 'APPROVAL_PENDING')
        return this.answerPending(pending, remembered, 'approval-pending');
      this.remembered.delete(action.digest);
      if (consumed.refusal.code === 'APPROVAL_DENIED') this.rememberDenial(action.digest, remembered, consumed.refusal);
      if (!STALE_CODES.has(consumed.refusal.code))
        return refuse(pending.call.id, signed, consumed.refusal, events, remembered.id, action.digest);
    }
    return this.request(pending);
  }

  /** Keep a denial until its approval expires (bounded like the open requests: the oldest is forgotten first). */
  private rememberDenial(
    digest: string,
    approval: Pick<ApprovalCreatedResponse, 'id' | 'expiresAt'>,
    refusal: ToolsealError,
  ): void {
    const until = Date.parse(approval.expiresAt);
    if (!Number.isFinite(until)) return;
    this.denied.delete(digest);
    this.denied.set(digest, { id: approval.id, until, refusal });
    while (this.denied.size > this.maxRemembered) this.denied.delete(this.denied.keys().next().value as string);
  }

  /** Ask for an approval: an approved identical request is consumed at once; a pending one is answered as such. */
  private async request(pending: Pending): Promise<GateOutcome> {
    const { action, signed, events } = pending;
    let created: ApprovalCreatedResponse & { created: boolean };
    try {
      created = await this.approvals!.request(pending.envelopeBytes);
      if (created.digest !== action.digest)
        throw new ToolsealError(
          'APPROVAL_DIGEST_MISMATCH',
          `the registry computed the action digest ${created.digest}, guard computed ${action.digest}`,
        );
    } catch (error) {
      const refusal = asRefusal(error);
      events.push(event('approval-refused', signed, null, action.digest, refusal));
      return refuse(pending.call.id, signed, refusal, events, undefined, action.digest);
    }
    if (created.status === 'approved') {
      const consumed = await this.consume(pending, created.id);
      return consumed.outcome ?? refuse(pending.call.id, signed, consumed.refusal, events, created.id, action.digest);
    }
    if (created.status === 'denied') {
      // The registry answers an identical request with the denied one while it has not expired.
      const refusal = new ToolsealError('APPROVAL_DENIED', `approval ${created.id} was denied by an operator`);
      this.rememberDenial(action.digest, created, refusal);
      events.push(event('approval-refused', signed, created.id, action.digest, refusal));
      return refuse(pending.call.id, signed, refusal, events, created.id, action.digest);
    }
    this.remember(action.digest, created);
    return this.answerPending(pending, created, created.created ? 'approval-requested' : 'approval-pending');
  }

  /** Consume approval `id` for this call: the outcome (forwarded), or the registry's refusal. */
  private async consume(
    pending: Pending,
    id: string,
  ): Promise<{ outcome: GateOutcome; refusal?: never } | { outcome?: never; refusal: ToolsealError }> {
    const { action, signed, events } = pending;
    try {
      const transition = await this.approvals!.consume(id, pending.envelopeBytes);
      if (transition.digest !== action.digest)
        throw new ToolsealError(
          'APPROVAL_DIGEST_MISMATCH',
          `the registry consumed approval ${id} for the action digest ${transition.digest}, guard computed ${action.digest}`,
        );
      if (this.remembered.get(action.digest)?.id === id) this.remembered.delete(action.digest);
      events.push({
        ...event('approval-consumed', signed, id, action.digest, undefined),
        message: `approval ${id} consumed (log index ${transition.logIndex}); the call was forwarded`,
      });
      const audit: GateAudit = {
        toolDigest: signed.toolDigest,
        actionDigest: action.digest,
        code: null,
        approvalId: id,
      };
      return { outcome: { forward: true, reply: undefined, events, audit } };
    } catch (error) {
      const refusal = asRefusal(error);
      const name = refusal.code === 'APPROVAL_PENDING' ? 'approval-pending' : 'approval-refused';
      events.push(event(name, signed, id, action.digest, refusal));
      return { refusal };
    }
  }

  private remember(digest: string, created: ApprovalCreatedResponse): void {
    this.remembered.delete(digest);
    this.remembered.set(digest, {
      id: created.id,
      digest: created.digest,
      status: created.status,
      expiresAt: created.expiresAt,
      url: created.url,
    });
    while (this.remembered.size > this.maxRemembered)
      this.remembered.delete(this.remembered.keys().next().value as string);
  }

  /** The tool result that says approval is needed (a result, not an error: the model reads it). */
  private answerPending(pending: Pending, approval: ApprovalCreatedResponse, name: ApprovalEventName): GateOutcome {
    const { signed, action, events } = pending;
    if (name === 'approval-requested' || events.at(-1)?.event !== 'approval-pending') {
      events.push({
        ...event(name, signed, approval.id, action.digest, undefined),
        code: name === 'approval-requested' ? 'APPROVAL_REQUIRED' : 'APPROVAL_PENDING',
        message: `approval ${approval.id} is ${approval.status}: ${formatApprovalPage(approval)}`,
      });
    }
    const code = name === 'approval-requested' ? 'APPROVAL_REQUIRED' : 'APPROVAL_PENDING';
    const audit: GateAudit = {
      toolDigest: signed.toolDigest,
      actionDigest: action.digest,
      code,
      approvalId: approval.id,
    };
    if (pending.call.id === null) return { forward: false, reply: undefined, events, audit };
    const text =
      `toolseal guard (${code}): this call of ${signed.tool.name} (${signed.manifest}) needs an operator's approval before it ` +
      `runs. Approval request ${approval.id} for action digest ${action.digest} is ${approval.status} until ` +
      `${approval.expiresAt}; an operator decides it at ${formatApprovalPage(approval)}. Once it is approved, make ` +
      'exactly the same call again.';
    const reply = {
      jsonrpc: '2.0',
      id: pending.call.id,
      result: {
        content: [{ type: 'text', text }],
        isError: true,
        _meta: {
          [REFUSAL_META_KEY]: {
            code,
            pointer: '',
            tool: signed.tool.name,
            manifest: signed.manifest,
            id: approval.id,
            digest: action.digest,
          },
          [APPROVAL_META_KEY]: {
            code: 'APPROVAL_REQUIRED',
            id: approval.id,
            digest: action.digest,
            status: approval.status,
            url: formatApprovalPage(approval),
            apiUrl: approval.url,
            expiresAt: approval.expiresAt,
          },
        },
      },
    };
    return { forward: false, reply: JSON.stringify(reply), events, audit };
  }
}

/**
 * The approval's web page on the registry (`<registry>/ui/approvals/{id}`, where an operator signs in and decides),
 * from the API URL the registry gave (`<registry>/v1/approvals/{id}`): the API answers a browser with 401.
 */
export function formatApprovalPage(approval: Pick<ApprovalCreatedResponse, 'id' | 'url'>): string {
  const api = new URL(approval.url);
  const tail = `/v1/approvals/${encodeURIComponent(approval.id)}`;
  const base = api.pathname.endsWith(tail) ? api.pathname.slice(0, -tail.length) : '';
  return new URL(`${base}/ui/approvals/${encodeURIComponent(approval.id)}`, api.origin).href;
}

/** The travelling envelope's bytes: `arguments` exactly as the call sent them (their text from the request). */
function encodeEnvelope(request: ActionEnvelope, argumentsText: string | undefined): Uint8Array {
  const { arguments: args, ...members } = request;
  const head = JSON.stringify(members);
  return encoder.encode(`${head.slice(0, -1)},"arguments":${argumentsText ?? JSON.stringify(args)}}`);
}

/** `params._meta["io.toolseal/approval"]`: an id, or an object with one (the `_meta` of guard's own answer). */
function readApprovalId(params: JsonObject): string | undefined {
  const meta = params['_meta'];
  const named = isJsonObject(meta) ? meta[APPROVAL_META_KEY] : undefined;
  if (named === undefined) return undefined;
  const id = isJsonObject(named) ? named['id'] : named;
  if (typeof id !== 'string' || !APPROVAL_ID_PATTERN.test(id))
    throw new ToolsealError('BAD_REQUEST', `params._meta[${JSON.stringify(APPROVAL_META_KEY)}] names no approval id`, {
      pointer: `/params/_meta/${escapePointerToken(APPROVAL_META_KEY)}`,
    });
  return id;
}

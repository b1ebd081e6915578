// One guard session (issue 13 §4; JSON-RPC 2.0 §6 batches): the message-level ToolGuard (sync) and the CallGate
// (async: argument checks, approvals) combined, so the stdio proxy, the in-process GuardedTransport and the
// Streamable HTTP guard run the same code. Server → client is the ToolGuard alone; client → server is the ToolGuard,
// then, for each tools/call it would forward, the gate. A batch is decided member by member, in order.

import { describeError } from '../../core/errors.ts';
import { isJsonObject, type JsonValue } from '../../core/json.ts';
import type { ApprovalEvent, CallGate, GateOutcome } from './call-gate.ts';
import type { GuardSessionObserver } from './guard-observer.ts';
import { GUARD_CALL_REFUSED_CODE, type GuardDecision, type GuardFinding, type GuardMessage } from './guard-types.ts';
import { findElementSpans, findRootSpan } from './json-spans.ts';
import { buildMessage, type ToolGuard } from './tool-guard.ts';

/** A decision, with the approval events of the calls it decided. */
export interface SessionDecision extends GuardDecision {
  events: ApprovalEvent[];
}

const encoder = new TextEncoder();

export class GuardSession {
  constructor(
    readonly guard: ToolGuard,
    /** Without a gate, tools/call arguments are not checked (the ToolGuard alone, as before issue 13). */
    readonly gate?: CallGate,
    /** Told every decision (metrics, audit log: issue 29); absent, nothing is reported. */
    private readonly observer?: GuardSessionObserver,
  ) {}

  /** The MCP session ended: its observer is told (idempotent). */
  end(): void {
    this.observer?.end();
  }

  /** A message (or batch) from the server, bound for the client: the ToolGuard decides (no I/O). */
  fromServer(message: unknown): SessionDecision {
    const decision = this.guard.fromServer(message);
    if (this.observer !== undefined) reportFindings(this.observer, decision.findings);
    return withEvents(decision, []);
  }

  /**
   * A message (or batch) from the client, bound for the server. `text` is its exact JSON text when known (the
   * bytes the gate reads a call from, and what a forwarded message keeps); else a call is read from
   * JSON.stringify(message), the bytes an SDK transport sends. `parsedFromText`: the caller read `message` from exactly
   * `text` with the strict parser (the HTTP guard), so a call is read from `message` without a second strict parse
   * (CallGate.decideParsedCall); never for a message read otherwise (stdio reads lines with JSON.parse). Settles
   * once the registry has answered, if asked.
   */
  async fromClient(message: unknown, text?: string, parsedFromText = false): Promise<SessionDecision> {
    if (this.gate === undefined || this.guard.isRefused || !hasToolCall(message)) {
      const decision = this.guard.fromClient(message, text);
      if (this.observer !== undefined) reportFindings(this.observer, decision.findings);
      return withEvents(decision, []);
    }
    const parsed = parsedFromText && text !== undefined;
    if (!Array.isArray(message)) return this.decideOne(this.gate, message, text, parsed);
    return this.decideBatch(this.gate, message, text, parsed);
  }

  private async decideOne(
    gate: CallGate,
    item: unknown,
    text: string | undefined,
    parsedFromText: boolean,
  ): Promise<SessionDecision> {
    const decision = this.guard.fromClient(item, text);
    if (this.observer !== undefined) reportFindings(this.observer, decision.findings);
    if (decision.forward === undefined || !isToolCall(item)) return withEvents(decision, []);
    const params = item['params'] as Record<string, unknown>;
    const id = item['id'];
    const requestId = typeof id === 'string' || typeof id === 'number' ? id : null;
    let outcome: GateOutcome;
    try {
      const name = params['name'] as string;
      outcome =
        parsedFromText && text !== undefined
          ? await gate.decideParsedCall(name, requestId, item as JsonValue, text)
          : await gate.decideCall(name, requestId, encoder.encode(text ?? JSON.stringify(item)));
    } catch (error) {
      // Fail closed: a call the gate could not decide is not forwarded.
      outcome = { forward: false, reply: failureReply(requestId, error), events: [] };
    }
    if (this.observer !== undefined) reportGateOutcome(this.observer, params['name'] as string, outcome);
    if (outcome.forward) return withEvents(decision, outcome.events);
    return {
      forward: undefined,
      reply: outcome.reply === undefined ? undefined : buildMessage(outcome.reply),
      findings: decision.findings,
      terminate: decision.terminate,
      events: outcome.events,
    };
  }

  /** Each member alone, in order; what goes on is one batch of the kept members, the answers one batch. */
  private async decideBatch(
    gate: CallGate,
    batch: unknown[],
    text: string | undefined,
    parsedFromText: boolean,
  ): Promise<SessionDecision> {
    const root = text === undefined ? undefined : findRootSpan(text);
    const found = root === undefined ? undefined : findElementSpans(text!, root);
    const memberTexts =
      found?.length === batch.length ? found.map((span) => text!.slice(span.start, span.end)) : undefined;
    const result: SessionDecision = {
      forward: undefined,
      reply: undefined,
      findings: [],
      terminate: false,
      events: [],
    };
    const forwarded: string[] = [];
    const replies: string[] = [];
    let unchanged = memberTexts !== undefined;
    for (const [index, item] of batch.entries()) {
      const memberText = memberTexts?.[index];
      // A member's text is the exact span its value was parsed from (when the spans were found).
      const decision = await this.decideOne(gate, item, memberText, parsedFromText && memberText !== undefined);
      result.findings.push(...decision.findings);
      result.events.push(...decision.events);
      result.terminate ||= decision.terminate;
      if (decision.reply !== undefined) replies.push(textOf(decision.reply));
      if (decision.forward !== 'original') unchanged = false;
      if (decision.forward === 'original') forwarded.push(memberText ?? JSON.stringify(item));
      else if (decision.forward !== undefined) forwarded.push(textOf(decision.forward));
    }
    if (unchanged && forwarded.length > 0) result.forward = 'original';
    else if (forwarded.length > 0) result.forward = buildMessage(`[${forwarded.join(',')}]`);
    // A lone answer is a batch member: the client gets an array back, as it sent one.
    if (replies.length > 0) result.reply = buildMessage(`[${replies.map(unwrapBatch).join(',')}]`);
    return result;
  }
}

/** Tool findings as decisions: a withheld tool, a refused call, a refused session (other findings decide nothing). */
function reportFindings(observer: GuardSessionObserver, findings: readonly GuardFinding[]): void {
  for (const finding of findings) {
    const decision =
      finding.event === 'tool-withheld'
        ? 'withheld'
        : finding.event === 'call-refused'
          ? 'refused'
          : finding.event === 'session-refused'
            ? 'session-refused'
            : undefined;
    if (decision === undefined) continue;
    observer.decided({
      tool: finding.tool,
      toolDigest: null,
      actionDigest: null,
      decision,
      reason: finding.reason,
      approvalId: null,
    });
  }
}

/** The gate's decision on one call of `tool` (a signed tool the ToolGuard let through). */
function reportGateOutcome(observer: GuardSessionObserver, tool: string, outcome: GateOutcome): void {
  const audit = outcome.audit;
  const code = audit?.code ?? null;
  observer.decided({
    tool,
    toolDigest: audit?.toolDigest ?? null,
    actionDigest: audit?.actionDigest ?? null,
    decision: outcome.forward
      ? 'forwarded'
      : code === 'APPROVAL_REQUIRED' || code === 'APPROVAL_PENDING'
        ? 'approval-requested'
        : 'refused',
    reason: outcome.forward ? null : (code ?? 'INTERNAL'),
    approvalId: audit?.approvalId ?? null,
  });
}

/** The decision with `events` (built member by member: an object spread with a member added is slow in V8). */
function withEvents(decision: GuardDecision, events: ApprovalEvent[]): SessionDecision {
  const session: SessionDecision = {
    forward: decision.forward,
    reply: decision.reply,
    findings: decision.findings,
    terminate: decision.terminate,
    events,
  };
  if (decision.notice !== undefined) session.notice = decision.notice;
  return session;
}

function failureReply(requestId: string | number | null, error: unknown): string | undefined {
  if (requestId === null) return undefined;
  const message = `toolseal guard: the call could not be checked (${describeError(error)}); it was not forwarded`;
  const data = { code: 'INTERNAL', pointer: '' };
  return JSON.stringify({ jsonrpc: '2.0', id: requestId, error: { code: GUARD_CALL_REFUSED_CODE, message, data } });
}

function textOf(message: GuardMessage): string {
  return message.text;
}

/** A member's reply built by the ToolGuard for a single message is one message; never nested. */
function unwrapBatch(reply: string): string {
  return reply.startsWith('[') && reply.endsWith(']') ? reply.slice(1, -1) : reply;
}

function isToolCall(item: unknown): item is Record<string, unknown> {
  if (!isJsonObject(item) || item['method'] !== 'tools/call') return false;
  const params = item['params'];
  return isJsonObject(params) && typeof params['name'] === 'string';
}

function hasToolCall(message: unknown): boolean {
  return Array.isArray(message) ? message.some(isToolCall) : isToolCall(message);
}

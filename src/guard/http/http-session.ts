// One MCP session through the HTTP guard (MCP 2025-06-18 and 2025-11-25 "Transports" §Streamable HTTP §Session
// Management; "Tools" §List Changed Notification; issue 14 §1): its policy, the order of the client's messages, the
// requests awaiting an answer, and the guard's own tools/list, so a tools/call never reaches the server for a tool
// no tools/list of this session has checked.

import type { JsonValue } from '../../core/json.ts';
import { isJsonObject } from '../../core/json.ts';
import { parseStrictText } from '../../pipeline/parse.ts';
import type { ApprovalEvent } from '../core/call-gate.ts';
import { GUARD_CALL_REFUSED_CODE, type GuardDecision, type GuardFinding } from '../core/guard-types.ts';
import { findElementSpans, findRootSpan } from '../core/json-spans.ts';
import { consumeUpstreamResponse } from './http-relay.ts';
import type { HeaderFields } from './http-headers.ts';
import { Stop, type UpstreamAnswer, type UpstreamRequest } from './http-upstream.ts';

/** What the proxy reads of the message-level guard: a ToolGuard built with `requireListed`. */
export interface ListingView {
  /** `name@version` of the signed manifest. */
  readonly subject: string;
  /** A whole tools/list has been checked since the session began or the server's last list_changed. */
  readonly hasCheckedList: boolean;
  /** The `call-refused` finding a tools/call for `name` would get now (records nothing). */
  checkCall(name: string | null): GuardFinding | undefined;
}

/** The decisions on every message; `fromClient` may answer later (the proxy awaits it, one message at a time). */
export interface MessagePolicy {
  /** A GuardSession's decision also carries the approval events of the calls it decided. */
  /** `parsedFromText`: `message` was read from exactly `text` by the strict parser (GuardSession.fromClient). */
  fromClient(
    message: unknown,
    text?: string,
    parsedFromText?: boolean,
  ): (GuardDecision & { events?: ApprovalEvent[] }) | Promise<GuardDecision & { events?: ApprovalEvent[] }>;
  fromServer(message: unknown): GuardDecision;
}

/**
 * The policy of one session: a ToolGuard itself (built with `requireListed: true`), or a policy holding one as
 * `guard` (the approvals' GuardSession, which adds argument checks and approvals to the ToolGuard's decisions).
 */
export type HttpGuardPolicy = MessagePolicy & (ListingView | { readonly guard: ListingView });

/** What a session needs from the guard that holds it. */
export interface SessionHost {
  /** One request to the server. */
  send(request: UpstreamRequest): Promise<UpstreamAnswer>;
  readonly maxEventChars: number;
  readonly maxResponseBytes: number;
  readonly listTimeoutMs: number;
  report(finding: GuardFinding): void;
  /** An approval event of the call gate (argument refusals, approvals requested and consumed). */
  reportEvent(event: ApprovalEvent): void;
  /** The session ended (a strict refusal when `refused`; DELETE, the server forgot it): forget it. */
  ended(session: HttpGuardSession, refused: boolean): void;
}

/** Nesting accepted in a JSON-RPC message (tool schemas with inlined refs nest deep). */
export const MESSAGE_MAX_DEPTH = 256;
/** Requests awaiting their response, and requests answered lately (a resumed stream may replay them), per session. */
const MAX_OUTSTANDING = 4096;
const MAX_ANSWERED = 1024;
/** Pages of the guard's own tools/list. */
const MAX_OWN_PAGES = 100;
/** Listings tried in a row when list_changed keeps arriving while one runs. */
const MAX_LIST_ATTEMPTS = 3;
export const OWN_ID_PREFIX = 'toolseal-guard-';

type Mode = 'client' | 'own';

export class HttpGuardSession {
  /** The upstream's Mcp-Session-Id ('' for a server without sessions); undefined until initialize is answered. */
  id: string | undefined;
  openStreams = 0;
  lastUsed = Date.now();
  /** Stops every request of the session when it ends. */
  readonly stop = new Stop();
  private queue: Promise<unknown> = Promise.resolve();
  /** Client messages being decided (the next waits for the queue only when some are). */
  private deciding = 0;
  /** Forwarded requests awaiting their response, by id key. */
  private readonly outstanding = new Map<string, JsonValue>();
  /** Requests answered lately, by id key: a stream resumed with Last-Event-ID may replay their answers. */
  private readonly answered = new Map<string, JsonValue>();
  private readonly own = new Map<string, (message: JsonValue) => void>();
  private listing: Promise<void> | undefined;
  private listingProblem: string | undefined;
  private ownCounter = 0;
  /** notifications/message for the client (tools withheld), sent with the next message a stream carries to it. */
  private notices: string[] = [];
  private isEnded = false;

  /** The ToolGuard's view: what has been checked, what a call would get. */
  private readonly view: ListingView;

  /**
   * `initialHeaders`: the client's end-to-end headers of its initialize (never changed after), for the guard's own
   * requests no client request caused (the DELETE of an evicted session). Every other request of the guard's own
   * carries the headers of the client request it serves: no request's headers live on the session (issue 23 §2).
   */
  constructor(
    readonly policy: HttpGuardPolicy,
    private readonly host: SessionHost,
    private readonly initialHeaders: HeaderFields,
  ) {
    this.view = 'guard' in policy ? policy.guard : policy;
  }

  /** The notices waiting for the client, handed over once. */
  takeNotices(): string[] {
    if (this.notices.length === 0) return NO_NOTICES;
    const notices = this.notices;
    this.notices = [];
    return notices;
  }

  get ended(): boolean {
    return this.isEnded;
  }

  /**
   * The client's message, read from exactly `text` by the strict parser, decided in arrival order; a tools/call waits
   * (bounded) for a checked list first.
   */
  decideClient(message: JsonValue, text: string, headers: HeaderFields): Promise<GuardDecision> {
    // Nothing before it is being decided: it is decided at once, no turn of the queue.
    const decided =
      this.deciding === 0
        ? this.decideNow(message, text, headers)
        : this.queue.then(() => this.decideNow(message, text, headers));
    this.deciding++;
    this.queue = decided.then(this.settleDecision, this.settleDecision);
    return decided;
  }

  private readonly settleDecision = (): void => {
    this.deciding--;
  };

  private async decideNow(message: JsonValue, text: string, headers: HeaderFields): Promise<GuardDecision> {
    if (holdsToolCall(message) && !this.view.hasCheckedList) await this.ensureListed(headers);
    if (holdsToolCall(message) && !this.view.hasCheckedList) return this.refuseUnchecked(message);
    // The POST body was read strictly (parseStrictText) from exactly `text`.
    const decision = await this.policy.fromClient(message, text, true);
    for (const finding of decision.findings) this.host.report(finding);
    for (const event of decision.events ?? []) this.host.reportEvent(event);
    this.noteForwarded(message, decision);
    return decision;
  }

  /** Remember the ids of forwarded requests: only they may be answered by the server. */
  private noteForwarded(message: JsonValue, decision: GuardDecision): void {
    if (decision.forward === undefined) return;
    const answered = decision.reply === undefined ? NO_KEYS : new Set(readIds(decision.reply.message));
    for (const item of Array.isArray(message) ? message : [message]) {
      const key = readRequestKey(item);
      if (key === undefined || answered.has(key)) continue;
      remember(this.outstanding, key, item, MAX_OUTSTANDING);
    }
  }

  /**
   * Whether a response with this id key may reach the client: one awaited, or one answered lately (replayed on a
   * resumed stream). A replayed tools/list answer is checked again: its request is shown to the policy once more.
   */
  private async admitResponse(key: string): Promise<boolean> {
    const pending = this.outstanding.get(key);
    if (pending !== undefined) {
      this.outstanding.delete(key);
      remember(this.answered, key, pending, MAX_ANSWERED);
      return true;
    }
    const request = this.answered.get(key);
    if (request === undefined) return false;
    if (isJsonObject(request) && request['method'] === 'tools/list') {
      const decision = await this.policy.fromClient(request, JSON.stringify(request));
      for (const finding of decision.findings) this.host.report(finding);
    }
    return true;
  }

  /** A tools/call (or a batch holding one) while no list is checked: refused, nothing forwarded. */
  private refuseUnchecked(message: JsonValue): GuardDecision {
    const why =
      `no tools/list of this session has been checked against ${this.view.subject} yet` +
      (this.listingProblem === undefined ? '' : ` (${this.listingProblem})`);
    const findings: GuardFinding[] = [];
    const replies: string[] = [];
    for (const item of Array.isArray(message) ? message : [message]) {
      if (!isJsonObject(item) || typeof item['method'] !== 'string') continue;
      const params = item['params'];
      const name = isJsonObject(params) && typeof params['name'] === 'string' ? params['name'] : null;
      const known = item['method'] === 'tools/call' ? this.view.checkCall(name) : undefined;
      const finding: GuardFinding =
        known?.reason !== undefined && known.reason !== 'not-checked'
          ? known
          : {
              event: 'call-refused',
              manifest: this.view.subject,
              tool: name,
              reason: 'not-checked',
              pointer: '/params/name',
              message: item['method'] === 'tools/call' ? why : `sent in a batch with a tools/call: ${why}`,
            };
      if (item['method'] === 'tools/call') findings.push(finding);
      const id = item['id'];
      if (typeof id === 'string' || typeof id === 'number') replies.push(JSON.stringify(refusalReply(id, finding)));
    }
    for (const finding of findings) this.host.report(finding);
    const text = Array.isArray(message) ? `[${replies.join(',')}]` : replies[0];
    return {
      forward: undefined,
      reply: text === undefined || text === '[]' ? undefined : { text, message: JSON.parse(text) },
      findings,
      terminate: false,
    };
  }

  /**
   * One server message (or batch) as text: parsed strictly and decided; the text for the client, or undefined when
   * nothing of it goes to the client (the guard's own answers, answers to no pending request, what does not parse).
   */
  async handleServerText(text: string, headers: HeaderFields, mode: Mode = 'client'): Promise<string | undefined> {
    let parsed: JsonValue;
    try {
      parsed = parseStrictText(text, MESSAGE_MAX_DEPTH);
    } catch {
      this.reportDropped('the server sent a message that is not strict JSON (RFC 8259, I-JSON); dropped');
      return undefined;
    }
    if (!Array.isArray(parsed)) return this.handleServerItem(parsed, text, mode, headers);
    const root = findRootSpan(text);
    const spans = root === undefined ? undefined : findElementSpans(text, root);
    const outputs: string[] = [];
    let unchanged = spans?.length === parsed.length;
    for (const [index, item] of parsed.entries()) {
      const itemText =
        spans?.[index] === undefined ? JSON.stringify(item) : text.slice(spans[index].start, spans[index].end);
      const output = await this.handleServerItem(item, itemText, mode, headers);
      if (output !== itemText) unchanged = false;
      if (output !== undefined) outputs.push(output);
    }
    if (unchanged && outputs.length > 0) return text;
    return outputs.length === 0 ? undefined : `[${outputs.join(',')}]`;
  }

  /** `headers`: those of the client request whose answer (or stream) carried `item`. */
  private async handleServerItem(
    item: JsonValue,
    text: string,
    mode: Mode,
    headers: HeaderFields,
  ): Promise<string | undefined> {
    const key = readResponseKey(item);
    if (key !== undefined) {
      const waiter = this.own.get(key);
      if (waiter !== undefined) {
        this.own.delete(key);
        this.applyServerDecision(this.policy.fromServer(item), headers);
        waiter(item);
        return undefined;
      }
      if (mode === 'own' || !(await this.admitResponse(key))) {
        this.reportDropped('the server answered a request that is not pending; dropped');
        return undefined;
      }
    }
    const decision = this.policy.fromServer(item);
    this.applyServerDecision(decision, headers);
    const listChanged = key === undefined && isListChanged(item);
    if (mode === 'own') {
      if (listChanged) void this.ensureListed(headers);
      return undefined;
    }
    // The guard re-lists the tools before the client hears of the change (bounded by the listing's timeout).
    if (listChanged) await this.ensureListed(headers);
    if (decision.forward === 'original') return text;
    return decision.forward?.text;
  }

  private applyServerDecision(decision: GuardDecision, headers: HeaderFields): void {
    for (const finding of decision.findings) this.host.report(finding);
    if (decision.notice !== undefined && this.notices.length < MAX_NOTICES) this.notices.push(decision.notice.text);
    if (decision.reply !== undefined) void this.postOwn(decision.reply.text, headers).catch(() => undefined);
    if (decision.terminate) queueMicrotask(() => void this.end(true, true, headers));
  }

  /** Start the guard's own listing (after notifications/initialized, with its headers); calls wait for it. */
  startListing(headers: HeaderFields): void {
    void this.ensureListed(headers);
  }

  /**
   * Until a whole tools/list is checked (or the attempts are spent): the guard lists the server's tools itself, with
   * the headers of the client request that needs it (a listing already running is shared).
   */
  async ensureListed(headers: HeaderFields): Promise<void> {
    for (let attempt = 0; attempt < MAX_LIST_ATTEMPTS && !this.view.hasCheckedList && !this.isEnded; attempt++) {
      this.listing ??= this.listAllTools(headers)
        .catch((error: unknown) => {
          this.listingProblem = `the guard's own tools/list failed: ${describeListFailure(error)}`;
        })
        .finally(() => {
          this.listing = undefined;
        });
      await this.listing;
    }
  }

  private async listAllTools(headers: HeaderFields): Promise<void> {
    const listingStop = new Stop(this.stop);
    const timer = setTimeout(
      () => listingStop.stop(createTimeoutError('the listing took too long')),
      this.host.listTimeoutMs,
    );
    try {
      let cursor: string | undefined;
      for (let page = 0; page < MAX_OWN_PAGES; page++) {
        const answer = await this.requestOwnPage(cursor, listingStop, headers);
        if (answer === undefined) throw new Error('the server did not answer it');
        const result = isJsonObject(answer) ? answer['result'] : undefined;
        if (!isJsonObject(result)) throw new Error('the server answered it with an error');
        cursor = typeof result['nextCursor'] === 'string' ? result['nextCursor'] : undefined;
        if (cursor === undefined) {
          this.listingProblem = this.view.hasCheckedList ? undefined : 'the server’s tools/list was not a whole list';
          return;
        }
      }
      throw new Error(`more than ${MAX_OWN_PAGES} pages`);
    } finally {
      clearTimeout(timer);
      listingStop.release();
    }
  }

  /** One page of the guard's own tools/list, through the policy (so its answer is checked), never shown to the client. */
  private async requestOwnPage(
    cursor: string | undefined,
    stop: Stop,
    headers: HeaderFields,
  ): Promise<JsonValue | undefined> {
    const id = `${OWN_ID_PREFIX}${++this.ownCounter}`;
    const request = {
      jsonrpc: '2.0',
      id,
      method: 'tools/list',
      ...(cursor === undefined ? {} : { params: { cursor } }),
    };
    const text = JSON.stringify(request);
    const decision = await this.policy.fromClient(request, text);
    for (const finding of decision.findings) this.host.report(finding);
    if (decision.forward === undefined) throw new Error('the policy did not forward it');
    let answer: JsonValue | undefined;
    const key = `s:${id}`;
    this.own.set(key, (message) => {
      answer = message;
    });
    try {
      const response = await this.postOwn(
        decision.forward === 'original' ? text : decision.forward.text,
        headers,
        stop,
      );
      await consumeUpstreamResponse(response, {
        maxEventChars: this.host.maxEventChars,
        maxResponseBytes: this.host.maxResponseBytes,
        onMessage: (messageText) => this.handleServerText(messageText, headers, 'own'),
      });
    } finally {
      this.own.delete(key);
    }
    return answer;
  }

  /** The headers of a request the guard sends itself: a client request's `from`, with this session's id. */
  upstreamHeaders(accept: string, from: HeaderFields): HeaderFields {
    const headers: HeaderFields = { ...from, accept };
    delete headers['last-event-id'];
    delete headers['content-type'];
    delete headers['mcp-session-id'];
    if (this.id !== undefined && this.id !== '') headers['mcp-session-id'] = this.id;
    return headers;
  }

  /** POST a message of the guard's own (its tools/list, a reply the policy gives the server). */
  private postOwn(body: string, from: HeaderFields, stop: Stop = this.stop): Promise<UpstreamAnswer> {
    const headers = this.upstreamHeaders('application/json, text/event-stream', from);
    headers['content-type'] = 'application/json';
    return this.host.send({ method: 'POST', headers, body, stop });
  }

  /**
   * End the session: abort its streams, forget it; `deleteUpstream` also ends it at the server (DELETE), and
   * `refused` marks a strict refusal (later requests for it are answered with why).
   */
  async end(deleteUpstream: boolean, refused = false, from: HeaderFields = this.initialHeaders): Promise<void> {
    if (this.isEnded) return;
    this.isEnded = true;
    this.host.ended(this, refused);
    this.stop.stop();
    if (!deleteUpstream || this.id === undefined || this.id === '') return;
    const deleteStop = new Stop();
    const timer = setTimeout(
      () => deleteStop.stop(createTimeoutError('the DELETE took too long')),
      this.host.listTimeoutMs,
    );
    await this.host
      .send({ method: 'DELETE', headers: this.upstreamHeaders('application/json', from), stop: deleteStop })
      .then((answer) => answer.cancel())
      .catch(() => undefined)
      .finally(() => clearTimeout(timer));
  }

  reportDropped(message: string): void {
    this.host.report({
      event: 'message-dropped',
      manifest: this.view.subject,
      tool: null,
      reason: 'malformed',
      pointer: '',
      message,
    });
  }
}

const NO_KEYS: ReadonlySet<string> = new Set();
const NO_NOTICES: string[] = [];
/** Notices held for a client that has not been sent a message since. */
const MAX_NOTICES = 16;

/** Set `key` (as the newest entry); beyond `max` entries the oldest eighth is forgotten (one walk, not one a call). */
function remember(map: Map<string, JsonValue>, key: string, value: JsonValue, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size <= max) return;
  let excess = map.size - max + Math.ceil(max / 8);
  for (const oldest of map.keys()) {
    map.delete(oldest);
    if (--excess === 0) return;
  }
}

/** The JSON-RPC error answering a refused tools/call (as ToolGuard answers one: the code and the finding). */
function refusalReply(id: string | number, finding: GuardFinding): JsonValue {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: GUARD_CALL_REFUSED_CODE,
      message: `toolseal guard: ${finding.message}`,
      data: { code: 'DISPATCH_MISMATCH', reason: finding.reason, tool: finding.tool, manifest: finding.manifest },
    },
  };
}

function holdsToolCall(message: JsonValue): boolean {
  return (Array.isArray(message) ? message : [message]).some(
    (item) => isJsonObject(item) && item['method'] === 'tools/call',
  );
}

function isListChanged(item: JsonValue): boolean {
  return isJsonObject(item) && item['method'] === 'notifications/tools/list_changed';
}

/** 1 and "1" are different JSON-RPC ids. */
function formatIdKey(id: string | number): string {
  return typeof id === 'string' ? `s:${id}` : `n:${id}`;
}

function readRequestKey(item: JsonValue): string | undefined {
  if (!isJsonObject(item) || typeof item['method'] !== 'string') return undefined;
  const id = item['id'];
  return typeof id === 'string' || typeof id === 'number' ? formatIdKey(id) : undefined;
}

/** The id key of a response (a message with `result` or `error`), whatever else it carries. */
function readResponseKey(item: JsonValue): string | undefined {
  if (!isJsonObject(item) || !('result' in item || 'error' in item)) return undefined;
  const id = item['id'];
  return typeof id === 'string' || typeof id === 'number' ? formatIdKey(id) : undefined;
}

function readIds(message: unknown): string[] {
  const keys: string[] = [];
  for (const item of Array.isArray(message) ? message : message === undefined ? [] : [message]) {
    const id = isJsonObject(item) ? item['id'] : undefined;
    if (typeof id === 'string' || typeof id === 'number') keys.push(formatIdKey(id));
  }
  return keys;
}

function createTimeoutError(message: string): Error {
  const error = new Error(message);
  error.name = 'TimeoutError';
  return error;
}

function describeListFailure(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return 'no answer in time';
  return error instanceof Error ? error.message : 'failed';
}

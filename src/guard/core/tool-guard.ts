// The message-level guard (JSON-RPC 2.0 §4–§6 requests, responses, batches; MCP 2025-06-18 "Tools"): no I/O.
//
// Policy: on every tools/list response, each presented tool is compared with its signed tool after the same pipeline
// stages (checkPresentedTool: refs inlined, name NFC, JCS order). A tool that matches is replaced by the signed tool's
// canonical bytes; one that differs or is not in the manifest is withheld for the rest of the session (and reported);
// with `strict` the session is refused instead. A tools/call naming a tool outside the manifest, or a withheld one,
// is answered with a JSON-RPC error and never reaches the server. The client sees signed (NFC) names; a server may
// spell a name otherwise (NFD): the guard remembers each shown tool's spelling in the server's tools/list and
// forwards a tools/call under it, every other byte of the message kept when its text is given (JCS otherwise).
//
// A complete tools/list that presents only some of the signed tools is reported once at `info` level (`tools-subset`):
// MCP 2026-07-28 lets a server's list vary by authorization. With `requireListed` (the in-process guardClient), a
// tools/call for a signed tool is also refused until a tools/list in this session has shown it, and again after the
// server announces notifications/tools/list_changed: a call can never reach the server for a tool not checked.

import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { computeDigest, type Sha256Digest } from '../../core/digest.ts';
import { ToolsealError } from '../../core/errors.ts';
import { isJsonObject, type JsonObject } from '../../core/json.ts';
import {
  createPresentedToolChecker,
  presentableSignedTool,
  type PresentedToolChecker,
} from '../../dispatch/dispatch.ts';
import { canonicalizeToText } from '../../pipeline/canonical.ts';
import { checkEnvelope } from '../../pipeline/envelope.ts';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../../pipeline/limits.ts';
import { parseStrict } from '../../pipeline/parse.ts';
import {
  GUARD_CALL_REFUSED_CODE,
  type GuardDecision,
  type GuardFinding,
  type GuardFindingReason,
  type GuardMessage,
  type MessageFate,
} from './guard-types.ts';
import { findElementSpans, findMemberSpan, findRootSpan, type TextSpan } from './json-spans.ts';
import { rewriteToolsListResponse, type Listing, type ListingState, type ToolsListContext } from './tools-list.ts';

// Type-only imports from the SDK: importing `toolseal/host` must not load the SDK's schemas at run time.

/** Listings left unfinished (a client that stops paging) are forgotten beyond this many open cursors. */
const MAX_OPEN_CURSORS = 64;

export interface ToolGuardOptions {
  /** Refuse the whole session on the first tool that differs or is unknown, instead of withholding it. */
  strict?: boolean;
  /** When given, the signed bytes must hash to it (from a verified attestation or a lockfile). */
  expectedDigest?: Sha256Digest;
  /**
   * Refuse a tools/call (reason `not-checked`) for a signed tool that no tools/list of this session has shown, or none
   * since the server's last notifications/tools/list_changed. Off by default (the stdio proxy forwards such a call).
   */
  requireListed?: boolean;
}

/**
 * The message-level guard for one session with one server. Holds the signed manifest (from its bytes), the ids of
 * pending tools/list requests, and the tools withheld so far. Feed it every message in order; it does no I/O.
 */
export class ToolGuard {
  readonly name: string;
  readonly version: string;
  readonly digest: Sha256Digest;
  readonly strict: boolean;
  readonly requireListed: boolean;
  /** checkPresentedTool against the signed manifest, with the answers for its tools presented as signed worked out once. */
  private readonly checkTool: PresentedToolChecker;
  /** JCS text of each signed tool as a server presents it (without the registry-only `capabilities` and `approval`), by name. */
  private readonly signed = new Map<string, string>();
  private readonly withheld = new Set<string>();
  /** The server's own spelling of each shown tool's name in its latest tools/list, by signed (NFC) name. */
  private readonly serverNames = new Map<string, string>();
  /** Client request ids of tools/list requests awaiting their response (`s:` or `n:` prefixed), with their listings. */
  private readonly pendingLists = new Map<string, Listing[]>();
  /** The listing each nextCursor the server handed out continues (oldest first, at most MAX_OPEN_CURSORS). */
  private readonly cursorListings = new Map<string, Listing>();
  private refused = false;
  /** The withheld findings reported so far (tool, reason, pointer as JSON). */
  private readonly reportedWithheld = new Set<string>();
  private readonly listing: ListingState = {
    checked: new Set(),
    complete: false,
    reportedMissing: undefined,
  };

  constructor(signedBytes: Uint8Array, options: ToolGuardOptions = {}) {
    this.digest = computeDigest(signedBytes);
    if (options.expectedDigest !== undefined && options.expectedDigest !== this.digest) {
      throw new ToolsealError('DIGEST_MISMATCH', `signed bytes hash to ${this.digest}, not ${options.expectedDigest}`);
    }
    // A signed manifest may be larger and deeper than an upload (refs are inlined), hence the wide limits.
    const parsed = parseStrict(signedBytes, SIGNED_MANIFEST_PARSE_LIMITS);
    const manifest = checkEnvelope(parsed);
    if (canonicalizeToText(parsed.value) !== Buffer.from(signedBytes).toString('utf8')) {
      throw new ToolsealError(
        'INVALID_MANIFEST',
        'the signed bytes are not in canonical form (RFC 8785); they were not produced by the publish pipeline',
      );
    }
    const signedManifest = parsed.value as JsonObject;
    this.name = manifest.name;
    this.version = manifest.version;
    this.strict = options.strict ?? false;
    this.requireListed = options.requireListed ?? false;
    for (const tool of signedManifest['tools'] as JsonObject[]) {
      this.signed.set(tool['name'] as string, canonicalizeToText(presentableSignedTool(tool)));
    }
    this.checkTool = createPresentedToolChecker(signedManifest);
  }

  /** `name@version`. */
  get subject(): string {
    return `${this.name}@${this.version}`;
  }

  /** Names of the signed tools, in manifest order. */
  get toolNames(): string[] {
    return [...this.signed.keys()];
  }

  /** Names withheld so far in this session. */
  get withheldTools(): string[] {
    return [...this.withheld];
  }

  /**
   * True once a whole tools/list (from its first page to its last) has been checked in this session, and none of the
   * server's notifications/tools/list_changed has come since.
   */
  get hasCheckedList(): boolean {
    return this.listing.complete;
  }

  /**
   * The `call-refused` finding a tools/call for `name` would get now, or undefined when it would be forwarded.
   * Records nothing: the in-process wrapper asks before it sends anything.
   */
  checkCall(name: string | null): GuardFinding | undefined {
    const refusal = this.findCallRefusal(name);
    if (refusal === undefined) return undefined;
    return {
      event: 'call-refused',
      manifest: this.subject,
      tool: name,
      reason: refusal.reason,
      pointer: '/params/name',
      message: refusal.why,
    };
  }

  /** True once a strict guard has refused the session: every later message is dropped. */
  get isRefused(): boolean {
    return this.refused;
  }

  /** The signed tool as the client sees it (a copy), or undefined. */
  signedTool(name: string): JsonObject | undefined {
    const text = this.signed.get(name);
    return text === undefined ? undefined : (JSON.parse(text) as JsonObject);
  }

  /**
   * A message (or batch) from the client, bound for the server. `text`, when given, is the exact JSON text the
   * message was parsed from: a message the guard must change (a tools/call renamed to the server's spelling, a batch
   * losing a refused member) then keeps every other byte of it.
   */
  fromClient(message: unknown, text?: string): GuardDecision {
    return this.decide(message, (item, findings, itemText) => this.decideClientMessage(item, findings, itemText), text);
  }

  /**
   * A message (or batch) from the server, bound for the client. A `tool-withheld` finding is reported once per
   * session (the same tool, reason and pointer on a later tools/list is not reported again); a new one also gives
   * the decision its `notice` for the client.
   */
  fromServer(message: unknown): GuardDecision {
    const decision = this.decide(message, (item, findings) => this.decideServerMessage(item, findings));
    if (decision.findings.length === 0) return decision;
    decision.findings = decision.findings.filter((finding) => {
      if (finding.event !== 'tool-withheld') return true;
      const key = JSON.stringify([finding.tool, finding.reason, finding.pointer]);
      if (this.reportedWithheld.has(key)) return false;
      this.reportedWithheld.add(key);
      return true;
    });
    const withheld = decision.findings.filter((finding) => finding.event === 'tool-withheld');
    if (withheld.length > 0) decision.notice = buildMessage(formatWithheldNotice(this.subject, withheld));
    return decision;
  }

  private decide(message: unknown, one: DecideOne, text?: string): GuardDecision {
    const findings: GuardFinding[] = [];
    if (this.refused) return { forward: undefined, reply: undefined, findings, terminate: true };
    if (Array.isArray(message)) return decideBatch(message, one, findings, text);
    const fate = one(message, findings, text);
    return {
      forward: fate.forward === 'original' || fate.forward === undefined ? fate.forward : buildMessage(fate.forward),
      reply: fate.reply === undefined ? undefined : buildMessage(fate.reply),
      findings,
      terminate: fate.terminate ?? false,
    };
  }

  private decideClientMessage(item: unknown, findings: GuardFinding[], text: string | undefined): MessageFate {
    const pass: MessageFate = { forward: 'original', reply: undefined };
    if (!isJsonObject(item) || typeof item['method'] !== 'string') return pass;
    const id = readRequestId(item);
    if (item['method'] === 'tools/list' && id !== undefined) {
      const key = formatIdKey(id);
      const pending = this.pendingLists.get(key) ?? [];
      pending.push(this.continueListing(item['params']));
      this.pendingLists.set(key, pending);
      return pass;
    }
    if (item['method'] !== 'tools/call') return pass;
    const params = item['params'];
    const name = isJsonObject(params) && typeof params['name'] === 'string' ? params['name'] : null;
    const finding = this.checkCall(name);
    if (finding === undefined) {
      const serverName = this.serverNames.get(name!);
      if (serverName === undefined || serverName === name) return pass;
      return { forward: renameToolCall(item, serverName, text), reply: undefined };
    }
    const { reason, message: why } = finding;
    findings.push(finding);
    if (id === undefined) return { forward: undefined, reply: undefined };
    const reply: JSONRPCMessage = {
      jsonrpc: '2.0',
      id,
      error: {
        code: GUARD_CALL_REFUSED_CODE,
        message: `toolseal guard: ${why}`,
        data: { code: 'DISPATCH_MISMATCH', reason, tool: name, manifest: this.subject },
      },
    };
    return { forward: undefined, reply: JSON.stringify(reply) };
  }

  /** Why a tools/call for `name` is refused, or undefined when it may reach the server. */
  private findCallRefusal(name: string | null): { reason: GuardFindingReason; why: string } | undefined {
    if (name === null) return { reason: 'malformed', why: 'the tools/call names no tool' };
    if (!this.signed.has(name))
      return {
        reason: 'unknown-tool',
        why: `tool ${JSON.stringify(name)} is not in the signed manifest ${this.subject}`,
      };
    if (this.withheld.has(name))
      return {
        reason: 'withheld',
        why: `tool ${JSON.stringify(name)} was withheld: the server presented it differently from its signed definition in ${this.subject}`,
      };
    if (this.requireListed && !this.listing.checked.has(name))
      return {
        reason: 'not-checked',
        why: `tool ${JSON.stringify(name)} has not been checked against ${this.subject}: no tools/list of this session has presented it since the session began or the server's last tools/list_changed`,
      };
    return undefined;
  }

  private decideServerMessage(item: unknown, findings: GuardFinding[]): MessageFate {
    const pass: MessageFate = { forward: 'original', reply: undefined };
    if (!isJsonObject(item)) return pass;
    // A message is a response by its id and result/error, whatever else it carries: one that answers a pending
    // tools/list is always checked, even if it also has a `method` member that a lenient client might ignore.
    const isResponse = 'result' in item || 'error' in item;
    if (!isResponse && item['method'] === 'notifications/tools/list_changed') this.forgetCheckedList();
    if (!isResponse && 'method' in item) return pass;
    const id = readRequestId(item);
    if (id === undefined) return pass;
    const key = formatIdKey(id);
    const pending = this.pendingLists.get(key);
    const listing = pending?.shift();
    if (listing === undefined) return pass;
    if (pending!.length === 0) this.pendingLists.delete(key);
    if ('error' in item && !('result' in item)) return pass;
    const fate = rewriteToolsListResponse(this.listContext(), item, id, findings, listing);
    if (fate.terminate === true) this.refused = true;
    const result = item['result'];
    const nextCursor = isJsonObject(result) ? result['nextCursor'] : undefined;
    if (typeof nextCursor === 'string') this.rememberCursor(nextCursor, listing);
    return fate;
  }

  /** The listing a tools/list request belongs to: a new one without a cursor, else the one that handed it out. */
  private continueListing(params: unknown): Listing {
    const cursor = isJsonObject(params) ? params['cursor'] : undefined;
    if (cursor === undefined) return { presented: new Set(), partial: false };
    const listing = typeof cursor === 'string' ? this.cursorListings.get(cursor) : undefined;
    if (listing === undefined) return { presented: new Set(), partial: true };
    this.cursorListings.delete(cursor as string);
    return listing;
  }

  private rememberCursor(cursor: string, listing: Listing): void {
    this.cursorListings.delete(cursor);
    this.cursorListings.set(cursor, listing);
    if (this.cursorListings.size > MAX_OPEN_CURSORS)
      this.cursorListings.delete(this.cursorListings.keys().next().value as string);
  }

  /** The server's tools may have changed: nothing it showed before counts as checked until it is listed again. */
  private forgetCheckedList(): void {
    this.listing.complete = false;
    this.listing.checked.clear();
  }

  private listContext(): ToolsListContext {
    return {
      subject: this.subject,
      strict: this.strict,
      checkTool: this.checkTool,
      signedTexts: this.signed,
      withheld: this.withheld,
      serverNames: this.serverNames,
      listing: this.listing,
    };
  }
}

/** Decide one message (a batch member or a lone message); `text` is its exact JSON text when known. */
type DecideOne = (item: unknown, findings: GuardFinding[], text: string | undefined) => MessageFate;

/**
 * A batch (JSON-RPC 2.0 §6; MCP 2025-03-26): each member is decided alone; answers go back as one batch. With the
 * batch's text, a forwarded batch keeps the bytes of every member it keeps (and the whole text when none is dropped).
 */
function decideBatch(batch: unknown[], one: DecideOne, findings: GuardFinding[], text?: string): GuardDecision {
  const root = text === undefined ? undefined : findRootSpan(text);
  const found = root === undefined ? undefined : findElementSpans(text!, root);
  const spans = found?.length === batch.length ? found : undefined;
  const fates = batch.map((item, index) =>
    one(item, findings, spans && text!.slice(spans[index]!.start, spans[index]!.end)),
  );
  const replyTexts = fates.flatMap((fate) => (fate.reply === undefined ? [] : [fate.reply]));
  return {
    forward:
      batch.length > 0 && fates.every((fate) => fate.forward === 'original')
        ? 'original'
        : joinBatch(batch, fates, spans === undefined ? undefined : { text: text!, spans }),
    reply: replyTexts.length === 0 ? undefined : buildMessage(`[${replyTexts.join(',')}]`),
    findings,
    terminate: fates.some((fate) => fate.terminate === true),
  };
}

/** The forwarded batch: the members that go on, each as it came (or as rewritten); nothing when none does. */
function joinBatch(
  batch: unknown[],
  fates: MessageFate[],
  source: { text: string; spans: TextSpan[] } | undefined,
): GuardMessage | undefined {
  if (fates.length === 0) return undefined;
  if (source !== undefined && fates.every((fate) => fate.forward !== undefined)) {
    const parts: string[] = [];
    let copied = 0;
    fates.forEach((fate, index) => {
      if (fate.forward === 'original' || fate.forward === undefined) return;
      const span = source.spans[index]!;
      parts.push(source.text.slice(copied, span.start), fate.forward);
      copied = span.end;
    });
    parts.push(source.text.slice(copied));
    return buildMessage(parts.join(''));
  }
  const texts: string[] = [];
  fates.forEach((fate, index) => {
    if (fate.forward === undefined) return;
    if (fate.forward !== 'original') texts.push(fate.forward);
    else if (source === undefined) texts.push(JSON.stringify(batch[index]));
    else texts.push(source.text.slice(source.spans[index]!.start, source.spans[index]!.end));
  });
  return texts.length === 0 ? undefined : buildMessage(`[${texts.join(',')}]`);
}

/**
 * The tools/call with `params.name` set to the server's spelling: its text with only the name's string replaced
 * when the text is given, else the message in JCS form (RFC 8785; JSON.stringify for values JCS refuses, such as
 * a lone surrogate a client may send in its arguments).
 */
function renameToolCall(call: JsonObject, serverName: string, text: string | undefined): string {
  if (text !== undefined) {
    const root = findRootSpan(text);
    const params = root === undefined ? undefined : findMemberSpan(text, root, 'params');
    const name = params === undefined ? undefined : findMemberSpan(text, params, 'name');
    if (name !== undefined && text[name.start] === '"')
      return `${text.slice(0, name.start)}${JSON.stringify(serverName)}${text.slice(name.end)}`;
  }
  const renamed: JsonObject = { ...call, params: { ...(call['params'] as JsonObject), name: serverName } };
  try {
    return canonicalizeToText(renamed);
  } catch {
    return JSON.stringify(renamed);
  }
}

/** A built message whose object form is parsed from its text only when asked for (the stdio proxy never asks). */
export function buildMessage(text: string): GuardMessage {
  let parsed: JSONRPCMessage | JSONRPCMessage[] | undefined;
  return {
    text,
    get message() {
      parsed ??= JSON.parse(text) as JSONRPCMessage | JSONRPCMessage[];
      return parsed;
    },
  };
}

function readRequestId(message: JsonObject): string | number | undefined {
  const id = message['id'];
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** 1 and "1" are different JSON-RPC ids. */
function formatIdKey(id: string | number): string {
  return typeof id === 'string' ? `s:${id}` : `n:${id}`;
}

/** The `notifications/message` (MCP 2025-11-25 "Logging", level warning) telling the client which tools guard withheld. */
export function formatWithheldNotice(subject: string, withheld: readonly GuardFinding[]): string {
  const named = withheld.map((finding) =>
    finding.reason === 'unknown-tool'
      ? `${finding.tool} (not in the signed manifest)`
      : `${finding.tool} (differs from its signed definition at ${finding.pointer === '' ? '/' : finding.pointer})`,
  );
  const message =
    `toolseal guard withheld ${withheld.length === 1 ? 'a tool' : `${withheld.length} tools`} the server presented, ` +
    `checked against the signed manifest ${subject}: ${named.join(', ')}. Calls to ${withheld.length === 1 ? 'it' : 'them'} are refused.`;
  return JSON.stringify({
    jsonrpc: '2.0',
    method: 'notifications/message',
    params: {
      level: 'warning',
      logger: 'toolseal-guard',
      data: {
        message,
        manifest: subject,
        withheld: withheld.map(({ tool, reason, pointer }) => ({ tool, reason, pointer })),
      },
    },
  });
}

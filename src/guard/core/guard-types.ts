// What the guard reports and decides, and its JSON-RPC error codes (JSON-RPC 2.0 §5.1; MCP 2025-06-18 "Tools", error handling).

import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

// Type-only imports from the SDK: importing `toolseal/host` must not load the SDK's schemas at run time.

/** JSON-RPC error code of a refused tools/call: MCP's code for an unknown tool (Invalid params, the SDK's ErrorCode.InvalidParams). */
export const GUARD_CALL_REFUSED_CODE = -32602;
/**
 * The `_meta` key of guard's tool results for a call it did not run (arguments, money, approvals): `{code, pointer,
 * tool, manifest, id?, digest?}` (MCP 2025-11-25 "Tools" §Error Handling; `_meta` keys are reverse-DNS prefixed).
 */
export const REFUSAL_META_KEY = 'io.toolseal/refusal';
/** JSON-RPC Parse error (the SDK's ErrorCode.ParseError), answering a client line that is not JSON. */
export const GUARD_PARSE_ERROR_CODE = -32700;
/** JSON-RPC error code answering the tools/list that made a strict guard refuse the session (server-error range). */
export const GUARD_SESSION_REFUSED_CODE = -32090;
/** JSON-RPC error code answering a tools/list whose result is not a list of tools. */
export const GUARD_LIST_REFUSED_CODE = -32091;

export type GuardFindingEvent =
  /** A presented tool differs from its signed definition or is not in the manifest; the client does not see it. */
  | 'tool-withheld'
  /** A tools/call for a tool outside the manifest, or a withheld one, was answered with an error and not forwarded. */
  | 'call-refused'
  /** Strict mode: a finding in a tools/list ended the session. */
  | 'session-refused'
  /** A tools/list result that is not a list of tools was replaced by an error. */
  | 'list-refused'
  /** A line that is not JSON was dropped. */
  | 'message-dropped'
  /**
   * Info: a complete tools/list presented only some of the signed tools (MCP 2026-07-28 lets the list vary by
   * authorization). Not a finding against the server: reported once per distinct set of missing tools.
   */
  | 'tools-subset';

export type GuardFindingReason = 'differs' | 'unknown-tool' | 'withheld' | 'malformed' | 'not-checked' | 'subset';

/** One thing the guard noticed; the CLI prints each as one JSON line on stderr. */
export interface GuardFinding {
  event: GuardFindingEvent;
  /** `info` for what is reported but is no finding against the server (`tools-subset`); absent on every other event. */
  level?: 'info';
  /** `name@version` of the signed manifest. */
  manifest: string;
  /** The tool concerned (NFC), or null when there is none or it has no name. */
  tool: string | null;
  reason: GuardFindingReason;
  /** RFC 6901 pointer of the first difference inside the tool (`/description`, `/_meta`), or into the message. */
  pointer: string;
  message: string;
  /** Position of the tool in the server's tools/list page. */
  index?: number;
  /** `tools-subset`: the signed tools the server did not present, in manifest order. */
  missing?: string[];
}

/** A message the guard built (rather than passed through): the object and its exact serialisation (no newline). */
export interface GuardMessage {
  message: JSONRPCMessage | JSONRPCMessage[];
  text: string;
}

/** What one received message (or batch) becomes. */
export interface GuardDecision {
  /** Towards the other side: `original` (the received message unchanged), a message the guard built, or nothing. */
  forward: 'original' | GuardMessage | undefined;
  /** Answers the guard gives the sender itself (a refused tools/call). */
  reply: GuardMessage | undefined;
  findings: GuardFinding[];
  /** Strict mode refused the session: deliver `forward` and `reply`, then end the session. */
  terminate: boolean;
  /**
   * For the client, before `forward`: the MCP `notifications/message` (level warning) naming the tools this message
   * made guard withhold, and why (MCP 2025-11-25 "Logging"); once per finding per session.
   */
  notice?: GuardMessage;
}

/** One message's fate: `original`, or the exact text of what replaces it / answers it (JSON, no newline). */
export interface MessageFate {
  forward: 'original' | string | undefined;
  reply: string | undefined;
  terminate?: boolean;
}

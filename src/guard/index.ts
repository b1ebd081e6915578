// `toolseal/guard`: the verifying MCP proxy (MCP 2025-06-18 "Tools" and "Transports") and manifest capture.
//
//   ToolGuard         pure, message-level: decides what each JSON-RPC message (or batch) becomes. No I/O.
//   startStdioGuard   a newline-delimited JSON-RPC proxy (MCP stdio transport) between a client on two streams and
//                     a server it spawns; messages it does not rewrite pass through byte for byte.
//   GuardedTransport  the same check around any SDK client Transport (stdio, Streamable HTTP, in-memory).
//   guardClient       the guard inside a host process: verifies a manifest, then wraps an SDK Client (through a
//                     GuardedTransport) so listTools() gives signed tools and callTool() refuses before sending.
//   captureManifest   a manifest draft from a live server (loads the MCP SDK at run time; the three above do not).
//   CallGate          tools/call arguments checked against the signed tool, and approvals (issue 13 §4): with a
//                     policy (readGuardPolicy), a call that needs approval runs only once its approval is consumed.
//   GuardSession      a ToolGuard and a CallGate together: what every transport runs.
//   startHttpGuard    the proxy for a Streamable HTTP server: a loopback endpoint the client connects to instead.
//   composeGuard      the one way to build a guard from a verified manifest (the gate, a session per MCP session,
//                     the start lines): `toolseal guard` (stdio and HTTP) and guardClient all use it.
// Folders: core/ (decisions, no I/O but the gate's registry calls), stdio/, http/, sdk/ (the SDK transport and client).

export {
  GUARD_CALL_REFUSED_CODE,
  GUARD_LIST_REFUSED_CODE,
  GUARD_PARSE_ERROR_CODE,
  GUARD_SESSION_REFUSED_CODE,
  REFUSAL_META_KEY,
} from './core/guard-types.ts';
export type {
  GuardDecision,
  GuardFinding,
  GuardFindingEvent,
  GuardFindingReason,
  GuardMessage,
} from './core/guard-types.ts';
export { ToolGuard, type ToolGuardOptions } from './core/tool-guard.ts';
export {
  CallGate,
  type ApprovalEvent,
  type ApprovalEventName,
  type ApprovalsPort,
  type CallGateOptions,
  type GateOutcome,
} from './core/call-gate.ts';
export { GuardSession, type SessionDecision } from './core/guard-session.ts';
export {
  composeGuard,
  type ComposedGuard,
  type GuardCompositionOptions,
  type VerifiedForGuard,
} from './core/compose-guard.ts';
export {
  GUARD_POLICY_VERSION,
  matchPolicy,
  readGuardPolicy,
  type AnnotationHint,
  type CapabilityKind,
  type GuardPolicy,
  type PolicyRule,
} from './core/policy.ts';
export {
  startStdioGuard,
  type StdioGuardOptions,
  type StdioGuardOutcome,
  type StdioGuardSession,
} from './stdio/stdio-guard.ts';
export { GuardedTransport, type GuardedTransportOptions } from './sdk/guarded-transport.ts';
export {
  startHttpGuard,
  type HttpGuard,
  type HttpGuardLimits,
  type HttpGuardOptions,
  type HttpGuardPolicy,
} from './http/http-guard.ts';
export {
  GuardedClient,
  guardClient,
  ToolCallRefusedError,
  type GuardClientOptions,
  type GuardedClientOptions,
} from './sdk/guard-client.ts';

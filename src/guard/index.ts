// `toolseal/guard`: the verifying MCP proxy (MCP 2025-06-18 "Tools" and "Transports") and manifest capture.
//
//   ToolGuard         pure, message-level: decides what each JSON-RPC message (or batch) becomes. No I/O.
//   startStdioGuard   a newline-delimited JSON-RPC proxy (MCP stdio transport) between a client on two streams and
//                     a server it spawns; messages it does not rewrite pass through byte for byte.
//   GuardedTransport  the same check around any SDK client Transport (stdio, Streamable HTTP, in-memory).
//   guardClient       the guard inside a host process: verifies a manifest, then wraps an SDK Client (through a
//                     GuardedTransport) so listTools() gives signed tools and callTool() refuses before sending.
//   captureManifest   a manifest draft from a live server (loads the MCP SDK at run time; the three above do not).

export {
  GUARD_CALL_REFUSED_CODE,
  GUARD_LIST_REFUSED_CODE,
  GUARD_PARSE_ERROR_CODE,
  GUARD_SESSION_REFUSED_CODE,
} from './guard-types.ts';
export type {
  GuardDecision,
  GuardFinding,
  GuardFindingEvent,
  GuardFindingReason,
  GuardMessage,
} from './guard-types.ts';
export { ToolGuard, type ToolGuardOptions } from './tool-guard.ts';
export {
  startStdioGuard,
  type StdioGuardOptions,
  type StdioGuardOutcome,
  type StdioGuardSession,
} from './stdio-guard.ts';
export { GuardedTransport, type GuardedTransportOptions } from './guarded-transport.ts';
export {
  GuardedClient,
  guardClient,
  ToolCallRefusedError,
  type GuardClientOptions,
  type GuardedClientOptions,
} from './guard-client.ts';
export { captureManifest, captureTools, type CaptureManifestOptions, type CapturedManifest } from './capture.ts';

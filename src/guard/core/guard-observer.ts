// What a guard session reports for operators (issue 29 §1, §3): each decision about a tool or a call, with digests,
// reasons and approval ids only (never arguments, results or tokens). The CLI implements it with src/telemetry (the
// metrics and the audit log), loaded only when asked for: this module is types only.

import type { Sha256Digest } from '../../core/digest.ts';

export type ObservedDecisionKind = 'forwarded' | 'refused' | 'withheld' | 'approval-requested' | 'session-refused';

/** One decision: the audit record's fields but the session, the upstream and the time (the observer adds them). */
export interface ObservedDecision {
  tool: string | null;
  toolDigest: Sha256Digest | null;
  actionDigest: Sha256Digest | null;
  decision: ObservedDecisionKind;
  /** A finding reason (`differs`, `unknown-tool`, …) or a ToolsealError code; null when forwarded. */
  reason: string | null;
  approvalId: string | null;
}

/** The observer of one MCP session. */
export interface GuardSessionObserver {
  decided(decision: ObservedDecision): void;
  /** The session ended (idempotent). */
  end(): void;
}

/** Opens an observer for each session a guard starts. */
export interface GuardObserver {
  openSession(): GuardSessionObserver;
}

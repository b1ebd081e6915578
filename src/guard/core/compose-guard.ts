// The one way to build a guard (issue 23 §8; issue 24: one composition root per product): from a manifest the caller
// has verified, the call gate (argument checks; approvals under a policy, issue 13 §4) and a fresh GuardSession per
// MCP session. The stdio CLI, the HTTP CLI and guardClient all build theirs here, and print the same start lines.

import type { Sha256Digest } from '../../core/digest.ts';
import { selectSignedTool } from '../../dispatch/action-digest.ts';
import { type ManifestServer, parseStrict, SIGNED_MANIFEST_PARSE_LIMITS } from '../../pipeline/index.ts';
import { type ApprovalsPort, CallGate } from './call-gate.ts';
import type { GuardSessionObserver } from './guard-observer.ts';
import { GuardSession } from './guard-session.ts';
import { findUnmeasuredMoneyTools, type GuardPolicy } from './policy.ts';
import { ToolGuard } from './tool-guard.ts';

/** What a verification proved, as fetchVerified returns it (src/verify). */
export interface VerifiedForGuard {
  bytes: Uint8Array;
  digest: Sha256Digest;
  kid: string;
  logIndex: number;
  statement: { predicate: { registry: string } };
}

export interface GuardCompositionOptions {
  /** Refuse the session on the first tool that differs or is unknown, instead of withholding it. */
  strict?: boolean;
  /** Refuse a tools/call until a tools/list of the session has shown the tool (the HTTP guard and guardClient). */
  requireListed?: boolean;
  /** The operator's approval policy; needs `approvals`. */
  policy?: GuardPolicy;
  /** The registry's approvals API with a host token (CallGate.open asks it whoami: the audience). */
  approvals?: ApprovalsPort;
  /** Whether the digest was pinned by a lockfile (reported in the `verified` line). */
  locked?: boolean;
}

/** A guard for one verified manifest: a session for each MCP session, one call gate for them all. */
export interface ComposedGuard {
  readonly verified: VerifiedForGuard;
  readonly gate: CallGate;
  readonly strict: boolean;
  /** `name@version`. */
  readonly subject: string;
  /** The signed `server` member (issue 27), if the manifest has one: what signed-server.ts compares a server with. */
  readonly server: ManifestServer | undefined;
  readonly toolNames: readonly string[];
  /**
   * A fresh session: its own ToolGuard (what this session's server presented), the shared gate, and the observer
   * told its decisions (`guard --metrics-listen`, `--audit-log`), if any.
   */
  createSession(observer?: GuardSessionObserver): GuardSession;
  /**
   * The JSON lines guard writes on stderr at start: `verified`, and `money-unmeasured` when a money rule gates a
   * money tool that names no amount argument (every call of it needs approval).
   */
  readonly startLines: readonly Record<string, unknown>[];
}

/** Build the guard for `verified` (its bytes must hash to its digest: DIGEST_MISMATCH otherwise). */
export async function composeGuard(
  verified: VerifiedForGuard,
  options: GuardCompositionOptions = {},
): Promise<ComposedGuard> {
  const strict = options.strict ?? false;
  const requireListed = options.requireListed ?? false;
  const createGuard = (): ToolGuard =>
    new ToolGuard(verified.bytes, { strict, expectedDigest: verified.digest, requireListed });
  const first = createGuard();
  const origin = verified.statement.predicate.registry;
  // With a policy, whoami first: a token the registry refuses (or not a host's) fails before any session starts.
  const gate = await CallGate.open({
    signedBytes: verified.bytes,
    registry: origin,
    ...(options.policy === undefined ? {} : { policy: options.policy, approvals: options.approvals }),
  });
  const startLines: Record<string, unknown>[] = [
    {
      event: 'verified',
      manifest: first.subject,
      digest: verified.digest,
      kid: verified.kid,
      logIndex: verified.logIndex,
      tools: first.toolNames,
      locked: options.locked ?? false,
      strict,
      ...(gate.policy === undefined
        ? {}
        : { policyRules: gate.policy.requireApproval.length, audience: gate.audience }),
    },
  ];
  if (gate.policy !== undefined) {
    const signedTools = first.toolNames.map((name) => selectSignedTool(verified.bytes, name, origin).tool);
    const unmeasured = findUnmeasuredMoneyTools(gate.policy, signedTools);
    if (unmeasured.length > 0)
      startLines.push({
        event: 'money-unmeasured',
        manifest: first.subject,
        tools: unmeasured,
        message:
          'these tools declare money capabilities but no money.amountArgument: a money rule cannot measure their ' +
          'calls, so every call of theirs needs approval (fail closed)',
      });
  }
  let spare: ToolGuard | undefined = first;
  return {
    verified,
    gate,
    strict,
    subject: first.subject,
    server: readSignedServer(verified.bytes),
    toolNames: first.toolNames,
    startLines,
    createSession: (observer) => {
      const guard = spare ?? createGuard();
      spare = undefined;
      return new GuardSession(guard, gate, observer);
    },
  };
}

/** The manifest's signed `server` member (the bytes are verified and were checked at publish), or undefined. */
function readSignedServer(bytes: Uint8Array): ManifestServer | undefined {
  const manifest = parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS).value as { server?: ManifestServer };
  return manifest.server;
}

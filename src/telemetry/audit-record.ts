// One guard decision as an audit record (issue 29 §3): the closed set of fields a record may hold, checked before a
// line is written and again when one is read back. No argument value, no token, no URL query or userinfo ever fits.

import { isSha256Digest, type Sha256Digest } from '../core/digest.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import { APPROVAL_ID_PATTERN } from '../log/entries.ts';

export type AuditDecisionKind =
  /** A tools/call was forwarded upstream (with or without an approval). */
  | 'forwarded'
  /** A tools/call was answered with an error and not forwarded. */
  | 'refused'
  /** A tool was withheld from a tools/list. */
  | 'withheld'
  /** A tools/call needs an approval; one was requested and the call was not forwarded. */
  | 'approval-requested'
  /** Strict mode ended the session. */
  | 'session-refused';

export const AUDIT_DECISION_KINDS: readonly AuditDecisionKind[] = [
  'forwarded',
  'refused',
  'withheld',
  'approval-requested',
  'session-refused',
];

/**
 * What the guard decided about one tool or call. Every field is a bounded identifier or a digest: the type has no
 * room for arguments or results, and `createAuditRecord` copies these fields only (extra properties are dropped).
 */
export interface AuditDecision {
  /** Guard's id for the client session (not a credential). */
  session: string;
  /** The tool's name (NFC), or null when the message named none. */
  tool: string | null;
  /** Digest of the signed tool definition the decision was checked against. */
  toolDigest: Sha256Digest | null;
  /** Action digest of the call (docs/approvals.md), never the arguments themselves. */
  actionDigest: Sha256Digest | null;
  decision: AuditDecisionKind;
  /** Guard's finding reason (`differs`, `unknown-tool`, …) or a ToolsealError code; null when forwarded plainly. */
  reason: string | null;
  /** The approval (`apr_…`) the call was forwarded under or that was requested. */
  approvalId: string | null;
  /** The upstream: a command name or an http(s) URL, written as origin and path only. */
  upstream: string;
}

/** An audit line: the decision and when it was made (RFC 3339, UTC, milliseconds). */
export interface AuditRecord extends AuditDecision {
  time: string;
}

const IDENTIFIER_PATTERN = /^[\x21-\x7e]{1,128}$/;
const TOOL_MAX_LENGTH = 256;
const TIME_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** An upstream as it may be written: an http(s) URL loses userinfo, query and fragment; anything else is a name. */
export function describeUpstream(upstream: string): string {
  if (/^https?:\/\//i.test(upstream)) {
    try {
      const url = new URL(upstream);
      return `${url.origin}${url.pathname}`;
    } catch {
      return 'invalid-url';
    }
  }
  return IDENTIFIER_PATTERN.test(upstream) ? upstream : 'unnamed';
}

function checkNullable<T>(value: unknown, check: (v: unknown) => v is T): value is T | null {
  return value === null || check(value);
}

const isIdentifier = (v: unknown): v is string => typeof v === 'string' && IDENTIFIER_PATTERN.test(v);
const isToolName = (v: unknown): v is string =>
  typeof v === 'string' && v.length > 0 && v.length <= TOOL_MAX_LENGTH && !/[\p{Cc}\p{Cf}]/u.test(v);
const isApprovalId = (v: unknown): v is string => typeof v === 'string' && APPROVAL_ID_PATTERN.test(v);
const isDecisionKind = (v: unknown): v is AuditDecisionKind =>
  typeof v === 'string' && (AUDIT_DECISION_KINDS as readonly string[]).includes(v);

/** Why `record` would not be a valid audit record, or undefined when it is. */
export function findAuditRecordProblem(record: Record<string, unknown>): string | undefined {
  if (typeof record['time'] !== 'string' || !TIME_PATTERN.test(record['time'])) return 'time';
  if (!isIdentifier(record['session'])) return 'session';
  if (!checkNullable(record['tool'], isToolName)) return 'tool';
  if (!checkNullable(record['toolDigest'], isSha256Digest)) return 'toolDigest';
  if (!checkNullable(record['actionDigest'], isSha256Digest)) return 'actionDigest';
  if (!isDecisionKind(record['decision'])) return 'decision';
  if (!checkNullable(record['reason'], isIdentifier)) return 'reason';
  if (!checkNullable(record['approvalId'], isApprovalId)) return 'approvalId';
  if (!isIdentifier(record['upstream']) && describeUpstream(String(record['upstream'])) !== record['upstream']) {
    return 'upstream';
  }
  return undefined;
}

/** The record for `decision` at `time`: exactly the audit fields, in a fixed order (extra properties dropped). */
export function createAuditRecord(decision: AuditDecision, time: Date): AuditRecord {
  return {
    time: time.toISOString(),
    session: decision.session,
    tool: decision.tool,
    toolDigest: decision.toolDigest,
    actionDigest: decision.actionDigest,
    decision: decision.decision,
    reason: decision.reason,
    approvalId: decision.approvalId,
    upstream: describeUpstream(decision.upstream),
  };
}

const RECORD_KEYS = new Set([
  'time',
  'session',
  'tool',
  'toolDigest',
  'actionDigest',
  'decision',
  'reason',
  'approvalId',
  'upstream',
]);

/** A parsed line as an audit record, or undefined when it is anything else (other keys, wrong shapes). */
export function readAuditRecord(value: JsonValue): AuditRecord | undefined {
  if (!isJsonObject(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== RECORD_KEYS.size || !keys.every((key) => RECORD_KEYS.has(key))) return undefined;
  if (findAuditRecordProblem(value) !== undefined) return undefined;
  return value as unknown as AuditRecord;
}

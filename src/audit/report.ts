// The audit report: what one run of a log monitor (RFC 9162 §8.3) found. Problems are collected, never thrown.

import type { RegistryClient } from '../client/registry-client.ts';
import type { AuditState } from './state.ts';

export type AuditProblemCode =
  | 'FETCH_FAILED'
  | 'LOG_KEY_INVALID'
  | 'CHECKPOINT_INVALID'
  | 'LOG_ROLLBACK'
  | 'LOG_FORK'
  | 'ROOT_MISMATCH'
  | 'ENTRY_MALFORMED'
  | 'SIGNATURE_INVALID'
  | 'UNKNOWN_KEY'
  | 'KEY_NOT_VALID'
  | 'KEY_NOT_IN_LOG'
  | 'SUBJECT_REBOUND'
  | 'DIGEST_MISMATCH'
  | 'SUBJECT_MISMATCH'
  | 'MANIFEST_INVALID'
  | 'YANK_ENTRY_INVALID'
  | 'KEY_ENTRY_INVALID'
  | 'APPROVAL_ENTRY_INVALID'
  | 'BUNDLE_ENTRY_INVALID'
  | 'JWKS_INVALID'
  | 'WITNESS_QUORUM';

export interface AuditProblem {
  code: AuditProblemCode;
  message: string;
  /** Log entry index, when the problem is about one entry. */
  index?: number;
}

export type LogKeySource = 'flag' | 'state' | 'tofu';

export interface AuditReport {
  ok: boolean;
  registry: string;
  logKey: { verifier: string; source: LogKeySource } | null;
  origin: string | null;
  /** The tree remembered from the last audit (null on a first audit). */
  previous: { size: number; rootHash: string } | null;
  /** The checkpoint audited now (null when it could not be fetched or verified). */
  checkpoint: { size: number; rootHash: string } | null;
  /**
   * first-audit: nothing to be consistent with; unchanged: same size and root; proven: consistency proof
   * verified; refused: rollback or fork (the state must not advance); not-checked: stopped before.
   */
  consistency: 'first-audit' | 'unchanged' | 'proven' | 'refused' | 'not-checked';
  /** Entries walked: [from, to). */
  entries: {
    from: number;
    to: number;
    checked: number;
    attestation: number;
    yank: number;
    key: number;
    'approval-decision': number;
    'approval-consumption': number;
    bundle: number;
    malformed: number;
  };
  /** Distinct manifest blobs fetched and checked against their attested digest. */
  blobs: { checked: number };
  problems: AuditProblem[];
  warnings: string[];
  /** Filled by auditWithStateFile: the state file, and whether it was advanced. */
  stateFile: string | null;
  stateWritten: boolean;
}

/** What every step of one run shares: the registry it reads, the report it fills, the state it started from. */
export interface AuditRun {
  readonly client: RegistryClient;
  readonly report: AuditReport;
  readonly state: AuditState | undefined;
  /** Called with every new entry walked (its index and leaf data), in index order: the namespace monitor's feed. */
  readonly onEntry?: ((index: number, data: Uint8Array) => void) | undefined;
}

/** A report with nothing checked yet (not ok until finishReport says so). */
export function createReport(registry: string, state: AuditState | undefined): AuditReport {
  const size = state?.size ?? 0;
  return {
    ok: false,
    registry,
    logKey: null,
    origin: null,
    previous: state ? { size: state.size, rootHash: state.rootHash } : null,
    checkpoint: null,
    consistency: 'not-checked',
    entries: {
      from: size,
      to: size,
      checked: 0,
      attestation: 0,
      yank: 0,
      key: 0,
      'approval-decision': 0,
      'approval-consumption': 0,
      bundle: 0,
      malformed: 0,
    },
    blobs: { checked: 0 },
    problems: [],
    warnings: [],
    stateFile: null,
    stateWritten: false,
  };
}

export function addProblem(report: AuditReport, code: AuditProblemCode, message: string, index?: number): void {
  report.problems.push(index === undefined ? { code, message } : { code, message, index });
}

/**
 * A failed GET as one line: the client's message, plus the transport's reason (an errno code such as ECONNREFUSED,
 * else the innermost cause's message) when the failure carries one.
 */
export function describeFetchFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // fetch wraps the transport's error once more than node:http does
  const cause = (error as { cause?: { cause?: unknown; code?: unknown } } | null)?.cause;
  const reason =
    cause instanceof Error && typeof (cause as { code?: unknown }).code === 'string' ? cause : cause?.cause;
  const code = (reason as { code?: unknown } | null | undefined)?.code;
  if (typeof code === 'string') return `${message} (${code})`;
  return reason instanceof Error && reason.message !== '' ? `${message} (${reason.message})` : message;
}

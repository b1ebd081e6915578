// fsck of the approval service (issue 13 §3, docs/approvals.md): every request's digest recomputed from its stored
// envelope and the stored manifest bytes, its salt, its logged transitions (each leaf at its index, of its kind, with
// the recomputed commitment and the row's facts), and every approval leaf of the log backed by its row.

import { describeError } from '../core/errors.ts';
import { computeDigest } from '../core/digest.ts';
import { selectSignedTool } from '../dispatch/action-digest.ts';
import { computeActionFromRequest, readActionRequest } from '../dispatch/action-request.ts';
import {
  APPROVAL_SALT_BYTES,
  type ApprovalConsumptionEntry,
  type ApprovalDecisionEntry,
  computeApprovalCommitment,
  parseLogEntry,
} from '../log/entries.ts';
import { formatManifestRef } from '../protocol/manifest-ref.ts';
import type { ApprovalRecord, BlobRecord, LogEntryRecord, VersionRecord } from '../store/index.ts';

/** Records one problem (the codes of FsckProblem). */
export type ApprovalProblemSink = (
  code: 'INTEGRITY_ERROR' | 'NOT_IN_LOG' | 'LOG_INCONSISTENT',
  where: string,
  message: string,
) => void;

export interface ApprovalRows {
  approvals: ApprovalRecord[];
  versions: VersionRecord[];
  blobs: BlobRecord[];
  entries: LogEntryRecord[];
}

/** Check every approval row and every approval leaf; returns how many rows were checked. */
export function checkApprovals(rows: ApprovalRows, report: ApprovalProblemSink): number {
  const bytesByDigest = new Map(rows.blobs.map((blob) => [blob.digest, blob.bytes]));
  const digestOf = new Map(rows.versions.map((v) => [formatManifestRef(v.name, v.version), v.digest]));
  const byId = new Map(rows.approvals.map((row) => [row.id, row]));
  for (const row of rows.approvals) {
    const where = `approval ${row.id}`;
    if (row.salt.byteLength !== APPROVAL_SALT_BYTES) {
      report('INTEGRITY_ERROR', where, `salt is ${row.salt.byteLength} bytes, not ${APPROVAL_SALT_BYTES}`);
    }
    const manifestDigest = digestOf.get(formatManifestRef(row.manifestName, row.manifestVersion));
    const bytes = manifestDigest === undefined ? undefined : bytesByDigest.get(manifestDigest);
    if (bytes === undefined || computeDigest(bytes) !== manifestDigest) {
      report('INTEGRITY_ERROR', where, 'its manifest bytes are not stored intact');
    } else {
      checkDigest(row, bytes, (message) => report('INTEGRITY_ERROR', where, message));
    }
    checkTransitions(row, rows.entries, (code, message) => report(code, where, message));
  }
  rows.entries.forEach((entry) => {
    if (entry.kind !== 'approval-decision' && entry.kind !== 'approval-consumption') return;
    const parsed = parseLogEntry(entry.data);
    const where = `log entry ${entry.index}`;
    if (!parsed.ok || parsed.kind !== entry.kind) {
      report('LOG_INCONSISTENT', where, `not a well-formed ${entry.kind} leaf`);
      return;
    }
    const row = byId.get(parsed.entry.approval);
    const index = parsed.kind === 'approval-decision' ? row?.decisionLogIndex : row?.consumptionLogIndex;
    if (index !== entry.index) {
      report('INTEGRITY_ERROR', where, `no approval row records this ${entry.kind} of ${parsed.entry.approval}`);
    }
  });
  return rows.approvals.length;
}

/** The envelope as stored, recomputed against the signed tool of the stored manifest, gives the row's digest. */
function checkDigest(row: ApprovalRecord, manifestBytes: Uint8Array, bad: (message: string) => void): void {
  try {
    const request = readActionRequest(row.envelope);
    if (request.audience !== row.audience) bad(`the envelope's audience is not ${row.audience}`);
    if (request.manifest !== formatManifestRef(row.manifestName, row.manifestVersion) || request.tool !== row.tool) {
      bad("the envelope's manifest or tool is not the row's");
    }
    const signed = selectSignedTool(manifestBytes, row.tool, request.registry);
    const digest = computeActionFromRequest(signed, request).digest;
    if (digest !== row.digest) bad(`the stored envelope recomputes to ${digest}, the row says ${row.digest}`);
  } catch (error) {
    bad(`the stored envelope does not recompute: ${describeError(error)}`);
  }
}

/** Each transition the row's status implies is a leaf at its index, of its kind, agreeing with the row. */
function checkTransitions(
  row: ApprovalRecord,
  entries: LogEntryRecord[],
  report: (code: 'NOT_IN_LOG' | 'INTEGRITY_ERROR', message: string) => void,
): void {
  const commitment = computeApprovalCommitment(row.salt, row.digest);
  const decided = row.status !== 'pending';
  if (decided !== (row.decisionLogIndex !== null))
    report('INTEGRITY_ERROR', `status ${row.status} with its decision index`);
  if ((row.status === 'consumed') !== (row.consumptionLogIndex !== null)) {
    report('INTEGRITY_ERROR', `status ${row.status} with its consumption index`);
  }
  if (row.decisionLogIndex !== null) {
    const entry = readLeaf(entries, row.decisionLogIndex, 'approval-decision');
    if (entry === undefined || entry.type !== 'toolseal.approval-decision/v1') {
      report('NOT_IN_LOG', `log entry ${row.decisionLogIndex} is not its decision`);
    } else {
      const expected: Omit<ApprovalDecisionEntry, 'type'> = {
        approval: row.id,
        commitment,
        decision: row.status === 'denied' ? 'deny' : 'approve',
        operator: row.decidedBy ?? '',
        audience: row.audience,
        manifest: formatManifestRef(row.manifestName, row.manifestVersion),
        tool: row.tool,
        decidedAt: row.decidedAt ?? '',
      };
      const differs = (Object.keys(expected) as (keyof typeof expected)[]).filter((k) => entry[k] !== expected[k]);
      if (differs.length > 0) report('NOT_IN_LOG', `its decision leaf differs in ${differs.join(', ')}`);
    }
  }
  if (row.consumptionLogIndex !== null) {
    const entry = readLeaf(entries, row.consumptionLogIndex, 'approval-consumption');
    if (entry === undefined || entry.type !== 'toolseal.approval-consumption/v1') {
      report('NOT_IN_LOG', `log entry ${row.consumptionLogIndex} is not its consumption`);
    } else if (entry.approval !== row.id || entry.commitment !== commitment || entry.consumedAt !== row.consumedAt) {
      report('NOT_IN_LOG', 'its consumption leaf differs from the row (approval, commitment or time)');
    }
  }
}

function readLeaf(
  entries: LogEntryRecord[],
  index: number,
  kind: 'approval-decision' | 'approval-consumption',
): ApprovalDecisionEntry | ApprovalConsumptionEntry | undefined {
  const entry = entries[index];
  if (entry?.kind !== kind) return undefined;
  const parsed = parseLogEntry(entry.data);
  return parsed.ok && parsed.kind === kind ? parsed.entry : undefined;
}

// Checking each log entry of the walk: its form and kind rules come from src/log/entries.ts (JCS per RFC 8785);
// here are only the rules across entries (RFC 7638 kids introduced in log order, one digest per name@version, the
// JWKS of RFC 7517 agreeing with the key entries, approvals decided once and consumed once after an approve with the
// same commitment, issue 13 §3), the attestation's JWS signature (RFC 7515), and each Sigstore bundle leaf (issue 26)
// paired with the attestation whose statement it logs (by SHA-256 of the DSSE PAE), checked by checkBundleLeaf.

import type { Jwks } from '../attest/jwk.ts';
import { verifyAttestation, type VerifiedAttestation } from '../attest/jws.ts';
import { encodeHex } from '../core/bytes.ts';
import { isToolsealError, describeError } from '../core/errors.ts';
import type { HashedRekordFacts } from '../attest/rekor-entry.ts';
import { checkBundleLeaf, computeStatementPaeDigest } from '../log/bundle-leaf.ts';
import {
  type ApprovalConsumptionEntry,
  type ApprovalDecisionEntry,
  type EntryProblemCode,
  type KeyEntry,
  type LogEntryKind,
  parseLogEntry,
  type YankEntry,
} from '../log/entries.ts';
import type { AuditProblemCode } from './report.ts';

/** What the walk has learned so far from the entries before the current one. */
export interface EntryContext {
  /** The registry's usable keys; undefined when the JWKS could not be read (signatures are then not checked). */
  jwks: Jwks | undefined;
  loggedKids: Set<string>;
  /** name@version → digest, for attestations seen in this walk. */
  subjects: Map<string, string>;
  yanked: Set<string>;
  /** Approval id → what its leaves in this walk said (the decision, if seen, and whether it was consumed). */
  approvals: Map<string, { commitment: string; decision: 'approve' | 'deny' | undefined; consumed: boolean }>;
  /** The walk started at the first entry: an approval's decision, if any, is in it. */
  fromStart: boolean;
  /** The registry's JWKS as served (its P-256 bundle keys are read from it); undefined: bundles are not checked. */
  bundleKeys: unknown;
  /** Statements attested in this walk whose bundle leaf has not come yet: PAE digest (hex) → subject and bytes. */
  unbundled: Map<string, { subjectName: string; statement: Uint8Array }>;
  /** PAE digests (hex) of the statements a bundle leaf of this walk logged. */
  bundled: Set<string>;
}

export type EntryKind = LogEntryKind | 'malformed';

/** Records one problem about the entry being checked. */
export type EntryProblemSink = (code: AuditProblemCode, message: string) => void;

/** What a verified attestation says its manifest bytes are. */
export interface AttestationFacts {
  digest: string;
  subjectName: string;
  size: number;
}

export function createEntryContext(
  loggedKids: readonly string[],
  jwks: Jwks | undefined,
  fromStart = false,
  bundleKeys: unknown = jwks,
): EntryContext {
  return {
    jwks,
    loggedKids: new Set(loggedKids),
    subjects: new Map(),
    yanked: new Set(),
    approvals: new Map(),
    fromStart,
    bundleKeys,
    unbundled: new Map(),
    bundled: new Set(),
  };
}

/** The kind an entry that breaks the rules of `code` is counted as. */
const KIND_OF_PROBLEM: Record<EntryProblemCode, EntryKind> = {
  ENTRY_MALFORMED: 'malformed',
  YANK_ENTRY_INVALID: 'yank',
  KEY_ENTRY_INVALID: 'key',
  APPROVAL_ENTRY_INVALID: 'malformed',
  BUNDLE_ENTRY_INVALID: 'bundle',
};

function formatEntryProblem(index: number, code: EntryProblemCode, message: string): string {
  if (code === 'YANK_ENTRY_INVALID') return `yank entry ${index}: ${message}`;
  if (code === 'KEY_ENTRY_INVALID') return `key entry ${index}: ${message}`;
  if (code === 'APPROVAL_ENTRY_INVALID') return `approval entry ${index}: ${message}`;
  if (code === 'BUNDLE_ENTRY_INVALID') return `bundle entry ${index}: the leaf ${message}`;
  return `entry ${index} is ${message}`;
}

/**
 * Check entry `index` (its leaf data) against the rules of its kind and the entries before it, updating
 * `context`. `checkManifest` is called for each verified attestation. Returns the kind the entry is counted as.
 */
export async function checkEntry(
  index: number,
  data: Uint8Array,
  context: EntryContext,
  report: EntryProblemSink,
  checkManifest: (attestation: AttestationFacts) => Promise<void>,
): Promise<EntryKind> {
  const parsed = parseLogEntry(data);
  if (!parsed.ok) {
    report(parsed.code, formatEntryProblem(index, parsed.code, parsed.message));
    return KIND_OF_PROBLEM[parsed.code];
  }
  if (parsed.kind === 'yank') {
    checkYankRules(parsed.entry, context, (why) => report('YANK_ENTRY_INVALID', `yank entry ${index}: ${why}`));
  } else if (parsed.kind === 'key') {
    checkKeyRules(parsed.entry, context, (why) => report('KEY_ENTRY_INVALID', `key entry ${index}: ${why}`));
  } else if (parsed.kind === 'approval-decision' || parsed.kind === 'approval-consumption') {
    checkApprovalRules(parsed.entry, context, (why) =>
      report('APPROVAL_ENTRY_INVALID', `approval entry ${index}: ${why}`),
    );
  } else if (parsed.kind === 'bundle') {
    checkBundleEntry(index, data, parsed.entry, context, report);
  } else {
    await checkAttestationEntry(index, data, context, report, checkManifest);
  }
  return parsed.kind;
}

async function checkAttestationEntry(
  index: number,
  data: Uint8Array,
  context: EntryContext,
  report: EntryProblemSink,
  checkManifest: (attestation: AttestationFacts) => Promise<void>,
): Promise<void> {
  if (context.jwks === undefined) return;
  let verified: VerifiedAttestation;
  try {
    verified = await verifyAttestation(data, context.jwks);
  } catch (error) {
    const code =
      isToolsealError(error) && (error.code === 'UNKNOWN_KEY' || error.code === 'KEY_NOT_VALID')
        ? error.code
        : 'SIGNATURE_INVALID';
    report(code, `attestation entry ${index}: ${describeError(error)}`);
    return;
  }
  if (!context.loggedKids.has(verified.kid)) {
    report(
      'KEY_NOT_IN_LOG',
      `attestation entry ${index} is signed by key ${verified.kid}, which no earlier key entry introduced`,
    );
  }
  const earlier = context.subjects.get(verified.subjectName);
  if (earlier !== undefined) {
    report(
      'SUBJECT_REBOUND',
      `attestation entry ${index} attests ${verified.subjectName} again (earlier ${earlier}, now ${verified.digest}): name@version is immutable`,
    );
  }
  context.subjects.set(verified.subjectName, verified.digest);
  rememberStatement(data, verified.subjectName, context);
  const size = verified.statement.predicate.size;
  await checkManifest({ digest: verified.digest, subjectName: verified.subjectName, size });
}

/** The attestation's statement bytes (its JWS payload), awaiting the bundle leaf that logs the same statement. */
function rememberStatement(data: Uint8Array, subjectName: string, context: EntryContext): void {
  const { payload } = JSON.parse(Buffer.from(data).toString('utf8')) as { payload: string };
  const statement = new Uint8Array(Buffer.from(payload, 'base64url'));
  const digest = computeStatementPaeDigest(statement);
  if (!context.bundled.has(digest)) context.unbundled.set(digest, { subjectName, statement });
}

/**
 * A bundle leaf logs a statement attested earlier in the walk (when the walk started at the first entry, it must),
 * once, signed by a published bundle key (checkBundleLeaf). Its key's window is not checked: the leaf does not say
 * when it was signed (bundles of old versions are signed later, at the first start with issue 26).
 */
function checkBundleEntry(
  index: number,
  data: Uint8Array,
  facts: HashedRekordFacts,
  context: EntryContext,
  report: EntryProblemSink,
): void {
  if (context.bundleKeys === undefined) return;
  const digest = encodeHex(facts.digest);
  if (context.bundled.has(digest)) {
    report('BUNDLE_ENTRY_INVALID', `bundle entry ${index} logs a statement that already has a bundle entry`);
    return;
  }
  context.bundled.add(digest);
  const pending = context.unbundled.get(digest);
  if (pending === undefined) {
    if (context.fromStart)
      report('BUNDLE_ENTRY_INVALID', `bundle entry ${index} logs no statement attested earlier in the log`);
    return;
  }
  context.unbundled.delete(digest);
  const checked = checkBundleLeaf({ leaf: data, statement: pending.statement, bundleKeys: context.bundleKeys });
  if (!checked.ok) report(checked.code, `bundle entry ${index} (${pending.subjectName}): ${checked.message}`);
}

/** A yank names a subject attested with that digest (if attested in this walk), and only once. */
function checkYankRules(entry: YankEntry, context: EntryContext, bad: (why: string) => void): void {
  const { subject, digest } = entry;
  const attested = context.subjects.get(subject);
  if (attested !== undefined && attested !== digest) bad(`${subject} was attested with ${attested}, not ${digest}`);
  if (context.yanked.has(subject)) bad(`${subject} was already yanked`);
  context.yanked.add(subject);
}

/**
 * At most one decision and one consumption per approval; a consumption follows an approve decision of the same
 * approval with the same commitment (when the walk started at the first entry, the decision must be in it).
 */
function checkApprovalRules(
  entry: ApprovalDecisionEntry | ApprovalConsumptionEntry,
  context: EntryContext,
  bad: (why: string) => void,
): void {
  const { approval, commitment } = entry;
  const seen = context.approvals.get(approval);
  if (entry.type === 'toolseal.approval-decision/v1') {
    if (seen?.decision !== undefined || seen?.consumed) bad(`approval ${approval} was already decided`);
    context.approvals.set(approval, { commitment, decision: entry.decision, consumed: seen?.consumed ?? false });
    return;
  }
  if (seen === undefined) {
    if (context.fromStart) bad(`approval ${approval} is consumed without an earlier decision`);
  } else {
    if (seen.consumed) bad(`approval ${approval} was already consumed`);
    if (seen.decision === 'deny') bad(`approval ${approval} is consumed after it was denied`);
    if (seen.commitment !== commitment)
      bad(`approval ${approval} is consumed with another commitment than it was decided with`);
  }
  context.approvals.set(approval, { commitment, decision: seen?.decision, consumed: true });
}

/** A key entry introduces a new kid, retires only a logged one, and agrees with the JWKS. */
function checkKeyRules(entry: KeyEntry, context: EntryContext, bad: (why: string) => void): void {
  const { kid, retires } = entry;
  if (context.loggedKids.has(kid)) bad(`key ${kid} was already introduced by an earlier key entry`);
  if (retires !== null && !context.loggedKids.has(retires.kid))
    bad(`retires key ${retires.kid}, which no earlier key entry introduced`);
  context.loggedKids.add(kid);
  if (context.jwks !== undefined) checkKeyAgainstJwks(entry, context.jwks, bad);
}

/** The JWKS publishes the logged key (same public key, same nbf) and the retired key's exp is the logged notAfter. */
function checkKeyAgainstJwks(entry: KeyEntry, jwks: Jwks, bad: (why: string) => void): void {
  const { kid, publicJwk, notBefore, retires } = entry;
  const published = jwks.keys.find((key) => key.kid === kid);
  if (published === undefined) {
    bad(`key ${kid} is not in the registry's JWKS`);
    return;
  }
  if (published.x !== publicJwk.x) bad(`the JWKS holds another public key under kid ${kid}`);
  if (published.nbf !== notBefore)
    bad(`the JWKS says key ${kid} is valid from ${published.nbf}, the log says ${notBefore}`);
  if (retires === null) return;
  const old = jwks.keys.find((key) => key.kid === retires.kid);
  if (old === undefined) bad(`the retired key ${retires.kid} is not in the JWKS`);
  else if (old.exp !== retires.notAfter)
    bad(`the JWKS says key ${old.kid} expires at ${String(old.exp)}, the log says ${retires.notAfter}`);
}

// One audit of a registry's transparency log from the outside (an RFC 9162 §8.3 monitor), as a chain of steps:
//  1. the log key: the caller's verifier string, else the state's, else trust on first use (GET /v1/log/key);
//  2. the C2SP tlog-checkpoint, a signed note verified with that key (and, with a state, the same origin);
//  2b. with a witness policy (C2SP tlog-policy), the checkpoint's quorum of cosignatures (else WITNESS_QUORUM);
//  3. consistency with the remembered tree (consistency.ts): a rollback or fork REFUSES the audit;
//  4-5. the new entries from the entry bundles, each checked, folded into the frontier to the signed root (walk.ts);
//  6. only when every check passed is a next state returned (auditWithStateFile saves it atomically).
// A registry problem is never thrown; an invalid argument (a malformed log key or state) throws BAD_REQUEST.

import { RegistryClient } from '../client/registry-client.ts';
import { encodeBase64 } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { type Checkpoint, verifyCheckpoint } from '../log/checkpoint.ts';
import { type NoteVerifier, parseVerifierString } from '../log/note.ts';
import { checkWitnessQuorum, type WitnessPolicy } from '../log/policy.ts';
import { ROUTES } from '../protocol/routes.ts';
import { checkConsistency } from './consistency.ts';
import { type AuditReport, type AuditRun, addProblem, createReport, describeFetchFailure } from './report.ts';
import { describeError } from '../core/errors.ts';
import { AUDIT_STATE_TYPE, type AuditState, readAuditStateFile, writeAuditStateFile } from './state.ts';
import { walkNewEntries } from './walk.ts';

export interface AuditOptions {
  /** Registry base URL, e.g. http://127.0.0.1:8787. */
  registry: string;
  /** What the last successful audit remembered; undefined for a first audit (the whole log is walked). */
  state?: AuditState;
  /** A note verifier string for the log key; overrides the state's. */
  logKey?: string;
  /** Injected for tests and proxies; defaults to the global fetch. */
  fetch?: typeof globalThis.fetch;
  clock?: () => Date;
  /** Parallel blob fetches (default 8). */
  concurrency?: number;
  /** Per-request timeout in milliseconds (default 30 s). */
  timeoutMs?: number;
  /** A C2SP tlog-policy the checkpoint must meet (its quorum of verified cosignatures), else WITNESS_QUORUM. */
  witnessPolicy?: WitnessPolicy;
  /** POSIX seconds cosignature timestamps are compared with (later ones are ignored); default: now. */
  nowSeconds?: number;
  /** Every new entry walked, in index order (the monitor, src/audit/monitor.ts). */
  onEntry?: (index: number, data: Uint8Array) => void;
}

export interface AuditResult {
  report: AuditReport;
  /** The state to save: only when report.ok. */
  nextState: AuditState | undefined;
}

const DEFAULT_CONCURRENCY = 8;
const DEFAULT_TIMEOUT_MS = 30_000;
/** Manifests are served with their $refs inlined, which can exceed the client's 8 MiB default. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

interface LogKey {
  text: string;
  verifier: NoteVerifier;
}

interface SignedCheckpoint {
  note: string;
  checkpoint: Checkpoint;
}

/** Audit the registry's log once. Never throws for a registry problem: every problem is in the report. */
export async function runAudit(options: AuditOptions): Promise<AuditResult> {
  const base = options.registry.replace(/\/+$/, '');
  const flagKey = options.logKey === undefined ? undefined : parseLogKeyArgument(options.logKey);
  const client = new RegistryClient(base, {
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const run: AuditRun = {
    client,
    report: createReport(base, options.state),
    state: options.state,
    onEntry: options.onEntry,
  };
  if (run.state !== undefined && run.state.registry !== base) {
    run.report.warnings.push(`the state file was written for ${run.state.registry}, not ${base}`);
  }
  const logKey = await resolveLogKey(run, flagKey);
  if (logKey === undefined) return finishAudit(run.report);
  const signed = await fetchCheckpoint(run, logKey.verifier);
  if (signed === undefined) return finishAudit(run.report);
  if (options.witnessPolicy !== undefined) {
    try {
      const now = options.nowSeconds ?? Date.now() / 1000;
      checkWitnessQuorum(signed.note, options.witnessPolicy, logKey.verifier.publicKey, now);
    } catch (error) {
      addProblem(run.report, 'WITNESS_QUORUM', error instanceof ToolsealError ? error.message : describeError(error));
      return finishAudit(run.report);
    }
  }
  if (!(await checkConsistency(run, signed.checkpoint))) return finishAudit(run.report);
  const concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
  const walk = await walkNewEntries(run, signed.checkpoint, concurrency);
  return finishAudit(run.report, {
    type: AUDIT_STATE_TYPE,
    registry: base,
    logKey: logKey.text,
    origin: signed.checkpoint.origin,
    size: signed.checkpoint.size,
    rootHash: encodeBase64(signed.checkpoint.rootHash),
    frontier: walk.frontier.map(encodeBase64),
    loggedKids: walk.loggedKids,
    checkpoint: signed.note,
    auditedAt: (options.clock ?? (() => new Date()))().toISOString(),
  });
}

/**
 * runAudit with a state file: read it (if it exists), audit, and save the next state atomically only when
 * the audit fully passed. Without `stateFile` nothing is read or written.
 */
export async function auditWithStateFile(
  options: Omit<AuditOptions, 'state'> & { stateFile?: string },
): Promise<AuditReport> {
  const { stateFile, ...rest } = options;
  const loaded = stateFile === undefined ? undefined : await readAuditStateFile(stateFile);
  const { report, nextState } = await runAudit({ ...rest, ...(loaded ? { state: loaded.state } : {}) });
  report.stateFile = stateFile ?? null;
  if (stateFile !== undefined && report.ok && nextState !== undefined) {
    report.stateWritten = await writeAuditStateFile(stateFile, nextState, loaded?.text);
    if (!report.stateWritten)
      report.warnings.push('the state file changed while auditing (another audit?); it was not overwritten');
  }
  return report;
}

function finishAudit(report: AuditReport, nextState?: AuditState): AuditResult {
  report.ok = report.problems.length === 0;
  return { report, nextState: report.ok ? nextState : undefined };
}

function parseLogKeyArgument(text: string): LogKey {
  try {
    return { text, verifier: parseVerifierString(text) };
  } catch (error) {
    throw new ToolsealError('BAD_REQUEST', `--log-key: ${describeError(error)}`);
  }
}

/** Step 1: the log key, and where it came from; undefined (and a problem) when none could be had. */
async function resolveLogKey(run: AuditRun, flagKey: LogKey | undefined): Promise<LogKey | undefined> {
  const { report, state } = run;
  if (flagKey !== undefined) {
    report.logKey = { verifier: flagKey.text, source: 'flag' };
    if (state !== undefined && state.logKey !== flagKey.text) {
      report.warnings.push(
        'the log key given differs from the one remembered in the state file; the given key is used and will be remembered',
      );
    }
    return flagKey;
  }
  if (state !== undefined) {
    report.logKey = { verifier: state.logKey, source: 'state' };
    return { text: state.logKey, verifier: parseVerifierString(state.logKey) };
  }
  let text: string;
  try {
    text = (await run.client.getText(ROUTES.logKey)).trim();
  } catch (error) {
    addProblem(report, 'FETCH_FAILED', describeFetchFailure(error));
    return undefined;
  }
  let verifier: NoteVerifier;
  try {
    verifier = parseVerifierString(text);
  } catch (error) {
    addProblem(
      report,
      'LOG_KEY_INVALID',
      `GET ${ROUTES.logKey} did not return a note verifier: ${describeError(error)}`,
    );
    return undefined;
  }
  report.logKey = { verifier: text, source: 'tofu' };
  report.warnings.push(
    `no log key given or remembered: trusting the key GET ${ROUTES.logKey} served (trust on first use)`,
  );
  return { text, verifier };
}

/** Step 2: the signed checkpoint, verified with the log key and of the remembered origin. */
async function fetchCheckpoint(run: AuditRun, verifier: NoteVerifier): Promise<SignedCheckpoint | undefined> {
  const { report, state } = run;
  let note: string;
  try {
    note = await run.client.getText(ROUTES.logCheckpoint);
  } catch (error) {
    addProblem(report, 'FETCH_FAILED', describeFetchFailure(error));
    return undefined;
  }
  let checkpoint: Checkpoint;
  try {
    checkpoint = verifyCheckpoint(note, verifier);
  } catch (error) {
    addProblem(
      report,
      'CHECKPOINT_INVALID',
      `the checkpoint does not verify with the log key: ${describeError(error)}`,
    );
    return undefined;
  }
  report.origin = checkpoint.origin;
  report.checkpoint = { size: checkpoint.size, rootHash: encodeBase64(checkpoint.rootHash) };
  if (state !== undefined && checkpoint.origin !== state.origin) {
    addProblem(
      report,
      'CHECKPOINT_INVALID',
      `the checkpoint is for origin ${JSON.stringify(checkpoint.origin)}, the state remembers ${JSON.stringify(state.origin)}`,
    );
    return undefined;
  }
  if (checkpoint.origin !== verifier.name) {
    report.warnings.push(
      `the checkpoint origin ${JSON.stringify(checkpoint.origin)} is not the log key's name ${JSON.stringify(verifier.name)}`,
    );
  }
  return { note, checkpoint };
}

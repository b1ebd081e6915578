// Audit a registry's transparency log from the outside: checkpoint signature, consistency with what was seen
// before, every new entry (hashes, attestation signatures, manifest bytes, yank and key shapes). No database.
//
// The algorithm (one run):
//  1. Log key: the caller's verifier string, else the one remembered in the state, else trust on first use
//     (GET /v1/log/key). The report says which.
//  2. GET /v1/log/checkpoint and verify its signed note (and, with a state, that the origin is unchanged).
//  3. With a state (size m, root r): a smaller size is a rollback, the same size with another root a fork,
//     a larger size needs GET /v1/log/proof/consistency?from=m&to=n to verify (RFC 9162 §2.1.4.2) — any of
//     these failing REFUSES the audit: nothing else is trusted and the state must not advance.
//  4. Walk the new entries m..n-1 from the entry bundles (tlog-tiles, full or partial), folding each leaf
//     hash into the "frontier" — the hashes of the perfect subtrees on the tree's right edge, one per set
//     bit of the size (O(log n)) — so the new root is recomputed without the old entries. It must equal
//     the checkpoint's root. Without a state the walk starts at 0.
//  5. Each entry is JCS JSON of one kind (src/registry/transparency-log.ts): an attestation (a flattened
//     JWS: signature against the JWKS, key valid at storedAt, key logged before it, then GET the manifest
//     bytes by digest: digest, size, canonical form and name@version must match), a yank or a key entry
//     (shape; a key's kid is the RFC 7638 thumbprint of its JWK and is in the JWKS with the logged window).
//  6. Only when every check passed is a next state returned (the caller saves it atomically).
//
// Problems are collected, never thrown: a run reports everything it found. A programming error or an
// invalid argument (a malformed log key, a malformed state) throws ToolsealError('BAD_REQUEST').

import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ToolsealError } from '../core/errors.ts';
import {
  canonicalizeToBytes,
  computeDigest,
  isSha256Digest,
  parseStrict,
  type JsonObject,
  type JsonValue,
} from '../pipeline/index.ts';
import { computeKid, verifyAttestation, type Jwks, type JwksKey } from '../attest/index.ts';
import {
  HASH_SIZE,
  computeEntryBundleWidth,
  formatEntryBundlePath,
  hashChildren,
  hashEmpty,
  hashLeaf,
  parseEntryBundle,
  parseVerifierString,
  verifyCheckpoint,
  verifyConsistencyProof,
  type Checkpoint,
  type NoteVerifier,
} from '../log/index.ts';
import { writeFileAtomic } from '../lock/atomic-file.ts';

/** The `type` of a state file; a change to its meaning is a new version. */
export const AUDIT_STATE_TYPE = 'toolseal.audit-state/v1';

/** What an auditor remembers between runs: O(log n) hashes plus the logged key ids. */
export interface AuditState {
  type: typeof AUDIT_STATE_TYPE;
  /** The registry URL audited (informational: a different URL is only a warning). */
  registry: string;
  /** The log's note verifier string ("<origin>+<key id>+<key>") checkpoints must be signed by. */
  logKey: string;
  /** The checkpoint origin line. */
  origin: string;
  /** Tree size and root (base64) of the last checkpoint that fully passed. */
  size: number;
  rootHash: string;
  /** Base64 hashes of the perfect subtrees on the right edge, largest (leftmost) first: one per set bit of size. */
  frontier: string[];
  /** Every signing key id a key entry in leaves [0, size) introduced, in log order. */
  loggedKids: string[];
  /** The signed checkpoint itself, as evidence (a later fork can be proven with it). */
  checkpoint: string;
  /** When that audit finished (RFC 3339). */
  auditedAt: string;
}

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
  | 'JWKS_INVALID';

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
}

export interface AuditResult {
  report: AuditReport;
  /** The state to save: only when report.ok. */
  nextState: AuditState | undefined;
}

// ---------------------------------------------------------------------------------------------
// The frontier: right-edge perfect-subtree hashes (RFC 6962 tree of any size from O(log n) hashes).

/** Number of set bits of a safe integer (the frontier's length for a tree of that size). */
export function frontierLength(size: number): number {
  let bits = 0;
  for (let n = size; n > 0; n = Math.floor(n / 2)) bits += n % 2;
  return bits;
}

/** Fold one leaf hash into the frontier of a tree of `size` leaves (mutates `frontier`). */
export function appendToFrontier(frontier: Uint8Array[], size: number, leafHash: Uint8Array): void {
  let hash = leafHash;
  let n = size;
  while (n % 2 === 1) {
    const left = frontier.pop();
    if (left === undefined) throw new ToolsealError('INTERNAL', 'frontier is shorter than its size implies');
    hash = hashChildren(left, hash);
    n = (n - 1) / 2;
  }
  frontier.push(hash);
}

/** RFC 6962 MTH of the tree the frontier describes: MTH = H(P_1, H(P_2, ... P_k)), the empty hash for none. */
export function frontierRoot(frontier: readonly Uint8Array[]): Uint8Array {
  let root = frontier[frontier.length - 1];
  if (root === undefined) return hashEmpty();
  for (let i = frontier.length - 2; i >= 0; i--) root = hashChildren(frontier[i]!, root);
  return root;
}

// ---------------------------------------------------------------------------------------------
// State files.

function badState(why: string): never {
  throw new ToolsealError('BAD_REQUEST', `not a valid audit state: ${why}`);
}

function decodeHash(text: unknown, what: string): Uint8Array {
  const bytes = typeof text === 'string' ? decodeBase64Strict(text) : undefined;
  if (bytes === undefined || bytes.byteLength !== HASH_SIZE) badState(`${what} must be base64 of ${HASH_SIZE} bytes`);
  return bytes;
}

/**
 * Parse and check a state file's text: its checkpoint must verify with its log key and match its size, root
 * and origin, and its frontier must fold to that root. Throws BAD_REQUEST otherwise.
 */
export function parseAuditState(text: string): AuditState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    badState('not JSON');
  }
  if (!isObject(value)) badState('not a JSON object');
  const s = value as Record<string, unknown>;
  if (s['type'] !== AUDIT_STATE_TYPE) badState(`type must be ${AUDIT_STATE_TYPE}`);
  for (const field of ['registry', 'logKey', 'origin', 'rootHash', 'checkpoint', 'auditedAt'] as const) {
    if (typeof s[field] !== 'string') badState(`${field} must be a string`);
  }
  const size = s['size'];
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    badState('size must be a non-negative safe integer');
  const frontierText = s['frontier'];
  if (!Array.isArray(frontierText) || frontierText.length !== frontierLength(size))
    badState('frontier must hold one hash per set bit of size');
  const frontier = frontierText.map((hash, i) => decodeHash(hash, `frontier[${i}]`));
  const rootHash = decodeHash(s['rootHash'], 'rootHash');
  if (!equalBytes(frontierRoot(frontier), rootHash)) badState('frontier does not fold to rootHash');
  const kids = s['loggedKids'];
  if (!Array.isArray(kids) || kids.some((kid) => typeof kid !== 'string'))
    badState('loggedKids must be a list of strings');
  try {
    parseVerifierString(s['logKey'] as string);
  } catch {
    badState('logKey is not a note verifier string');
  }
  // The remembered checkpoint vouches for size, root and origin: it must verify with the remembered key.
  let checkpoint: Checkpoint;
  try {
    checkpoint = verifyCheckpoint(s['checkpoint'] as string, s['logKey'] as string);
  } catch {
    badState('checkpoint is not a checkpoint signed by logKey');
  }
  if (checkpoint.size !== size || !equalBytes(checkpoint.rootHash, rootHash) || checkpoint.origin !== s['origin']) {
    badState('size, rootHash and origin must be those of the signed checkpoint');
  }
  return {
    type: AUDIT_STATE_TYPE,
    registry: s['registry'] as string,
    logKey: s['logKey'] as string,
    origin: s['origin'] as string,
    size,
    rootHash: s['rootHash'] as string,
    frontier: frontierText as string[],
    loggedKids: kids as string[],
    checkpoint: s['checkpoint'] as string,
    auditedAt: s['auditedAt'] as string,
  };
}

export function formatAuditState(state: AuditState): string {
  return JSON.stringify(state, null, 2) + '\n';
}

/** Read a state file: undefined when it does not exist; BAD_REQUEST when it is not a valid state. */
export async function readAuditStateFile(file: string): Promise<{ state: AuditState; text: string } | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  }
  return { state: parseAuditState(text), text };
}

/**
 * Write `state` atomically (writeFileAtomic: temporary file in the same folder, fsync, rename). `expected` is
 * the text the audit started from (undefined: the file did not exist): if the file changed meanwhile (another
 * audit advanced it), nothing is written and false is returned.
 */
export async function writeAuditStateFile(
  file: string,
  state: AuditState,
  expected: string | undefined,
): Promise<boolean> {
  await mkdir(dirname(file), { recursive: true });
  const current = await readFile(file, 'utf8').catch((error: { code?: unknown }) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (current !== expected) return false;
  await writeFileAtomic(file, formatAuditState(state));
  return true;
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

// ---------------------------------------------------------------------------------------------
// The audit.

class FetchFailure extends Error {}

interface EntryContext {
  jwks: Jwks | undefined;
  loggedKids: Set<string>;
  /** name@version → digest, for attestations seen in this walk. */
  subjects: Map<string, string>;
  yanked: Set<string>;
}

/** Audit the registry's log once. Never throws for a registry problem: every problem is in the report. */
export async function runAudit(options: AuditOptions): Promise<AuditResult> {
  const base = options.registry.replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const clock = options.clock ?? (() => new Date());
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const state = options.state;
  const flagKey = options.logKey === undefined ? undefined : parseVerifierArgument(options.logKey);

  const report: AuditReport = {
    ok: false,
    registry: base,
    logKey: null,
    origin: null,
    previous: state ? { size: state.size, rootHash: state.rootHash } : null,
    checkpoint: null,
    consistency: 'not-checked',
    entries: {
      from: state?.size ?? 0,
      to: state?.size ?? 0,
      checked: 0,
      attestation: 0,
      yank: 0,
      key: 0,
      malformed: 0,
    },
    blobs: { checked: 0 },
    problems: [],
    warnings: [],
    stateFile: null,
    stateWritten: false,
  };
  const problem = (code: AuditProblemCode, message: string, index?: number): void => {
    report.problems.push(index === undefined ? { code, message } : { code, message, index });
  };
  const finish = (nextState?: AuditState): AuditResult => {
    report.ok = report.problems.length === 0;
    return { report, nextState: report.ok ? nextState : undefined };
  };

  async function get(path: string): Promise<Uint8Array> {
    let response: Response;
    try {
      response = await fetchImpl(`${base}${path}`, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    } catch (cause) {
      const reason = (cause as { cause?: { code?: unknown } } | null)?.cause?.code;
      throw new FetchFailure(
        `GET ${path}: ${cause instanceof Error ? cause.message : String(cause)}${typeof reason === 'string' ? ` (${reason})` : ''}`,
      );
    }
    const bytes = new Uint8Array(await response.arrayBuffer().catch(() => new ArrayBuffer(0)));
    if (response.status !== 200) {
      let detail = '';
      try {
        const body = JSON.parse(new TextDecoder().decode(bytes)) as { code?: unknown; detail?: unknown };
        if (typeof body.code === 'string')
          detail = ` ${body.code}${typeof body.detail === 'string' ? `: ${body.detail}` : ''}`;
      } catch {
        // not a problem+json body
      }
      throw new FetchFailure(`GET ${path}: HTTP ${response.status}${detail}`);
    }
    return bytes;
  }

  if (state !== undefined && state.registry !== base) {
    report.warnings.push(`the state file was written for ${state.registry}, not ${base}`);
  }

  // 1. The log key.
  let verifier: NoteVerifier;
  let verifierText: string;
  if (flagKey !== undefined) {
    verifier = flagKey;
    verifierText = options.logKey!;
    report.logKey = { verifier: verifierText, source: 'flag' };
    if (state !== undefined && state.logKey !== verifierText) {
      report.warnings.push(
        'the log key given differs from the one remembered in the state file; the given key is used and will be remembered',
      );
    }
  } else if (state !== undefined) {
    verifierText = state.logKey;
    verifier = parseVerifierString(verifierText);
    report.logKey = { verifier: verifierText, source: 'state' };
  } else {
    try {
      verifierText = new TextDecoder('utf-8', { fatal: true }).decode(await get('/v1/log/key')).trim();
    } catch (error) {
      problem('FETCH_FAILED', error instanceof Error ? error.message : String(error));
      return finish();
    }
    try {
      verifier = parseVerifierString(verifierText);
    } catch (error) {
      problem('LOG_KEY_INVALID', `GET /v1/log/key did not return a note verifier: ${messageOf(error)}`);
      return finish();
    }
    report.logKey = { verifier: verifierText, source: 'tofu' };
    report.warnings.push(
      'no log key given or remembered: trusting the key GET /v1/log/key served (trust on first use)',
    );
  }

  // 2. The checkpoint.
  let note: string;
  let checkpoint: Checkpoint;
  try {
    note = new TextDecoder('utf-8', { fatal: true }).decode(await get('/v1/log/checkpoint'));
  } catch (error) {
    problem('FETCH_FAILED', error instanceof Error ? error.message : String(error));
    return finish();
  }
  try {
    checkpoint = verifyCheckpoint(note, verifier);
  } catch (error) {
    problem('CHECKPOINT_INVALID', `the checkpoint does not verify with the log key: ${messageOf(error)}`);
    return finish();
  }
  report.origin = checkpoint.origin;
  const rootText = encodeBase64(checkpoint.rootHash);
  report.checkpoint = { size: checkpoint.size, rootHash: rootText };
  if (state !== undefined && checkpoint.origin !== state.origin) {
    problem(
      'CHECKPOINT_INVALID',
      `the checkpoint is for origin ${JSON.stringify(checkpoint.origin)}, the state remembers ${JSON.stringify(state.origin)}`,
    );
    return finish();
  }
  if (checkpoint.origin !== verifier.name) {
    report.warnings.push(
      `the checkpoint origin ${JSON.stringify(checkpoint.origin)} is not the log key's name ${JSON.stringify(verifier.name)}`,
    );
  }

  // 3. Consistency with what was seen before.
  const frontier: Uint8Array[] = state ? state.frontier.map((hash) => decodeBase64Strict(hash)!) : [];
  const start = state?.size ?? 0;
  if (state === undefined) {
    report.consistency = 'first-audit';
  } else {
    const oldRoot = decodeBase64Strict(state.rootHash)!;
    if (checkpoint.size < state.size) {
      report.consistency = 'refused';
      problem(
        'LOG_ROLLBACK',
        `the log went back from size ${state.size} to ${checkpoint.size}: the registry rewrote history`,
      );
      return finish();
    }
    if (checkpoint.size === state.size) {
      if (!equalBytes(checkpoint.rootHash, oldRoot)) {
        report.consistency = 'refused';
        problem(
          'LOG_FORK',
          `two different roots for tree size ${state.size} (remembered ${state.rootHash}, now ${rootText}): the log forked`,
        );
        return finish();
      }
      report.consistency = 'unchanged';
    } else if (state.size === 0) {
      report.consistency = 'proven';
    } else {
      const path = `/v1/log/proof/consistency?from=${state.size}&to=${checkpoint.size}`;
      let proof: Uint8Array[];
      try {
        proof = parseProofResponse(await get(path), { from: state.size, to: checkpoint.size });
      } catch (error) {
        report.consistency = error instanceof FetchFailure ? 'not-checked' : 'refused';
        if (error instanceof FetchFailure)
          problem(
            'FETCH_FAILED',
            `${error.message}: no consistency proof from size ${state.size} to ${checkpoint.size}`,
          );
        else problem('LOG_FORK', `GET ${path} did not return a consistency proof: ${messageOf(error)}`);
        return finish();
      }
      try {
        verifyConsistencyProof(state.size, checkpoint.size, oldRoot, checkpoint.rootHash, proof);
      } catch (error) {
        report.consistency = 'refused';
        problem(
          'LOG_FORK',
          `the checkpoint of size ${checkpoint.size} is not consistent with the remembered size ${state.size}: ${messageOf(error)}`,
        );
        return finish();
      }
      report.consistency = 'proven';
    }
  }

  // 4-5. Walk the new entries.
  const context: EntryContext = {
    jwks: undefined,
    loggedKids: new Set(state?.loggedKids ?? []),
    subjects: new Map(),
    yanked: new Set(),
  };
  report.entries.from = start;
  report.entries.to = checkpoint.size;
  if (checkpoint.size > start) {
    try {
      context.jwks = parseJwks(await get('/.well-known/jwks.json'), (message) => problem('JWKS_INVALID', message));
    } catch (error) {
      problem(
        error instanceof FetchFailure ? 'FETCH_FAILED' : 'JWKS_INVALID',
        `${messageOf(error)}; attestation signatures and key entries were not checked`,
      );
    }
  }

  const blobChecks = new Map<string, Promise<BlobFacts | undefined>>();
  const pending = new Set<Promise<void>>();
  const schedule = async (work: () => Promise<void>): Promise<void> => {
    while (pending.size >= concurrency) await Promise.race(pending);
    const task = work().finally(() => pending.delete(task));
    pending.add(task);
  };

  const checkBlob = (digest: string): Promise<BlobFacts | undefined> => {
    let check = blobChecks.get(digest);
    if (check === undefined) {
      check = (async () => {
        let bytes: Uint8Array;
        try {
          bytes = await get(`/v1/blobs/${digest}`);
        } catch (error) {
          return {
            failure: { code: 'FETCH_FAILED', message: `manifest bytes for ${digest}: ${messageOf(error)}` },
          } satisfies BlobFacts;
        }
        report.blobs.checked++;
        return inspectBlob(bytes, digest);
      })();
      blobChecks.set(digest, check);
    }
    return check;
  };

  let walked = true;
  const firstBundle = Math.floor(start / 256);
  const lastBundle = checkpoint.size === 0 ? -1 : Math.floor((checkpoint.size - 1) / 256);
  for (let bundle = firstBundle; bundle <= lastBundle && walked; bundle++) {
    const width = computeEntryBundleWidth(bundle, checkpoint.size);
    const path = `/v1/log/${formatEntryBundlePath(bundle, width)}`;
    let entries: Uint8Array[];
    try {
      entries = parseEntryBundle(await get(path));
    } catch (error) {
      problem(
        error instanceof FetchFailure ? 'FETCH_FAILED' : 'ENTRY_MALFORMED',
        `${error instanceof FetchFailure ? '' : `GET ${path}: `}${messageOf(error)}`,
      );
      walked = false;
      break;
    }
    if (entries.length !== width) {
      problem('ENTRY_MALFORMED', `GET ${path} returned ${entries.length} entries, expected ${width}`);
      walked = false;
      break;
    }
    for (let offset = Math.max(0, start - bundle * 256); offset < width; offset++) {
      const index = bundle * 256 + offset;
      const data = entries[offset]!;
      appendToFrontier(frontier, index, hashLeaf(data));
      report.entries.checked++;
      const kind = await checkEntry(
        index,
        data,
        context,
        (code, message) => problem(code, message, index),
        (attestation) =>
          schedule(async () => {
            const facts = await checkBlob(attestation.digest);
            for (const failure of compareBlob(facts, attestation)) problem(failure.code, failure.message, index);
          }),
      );
      report.entries[kind]++;
    }
  }
  await Promise.all(pending);

  // The recomputed root must be the checkpoint's.
  if (walked) {
    const root = frontierRoot(frontier);
    if (!equalBytes(root, checkpoint.rootHash)) {
      problem(
        'ROOT_MISMATCH',
        `entries ${start}..${checkpoint.size - 1} do not hash to the checkpoint root (computed ${encodeBase64(root)}, signed ${rootText})`,
      );
    }
  }
  if (context.jwks !== undefined && walked) {
    for (const key of context.jwks.keys) {
      if (!context.loggedKids.has(key.kid))
        report.warnings.push(`JWKS key ${key.kid} is not (yet) in the log up to size ${checkpoint.size}`);
    }
  }

  return finish({
    type: AUDIT_STATE_TYPE,
    registry: base,
    logKey: verifierText,
    origin: checkpoint.origin,
    size: checkpoint.size,
    rootHash: rootText,
    frontier: frontier.map(encodeBase64),
    loggedKids: [...context.loggedKids],
    checkpoint: note,
    auditedAt: clock().toISOString(),
  });
}

// ---------------------------------------------------------------------------------------------
// Entries.

type EntryKind = 'attestation' | 'yank' | 'key' | 'malformed';
type Report = (code: AuditProblemCode, message: string) => void;

interface AttestationFacts {
  digest: string;
  subjectName: string;
  size: number;
}

interface BlobFacts {
  failure?: { code: AuditProblemCode; message: string };
  digest?: string;
  size?: number;
  subjectName?: string;
}

const ENTRY_PARSE_LIMITS = { maxBytes: 0xffff, maxDepth: 16 };
const MANIFEST_PARSE_LIMITS = { maxBytes: Number.MAX_SAFE_INTEGER, maxDepth: 1000 };
const KID_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

async function checkEntry(
  index: number,
  data: Uint8Array,
  context: EntryContext,
  report: Report,
  checkManifest: (attestation: AttestationFacts) => Promise<void>,
): Promise<EntryKind> {
  let value: JsonValue;
  try {
    value = parseStrict(data, ENTRY_PARSE_LIMITS).value;
  } catch (error) {
    report('ENTRY_MALFORMED', `entry ${index} is not strict JSON: ${messageOf(error)}`);
    return 'malformed';
  }
  if (!isObject(value)) {
    report('ENTRY_MALFORMED', `entry ${index} is not a JSON object`);
    return 'malformed';
  }
  if (!equalBytes(canonicalizeToBytes(value), data)) {
    report('ENTRY_MALFORMED', `entry ${index} is not in JCS canonical form`);
    return 'malformed';
  }
  const type = value['type'];
  if (type === 'toolseal.yank/v1') {
    checkYankEntry(index, value, context, report);
    return 'yank';
  }
  if (type === 'toolseal.key/v1') {
    checkKeyEntry(index, value, context, report);
    return 'key';
  }
  if (type === undefined && hasExactKeys(value, ['payload', 'protected', 'signature'])) {
    await checkAttestationEntry(index, data, context, report, checkManifest);
    return 'attestation';
  }
  report('ENTRY_MALFORMED', `entry ${index} is neither an attestation, a yank nor a key entry`);
  return 'malformed';
}

async function checkAttestationEntry(
  index: number,
  data: Uint8Array,
  context: EntryContext,
  report: Report,
  checkManifest: (attestation: AttestationFacts) => Promise<void>,
): Promise<void> {
  if (context.jwks === undefined) return;
  let verified: Awaited<ReturnType<typeof verifyAttestation>>;
  try {
    verified = await verifyAttestation(data, context.jwks);
  } catch (error) {
    const code =
      error instanceof ToolsealError && (error.code === 'UNKNOWN_KEY' || error.code === 'KEY_NOT_VALID')
        ? error.code
        : 'SIGNATURE_INVALID';
    report(code, `attestation entry ${index}: ${messageOf(error)}`);
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
  const size = verified.statement.predicate.size;
  await checkManifest({ digest: verified.digest, subjectName: verified.subjectName, size });
}

/** What the manifest bytes say about themselves: digest, size, name@version, canonical form. */
function inspectBlob(bytes: Uint8Array, requested: string): BlobFacts {
  const digest = computeDigest(bytes);
  if (digest !== requested) return { digest, size: bytes.byteLength };
  let value: JsonValue;
  try {
    value = parseStrict(bytes, MANIFEST_PARSE_LIMITS).value;
  } catch (error) {
    return {
      digest,
      failure: { code: 'MANIFEST_INVALID', message: `manifest ${digest} is not strict JSON: ${messageOf(error)}` },
    };
  }
  if (!isObject(value) || typeof value['name'] !== 'string' || typeof value['version'] !== 'string') {
    return { digest, failure: { code: 'MANIFEST_INVALID', message: `manifest ${digest} has no name and version` } };
  }
  if (!equalBytes(canonicalizeToBytes(value), bytes)) {
    return {
      digest,
      failure: { code: 'MANIFEST_INVALID', message: `manifest ${digest} is not in JCS canonical form` },
    };
  }
  return { digest, size: bytes.byteLength, subjectName: `${value['name']}@${value['version']}` };
}

function compareBlob(
  facts: BlobFacts | undefined,
  attestation: AttestationFacts,
): { code: AuditProblemCode; message: string }[] {
  if (facts === undefined) return [];
  if (facts.failure && facts.failure.code === 'FETCH_FAILED') return [facts.failure];
  if (facts.digest !== attestation.digest) {
    return [
      {
        code: 'DIGEST_MISMATCH',
        message: `the bytes served for ${attestation.subjectName} hash to ${facts.digest}, but the attestation covers ${attestation.digest}`,
      },
    ];
  }
  if (facts.failure) return [facts.failure];
  const failures: { code: AuditProblemCode; message: string }[] = [];
  if (facts.size !== attestation.size) {
    failures.push({
      code: 'MANIFEST_INVALID',
      message: `manifest ${attestation.digest} is ${facts.size} bytes but its attestation says ${attestation.size}`,
    });
  }
  if (facts.subjectName !== attestation.subjectName) {
    failures.push({
      code: 'SUBJECT_MISMATCH',
      message: `manifest ${attestation.digest} is ${facts.subjectName} but its attestation is for ${attestation.subjectName}`,
    });
  }
  return failures;
}

function checkYankEntry(index: number, entry: JsonObject, context: EntryContext, report: Report): void {
  const bad = (why: string): void => report('YANK_ENTRY_INVALID', `yank entry ${index}: ${why}`);
  if (!hasExactKeys(entry, ['type', 'subject', 'digest', 'reason', 'yankedAt']))
    return bad('expected exactly type, subject, digest, reason, yankedAt');
  const { subject, digest, reason, yankedAt } = entry;
  if (typeof subject !== 'string' || !/^[^@\s]+\/[^@\s]+@[^@\s]+$/.test(subject))
    return bad('subject must be "<name>@<version>"');
  if (!isSha256Digest(digest)) return bad('digest must be sha256:<64 hex>');
  if (typeof reason !== 'string' || reason.trim().length === 0 || reason.length > 1000)
    return bad('reason must be 1 to 1000 characters');
  if (typeof yankedAt !== 'string' || !RFC3339.test(yankedAt) || Number.isNaN(Date.parse(yankedAt)))
    return bad('yankedAt must be an RFC 3339 time');
  const attested = context.subjects.get(subject);
  if (attested !== undefined && attested !== digest) bad(`${subject} was attested with ${attested}, not ${digest}`);
  if (context.yanked.has(subject)) bad(`${subject} was already yanked`);
  context.yanked.add(subject);
}

function checkKeyEntry(index: number, entry: JsonObject, context: EntryContext, report: Report): void {
  const bad = (why: string): void => report('KEY_ENTRY_INVALID', `key entry ${index}: ${why}`);
  if (!hasExactKeys(entry, ['type', 'kid', 'publicJwk', 'notBefore', 'retires']))
    return bad('expected exactly type, kid, publicJwk, notBefore, retires');
  const { kid, publicJwk, notBefore, retires } = entry;
  if (typeof kid !== 'string' || !KID_PATTERN.test(kid))
    return bad('kid must be an RFC 7638 thumbprint (43 base64url characters)');
  if (
    !isObject(publicJwk) ||
    publicJwk['kty'] !== 'OKP' ||
    publicJwk['crv'] !== 'Ed25519' ||
    typeof publicJwk['x'] !== 'string'
  ) {
    return bad('publicJwk must be an Ed25519 OKP key');
  }
  if ('d' in publicJwk) return bad('publicJwk holds private key material');
  if (computeKid({ crv: 'Ed25519', x: publicJwk['x'] }) !== kid)
    return bad(`kid ${kid} is not the RFC 7638 thumbprint of its publicJwk`);
  if (publicJwk['kid'] !== undefined && publicJwk['kid'] !== kid) return bad('publicJwk.kid differs from kid');
  if (typeof notBefore !== 'number' || !Number.isSafeInteger(notBefore) || notBefore < 0)
    return bad('notBefore must be seconds since the epoch');
  let retired: { kid: string; notAfter: number } | null = null;
  if (retires !== null) {
    if (!isObject(retires) || !hasExactKeys(retires, ['kid', 'notAfter']))
      return bad('retires must be null or {kid, notAfter}');
    const { kid: retiredKid, notAfter } = retires;
    if (typeof retiredKid !== 'string' || typeof notAfter !== 'number' || !Number.isSafeInteger(notAfter))
      return bad('retires must be null or {kid, notAfter}');
    retired = { kid: retiredKid, notAfter };
  }
  if (context.loggedKids.has(kid)) bad(`key ${kid} was already introduced by an earlier key entry`);
  if (retired !== null && !context.loggedKids.has(retired.kid))
    bad(`retires key ${retired.kid}, which no earlier key entry introduced`);
  context.loggedKids.add(kid);
  const jwks = context.jwks;
  if (jwks === undefined) return;
  const published = jwks.keys.find((key) => key.kid === kid);
  if (published === undefined) return bad(`key ${kid} is not in the registry's JWKS`);
  if (published.x !== publicJwk['x']) bad(`the JWKS holds another public key under kid ${kid}`);
  if (published.nbf !== notBefore)
    bad(`the JWKS says key ${kid} is valid from ${published.nbf}, the log says ${notBefore}`);
  if (retired !== null) {
    const old = jwks.keys.find((key) => key.kid === retired.kid);
    if (old === undefined) bad(`the retired key ${retired.kid} is not in the JWKS`);
    else if (old.exp !== retired.notAfter)
      bad(`the JWKS says key ${old.kid} expires at ${String(old.exp)}, the log says ${retired.notAfter}`);
  }
}

/** The JWKS, keeping only well-formed keys whose kid is their RFC 7638 thumbprint (others are reported). */
function parseJwks(bytes: Uint8Array, report: (message: string) => void): Jwks {
  const value = parseStrict(bytes, { maxBytes: 16 * 1024 * 1024, maxDepth: 16 }).value;
  if (!isObject(value) || !Array.isArray(value['keys']))
    throw new ToolsealError('BAD_REQUEST', 'the JWKS is not {"keys": [...]}');
  const keys: JwksKey[] = [];
  value['keys'].forEach((key, i) => {
    const ok =
      isObject(key) &&
      key['kty'] === 'OKP' &&
      key['crv'] === 'Ed25519' &&
      typeof key['x'] === 'string' &&
      typeof key['kid'] === 'string' &&
      typeof key['nbf'] === 'number' &&
      (key['exp'] === undefined || typeof key['exp'] === 'number');
    if (!ok) return report(`JWKS key ${i} is not an Ed25519 key with kid and nbf`);
    if (computeKid({ crv: 'Ed25519', x: key['x'] as string }) !== key['kid'])
      return report(`JWKS key ${String(key['kid'])} is not named by its RFC 7638 thumbprint`);
    keys.push(key as unknown as JwksKey);
  });
  return { keys };
}

function parseProofResponse(bytes: Uint8Array, expected: { from: number; to: number }): Uint8Array[] {
  const value = parseStrict(bytes, { maxBytes: 64 * 1024, maxDepth: 4 }).value;
  if (
    !isObject(value) ||
    value['from'] !== expected.from ||
    value['to'] !== expected.to ||
    !Array.isArray(value['hashes'])
  ) {
    throw new ToolsealError('PROOF_INVALID', `expected {from: ${expected.from}, to: ${expected.to}, hashes: [...]}`);
  }
  return value['hashes'].map((hash, i) => {
    const bytes = typeof hash === 'string' ? decodeBase64Strict(hash) : undefined;
    if (bytes === undefined || bytes.byteLength !== HASH_SIZE)
      throw new ToolsealError('PROOF_INVALID', `proof hash ${i} is not base64 of ${HASH_SIZE} bytes`);
    return bytes;
  });
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

function parseVerifierArgument(text: string): NoteVerifier {
  try {
    return parseVerifierString(text);
  } catch (error) {
    throw new ToolsealError('BAD_REQUEST', `--log-key: ${messageOf(error)}`);
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasExactKeys(value: JsonObject, keys: readonly string[]): boolean {
  const own = Object.keys(value);
  return own.length === keys.length && keys.every((key) => Object.prototype.hasOwnProperty.call(value, key));
}

function messageOf(error: unknown): string {
  if (error instanceof ToolsealError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** RFC 4648 §4 base64 with padding, canonical only (re-encoding gives the same text). */
function decodeBase64Strict(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const decoded = Buffer.from(text, 'base64');
  if (decoded.toString('base64') !== text) return undefined;
  return new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
}

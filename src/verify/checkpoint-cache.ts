// What a Verifier already proved about one log: the checkpoint notes it verified (C2SP tlog-checkpoint, cached by
// their exact text, each with the tree nodes its inclusion proofs established) and the latest of them, which every other checkpoint must be consistent with (RFC 9162 §2.1.4).

import { encodeBase64, equalBytes } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import {
  parseCheckpoint,
  parseNote,
  verifyCheckpoint,
  verifyConsistencyProof,
  type Checkpoint,
  type NoteVerifier,
} from '../log/index.ts';
import type { ProvenCheckpoint, VerifiedCheckpoint } from './log-evidence.ts';
import { ProvenNodes } from './proven-nodes.ts';

/** The sizes a consistency proof must span (RFC 9162 §2.1.4: from the smaller tree to the larger one). */
export interface ConsistencyRange {
  from: number;
  to: number;
}

/** A consistency proof as fetched (GET /v1/log/proof/consistency): nothing in it is trusted before it verifies. */
export interface ConsistencyEvidence extends ConsistencyRange {
  hashes: readonly Uint8Array[];
}

const MAX_CACHED_NOTES = 1000;

/**
 * The proven checkpoints of the log one note verifier signs for. A note is verified (signature, origin) once and
 * then answered from the cache by its exact text; any other note is verified in full and must be consistent with
 * the latest proven checkpoint: same size and root, or a consistency proof between the two sizes that verifies
 * against both signed roots. Two signed roots for one size are LOG_INCONSISTENT (a fork); a missing or bad proof
 * leaves the new checkpoint unproven (thrown as a plain error, which the log-evidence stage reports as NOT_IN_LOG).
 */
export class CheckpointCache {
  private readonly notes = new Map<string, ProvenCheckpoint>();
  private latestCheckpoint: Checkpoint | undefined;
  private latestNote = '';

  constructor(readonly verifier: NoteVerifier) {}

  /** The latest proven checkpoint (the largest tree seen), if any, with its note. */
  get latest(): VerifiedCheckpoint | undefined {
    const latest = this.latestCheckpoint;
    if (latest === undefined) return undefined;
    return { origin: latest.origin, size: latest.size, rootHash: encodeBase64(latest.rootHash), note: this.latestNote };
  }

  /**
   * The consistency proof `note` needs before it can be admitted, or undefined (already proven, the first one,
   * same size, or unreadable: then admit refuses it without a proof). Reads the note without trusting it.
   */
  neededRange(note: string): ConsistencyRange | undefined {
    const latest = this.latestCheckpoint;
    if (latest === undefined || this.notes.has(note)) return undefined;
    let size: number;
    try {
      size = parseCheckpoint(parseNote(note).body).size;
    } catch {
      return undefined;
    }
    return rangeBetween(latest.size, size);
  }

  /**
   * The checkpoint `note` proves, verified (or proven before). `consistency` is the proof neededRange asked for;
   * it is only read when the note is new and of another size than the latest proven checkpoint.
   */
  admit(note: string, consistency?: ConsistencyEvidence): ProvenCheckpoint {
    const known = this.notes.get(note);
    if (known !== undefined) return known;
    const checkpoint = verifyCheckpoint(note, this.verifier, { origin: this.verifier.name });
    const latest = this.latestCheckpoint;
    if (latest !== undefined) checkConsistent(latest, checkpoint, consistency);
    if (latest === undefined || checkpoint.size > latest.size) {
      this.latestCheckpoint = checkpoint;
      this.latestNote = note;
    }
    if (this.notes.size >= MAX_CACHED_NOTES) this.notes.clear();
    const nodes = new ProvenNodes(checkpoint.size, checkpoint.rootHash);
    const proven: ProvenCheckpoint = {
      checkpoint,
      rootHashBase64: encodeBase64(checkpoint.rootHash),
      proveInclusion: nodes.verify.bind(nodes),
    };
    this.notes.set(note, proven);
    return proven;
  }
}

function rangeBetween(a: number, b: number): ConsistencyRange | undefined {
  if (a === b || Math.min(a, b) === 0) return undefined;
  return { from: Math.min(a, b), to: Math.max(a, b) };
}

/** Both checkpoints are signed: they must be one log (RFC 9162 §2.1.4.2), whichever is the larger. */
function checkConsistent(latest: Checkpoint, next: Checkpoint, consistency: ConsistencyEvidence | undefined): void {
  if (latest.size === next.size) {
    if (equalBytes(latest.rootHash, next.rootHash)) return;
    throw new ToolsealError(
      'LOG_INCONSISTENT',
      `the log ${next.origin} signed two different roots for tree size ${next.size} (${encodeBase64(latest.rootHash)} and ${encodeBase64(next.rootHash)}): it forked`,
    );
  }
  const range = rangeBetween(latest.size, next.size);
  if (range === undefined) return; // one of them is the empty tree: every tree extends it
  const [older, newer] = latest.size < next.size ? [latest, next] : [next, latest];
  if (consistency === undefined || consistency.from !== range.from || consistency.to !== range.to) {
    throw new Error(
      `no consistency proof from tree size ${range.from} to ${range.to} relates it to the checkpoint already proven`,
    );
  }
  try {
    verifyConsistencyProof(older.size, newer.size, older.rootHash, newer.rootHash, consistency.hashes);
  } catch (cause) {
    throw new Error(
      `the consistency proof from tree size ${range.from} to ${range.to} does not verify against the signed roots`,
      { cause },
    );
  }
}

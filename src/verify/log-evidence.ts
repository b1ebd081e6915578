// Log-evidence stage: the attestation is an RFC 6962 §2.1 leaf, proven (RFC 9162 §2.1.3) up to a C2SP checkpoint,
// cosigned by a quorum of witnesses when a C2SP tlog-policy is given.

import { encodeBase64 } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { decodeHashText } from '../log/merkle.ts';
import { ProvenNodes } from './proven-nodes.ts';
import {
  checkWitnessQuorum,
  hashLeaf,
  parseTlogProof,
  parseVerifierString,
  verifyCheckpoint,
  type Checkpoint,
  type NoteVerifier,
  type WitnessPolicy,
} from '../log/index.ts';

/** Evidence that an attestation is in the log: as served under `inclusionProof`, or a C2SP tlog-proof text. */
export type InclusionEvidence =
  | {
      /** Leaf index. */
      index: number;
      /** Tree size the proof is for; when given it must equal the checkpoint's. */
      size?: number;
      /** Sibling hashes, leaf to root: base64 strings or 32-byte arrays. */
      hashes: readonly (string | Uint8Array)[];
      /** The signed checkpoint (C2SP signed note), verbatim. */
      checkpoint: string;
    }
  | string;

export interface VerifiedCheckpoint {
  origin: string;
  size: number;
  /** Base64 RFC 6962 root hash. */
  rootHash: string;
  /** The signed note, verbatim. */
  note: string;
}

export interface ProvenInclusion {
  /** The proven leaf index of the attestation. */
  index: number;
  checkpoint: VerifiedCheckpoint;
}

/**
 * Verifies the signed checkpoint note of the evidence against the log key and returns it parsed (throwing
 * otherwise): verifyCheckpoint by default; a Verifier (./verifier.ts) answers notes it already proved from its cache.
 */
export type CheckpointCheck = (note: string, verifier: NoteVerifier) => ProvenCheckpoint;

/** A verified checkpoint, and how to prove a leaf under it (default: verifyInclusionProof against its root). */
export interface ProvenCheckpoint {
  checkpoint: Checkpoint;
  /** Its root hash in base64, when already written. */
  rootHashBase64?: string;
  /** `unchanging`: see ReadEvidence. */
  proveInclusion?: (leafHash: Uint8Array, index: number, hashes: readonly Uint8Array[], unchanging: boolean) => void;
}

const checkSignedCheckpoint: CheckpointCheck = (note, verifier) => ({
  checkpoint: verifyCheckpoint(note, verifier, { origin: verifier.name }),
});

/**
 * How verifyLogEvidence reads the evidence and checks the checkpoint (called as methods): readEvidence and
 * verifyCheckpoint by default; a Verifier (./verifier.ts) remembers what it read and proved.
 */
export interface LogEvidenceHooks {
  checkCheckpoint?(note: string, verifier: NoteVerifier): ProvenCheckpoint;
  /** The witness quorum check of a verified checkpoint note (default: checkWitnessQuorum every time). */
  checkQuorum?(note: string, verifier: NoteVerifier, witness: WitnessRequirement): void;
  readEvidence?(inclusion: InclusionEvidence): ReadEvidence;
}

/** A C2SP tlog-policy the checkpoint must meet, and the time cosignature timestamps are compared with. */
export interface WitnessRequirement {
  policy: WitnessPolicy;
  nowSeconds: number;
}

/** The evidence once read: a leaf index, the sibling hashes and the signed note. */
export interface ReadEvidence {
  index: number;
  size: number | undefined;
  hashes: Uint8Array[];
  note: string;
  /** Nothing will ever write to the arrays of `hashes` (a reader's own decoded bytes, never handed out). */
  unchanging: boolean;
}

/**
 * Prove that `attestation` (its exact bytes) is leaf `expectedIndex` (when given) of the log `logKey` signs.
 * A malformed `logKey` is the caller's BAD_REQUEST; every failure of the evidence itself is NOT_IN_LOG, its
 * message naming the part that failed (malformed proof, checkpoint signature, proof verification).
 */
export function verifyLogEvidence(
  attestation: Uint8Array,
  inclusion: InclusionEvidence | undefined,
  logKey: string | NoteVerifier,
  expectedIndex: number | undefined,
  hooks: LogEvidenceHooks = {},
  witness?: WitnessRequirement,
): ProvenInclusion {
  const verifier = toVerifier(logKey);
  if (inclusion === undefined || inclusion === null) {
    throw new ToolsealError('NOT_IN_LOG', 'there is no inclusion proof for this attestation');
  }
  let stage = 'the inclusion proof is malformed';
  try {
    const { index, size, hashes, note, unchanging } =
      hooks.readEvidence !== undefined ? hooks.readEvidence(inclusion) : readEvidence(inclusion);
    if (expectedIndex !== undefined && index !== expectedIndex)
      throw new Error(`it is for leaf ${index}, not the claimed log index ${expectedIndex}`);
    stage = 'the checkpoint is not signed by the log key';
    const { checkpoint, proveInclusion, rootHashBase64 } =
      hooks.checkCheckpoint !== undefined
        ? hooks.checkCheckpoint(note, verifier)
        : checkSignedCheckpoint(note, verifier);
    if (witness !== undefined) {
      if (hooks.checkQuorum !== undefined) hooks.checkQuorum(note, verifier, witness);
      else checkWitnessQuorum(note, witness.policy, verifier.publicKey, witness.nowSeconds);
    }
    stage = 'the inclusion proof does not verify';
    if (size !== undefined && size !== checkpoint.size)
      throw new Error(`it is for tree size ${size}, the checkpoint for ${checkpoint.size}`);
    // ProvenNodes accepts exactly what verifyInclusionProof accepts (same errors), hashing with one-shot sha256.
    if (proveInclusion !== undefined) proveInclusion(hashLeaf(attestation), index, hashes, unchanging);
    else new ProvenNodes(checkpoint.size, checkpoint.rootHash).verify(hashLeaf(attestation), index, hashes);
    const { origin, size: treeSize, rootHash } = checkpoint;
    return { index, checkpoint: { origin, size: treeSize, rootHash: rootHashBase64 ?? encodeBase64(rootHash), note } };
  } catch (cause) {
    // A proven fork (two signed roots that cannot both be the log's) is not a missing proof: it keeps its code.
    // So is a checkpoint without the witness quorum: it is proven signed, but not witnessed.
    if (cause instanceof ToolsealError && (cause.code === 'LOG_INCONSISTENT' || cause.code === 'WITNESS_QUORUM'))
      throw cause;
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new ToolsealError(
      'NOT_IN_LOG',
      `the attestation is not proven to be in the log ${verifier.name}: ${stage} (${detail})`,
      { cause },
    );
  }
}

const parsedVerifiers = new Map<string, NoteVerifier>();

/** The note verifier of a C2SP verifier string (memoised), or the verifier itself. */
export function toVerifier(logKey: string | NoteVerifier): NoteVerifier {
  if (typeof logKey !== 'string') return logKey;
  let verifier = parsedVerifiers.get(logKey);
  if (!verifier) {
    verifier = parseVerifierString(logKey.trim());
    if (parsedVerifiers.size > 100) parsedVerifiers.clear();
    parsedVerifiers.set(logKey, verifier);
  }
  return verifier;
}

/**
 * readEvidence, remembering the previous proof it read: inclusion proofs of neighbouring leaves under one tree head
 * share their siblings near the root, at the same positions, so a Verifier keeps one. A base64 text equal to the one
 * at the same position of the previous proof is answered with the bytes decoded for it; any other text is decoded
 * (and fails) as in readEvidence. The decoded bytes are only ever read (so evidence of base64 texts only is
 * `unchanging`: ProvenNodes keeps them as they are, and a later proof holding the same ones matches them by identity).
 */
export class EvidenceMemory {
  private previousTexts: readonly (string | Uint8Array)[] = [];
  private previousHashes: readonly Uint8Array[] = [];

  read(inclusion: InclusionEvidence): ReadEvidence {
    const read = readEvidenceWith(inclusion, this.previousTexts, this.previousHashes);
    if (typeof inclusion !== 'string') {
      const texts = inclusion.hashes;
      let unchanging = true;
      for (let i = 0; i < texts.length; i++) if (typeof texts[i] !== 'string') unchanging = false;
      read.unchanging = unchanging;
      // Texts only (a string equals only a string): the bytes of an array given are never taken for another's.
      if (unchanging) {
        this.previousTexts = texts.slice();
        this.previousHashes = read.hashes.slice();
      }
    }
    return read;
  }
}

/** Read either form of the evidence; a plain Error (turned into NOT_IN_LOG by the caller) when malformed. */
export function readEvidence(inclusion: InclusionEvidence): ReadEvidence {
  return readEvidenceWith(inclusion, [], []);
}

/** readEvidence, answering a text equal to `knownTexts` at its position with `knownHashes` at that position. */
function readEvidenceWith(
  inclusion: InclusionEvidence,
  knownTexts: readonly (string | Uint8Array)[],
  knownHashes: readonly Uint8Array[],
): ReadEvidence {
  if (typeof inclusion === 'string') {
    const parsed = parseTlogProof(inclusion);
    return { index: parsed.index, size: undefined, hashes: parsed.proof, note: parsed.checkpoint, unchanging: false };
  }
  if (typeof inclusion !== 'object' || !Array.isArray(inclusion.hashes) || typeof inclusion.checkpoint !== 'string') {
    throw new Error('expected {index, hashes, checkpoint}');
  }
  const texts = inclusion.hashes;
  const hashes = new Array<Uint8Array>(texts.length);
  for (let position = 0; position < texts.length; position++) {
    const value = texts[position] as string | Uint8Array;
    if (value === undefined && !(position in texts)) continue; // a hole stays one, as Array.prototype.map leaves it
    hashes[position] =
      typeof value === 'string' && knownTexts[position] === value
        ? (knownHashes[position] as Uint8Array)
        : decodeHash(value, position);
  }
  return { index: inclusion.index, size: inclusion.size, hashes, note: inclusion.checkpoint, unchanging: false };
}

/** A sibling hash: 32 bytes as given, or strict RFC 4648 §4 base64. */
function decodeHash(value: string | Uint8Array, position: number): Uint8Array {
  if (value instanceof Uint8Array) return value;
  const bytes = typeof value === 'string' ? decodeHashText(value) : undefined;
  if (bytes === undefined) throw new Error(`proof hash ${position} is not base64`);
  return bytes;
}

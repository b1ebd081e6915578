// Log-evidence stage: the attestation is an RFC 6962 §2.1 leaf, proven (RFC 9162 §2.1.3) up to a C2SP checkpoint.

import { decodeBase64Strict, encodeBase64 } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { ProvenNodes } from './proven-nodes.ts';
import {
  hashLeaf,
  parseTlogProof,
  parseVerifierString,
  verifyCheckpoint,
  type Checkpoint,
  type NoteVerifier,
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
  checkCheckpoint: CheckpointCheck = checkSignedCheckpoint,
  read: EvidenceReader = readEvidence,
): ProvenInclusion {
  const verifier = toVerifier(logKey);
  if (inclusion === undefined || inclusion === null) {
    throw new ToolsealError('NOT_IN_LOG', 'there is no inclusion proof for this attestation');
  }
  let stage = 'the inclusion proof is malformed';
  try {
    const { index, size, hashes, note, unchanging } = read(inclusion);
    if (expectedIndex !== undefined && index !== expectedIndex)
      throw new Error(`it is for leaf ${index}, not the claimed log index ${expectedIndex}`);
    stage = 'the checkpoint is not signed by the log key';
    const { checkpoint, proveInclusion, rootHashBase64 } = checkCheckpoint(note, verifier);
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
    if (cause instanceof ToolsealError && cause.code === 'LOG_INCONSISTENT') throw cause;
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

/** Reads the evidence (readEvidence, or a reader that remembers decoded hashes: createEvidenceReader). */
export type EvidenceReader = (inclusion: InclusionEvidence) => ReadEvidence;

/** Base64 hash texts a reader remembers before it starts over. */
const MAX_REMEMBERED_HASHES = 100_000;

/**
 * readEvidence, remembering the bytes of each base64 hash text it decoded: inclusion proofs under one tree head share
 * most of their siblings, so a Verifier keeps one reader. The remembered bytes are only ever read (so evidence of
 * base64 texts only is `unchanging`: ProvenNodes keeps them as they are, and a later proof holding the same ones
 * matches them by identity); a text that does not decode is not remembered and fails as in readEvidence.
 */
export function createEvidenceReader(): EvidenceReader {
  const remembered = new Map<string, Uint8Array>();
  const decode = (value: string | Uint8Array, position: number): Uint8Array => {
    if (typeof value !== 'string') return decodeHash(value, position);
    let bytes = remembered.get(value);
    if (bytes === undefined) {
      bytes = decodeHash(value, position);
      if (remembered.size >= MAX_REMEMBERED_HASHES) remembered.clear();
      remembered.set(value, bytes);
    }
    return bytes;
  };
  return (inclusion) => {
    const read = readEvidenceWith(inclusion, decode);
    if (typeof inclusion !== 'string') read.unchanging = inclusion.hashes.every((hash) => typeof hash === 'string');
    return read;
  };
}

/** Read either form of the evidence; a plain Error (turned into NOT_IN_LOG by the caller) when malformed. */
export function readEvidence(inclusion: InclusionEvidence): ReadEvidence {
  return readEvidenceWith(inclusion, decodeHash);
}

function readEvidenceWith(
  inclusion: InclusionEvidence,
  decode: (value: string | Uint8Array, position: number) => Uint8Array,
): ReadEvidence {
  if (typeof inclusion === 'string') {
    const parsed = parseTlogProof(inclusion);
    return { index: parsed.index, size: undefined, hashes: parsed.proof, note: parsed.checkpoint, unchanging: false };
  }
  if (typeof inclusion !== 'object' || !Array.isArray(inclusion.hashes) || typeof inclusion.checkpoint !== 'string') {
    throw new Error('expected {index, hashes, checkpoint}');
  }
  return {
    index: inclusion.index,
    size: inclusion.size,
    hashes: inclusion.hashes.map(decode),
    note: inclusion.checkpoint,
    unchanging: false,
  };
}

/** A sibling hash: 32 bytes as given, or strict RFC 4648 §4 base64. */
function decodeHash(value: string | Uint8Array, position: number): Uint8Array {
  if (value instanceof Uint8Array) return value;
  const bytes = typeof value === 'string' ? decodeHashText(value) : undefined;
  if (bytes === undefined) throw new Error(`proof hash ${position} is not base64`);
  return bytes;
}

/** Base64 of exactly 32 bytes, canonical: the last symbol's two unused low bits are zero (RFC 4648 §3.5). */
const HASH_BASE64 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/**
 * decodeBase64Strict, quicker for a hash: text HASH_BASE64 matches is strict base64 (a whole number of quanta, the
 * padding, canonical), so it decodes without the round trip; anything else is decodeBase64Strict's to decide.
 */
function decodeHashText(text: string): Uint8Array | undefined {
  if (HASH_BASE64.test(text)) {
    const decoded = Buffer.from(text, 'base64');
    return new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
  }
  return decodeBase64Strict(text);
}

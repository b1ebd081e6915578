// C2SP tlog-proof (https://c2sp.org/tlog-proof) v1: an offline-verifiable inclusion proof with its signed checkpoint.

// Format ("Format" section of the spec):
//   c2sp.org/tlog-proof@v1\n
//   [extra <base64 opaque data>\n]        optional, unauthenticated
//   index <decimal, no leading zeroes>\n
//   <base64 hash>\n ...                   0+ lines: RFC 6962 inclusion proof, leaf's sibling first
//   \n
//   <signed checkpoint, verbatim>          tlog-checkpoint signed note, cosignatures allowed
// The header has no empty line, so the first empty line ends it; the rest is the checkpoint note.
//
// Errors: malformed proofs and failed checks are 'PROOF_INVALID' (signature failures keep the codes
// of note.ts); bad inputs to formatTlogProof are 'BAD_REQUEST'.

import { ToolsealError } from '../core/errors.ts';
import { verifyCheckpoint, type Checkpoint } from './checkpoint.ts';
import { decodeBase64Strict, encodeBase64 } from '../core/bytes.ts';
import { HASH_SIZE } from './merkle.ts';
import type { NoteVerifier } from './note.ts';
import { verifyInclusionProof } from './merkle-verify.ts';

/** The first line of every v1 proof. */
export const TLOG_PROOF_HEADER = 'c2sp.org/tlog-proof@v1';
/** A tree of fewer than 2^63 leaves has inclusion proofs of at most 63 hashes. */
const MAX_PROOF_HASHES = 63;
const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

export interface TlogProof {
  /** Zero-based index of the entry in the log. */
  index: number;
  /** Inclusion proof hashes, from the leaf's sibling up to the root's child. */
  proof: Uint8Array[];
  /** The signed checkpoint note, verbatim (ends with a newline). */
  checkpoint: string;
  /** Optional opaque data; not authenticated, never trust it implicitly. */
  extra?: Uint8Array;
}

export interface VerifiedTlogProof {
  index: number;
  checkpoint: Checkpoint;
  extra?: Uint8Array;
}

/** Write a tlog-proof v1 text. */
export function formatTlogProof(value: TlogProof): string {
  const { index, proof, checkpoint, extra } = value;
  if (!Number.isSafeInteger(index) || index < 0)
    throw new ToolsealError('BAD_REQUEST', 'proof index must be a non-negative safe integer');
  if (proof.length > MAX_PROOF_HASHES || proof.some((h) => !(h instanceof Uint8Array) || h.byteLength !== HASH_SIZE)) {
    throw new ToolsealError(
      'BAD_REQUEST',
      `an inclusion proof is at most ${MAX_PROOF_HASHES} hashes of ${HASH_SIZE} bytes`,
    );
  }
  if (typeof checkpoint !== 'string' || !checkpoint.endsWith('\n') || checkpoint.startsWith('\n')) {
    throw new ToolsealError('BAD_REQUEST', 'the checkpoint must be a signed note ending with a newline');
  }
  let text = `${TLOG_PROOF_HEADER}\n`;
  if (extra !== undefined) text += `extra ${encodeBase64(extra)}\n`;
  text += `index ${index}\n`;
  for (const hash of proof) text += `${encodeBase64(hash)}\n`;
  return `${text}\n${checkpoint}`;
}

function malformed(why: string): never {
  throw new ToolsealError('PROOF_INVALID', `malformed tlog-proof: ${why}`);
}

/** Parse a tlog-proof v1 text; the checkpoint is returned verbatim and not yet verified. */
export function parseTlogProof(text: string): TlogProof {
  if (typeof text !== 'string') malformed('not text');
  const split = text.indexOf('\n\n');
  if (split < 0) malformed('no empty line before the checkpoint');
  const lines = text.slice(0, split).split('\n');
  const checkpoint = text.slice(split + 2);
  if (checkpoint.length === 0 || !checkpoint.endsWith('\n'))
    malformed('the checkpoint must be non-empty and end with a newline');
  if (lines.shift() !== TLOG_PROOF_HEADER) malformed(`the first line must be ${TLOG_PROOF_HEADER}`);
  let extra: Uint8Array | undefined;
  if (lines[0]?.startsWith('extra ')) {
    extra = decodeBase64Strict(lines.shift()!.slice('extra '.length));
    if (extra === undefined) malformed('extra data is not base64');
  }
  const indexLine = lines.shift();
  if (indexLine === undefined || !indexLine.startsWith('index ')) malformed('expected an "index <n>" line');
  const indexText = indexLine.slice('index '.length);
  if (!DECIMAL.test(indexText) || !Number.isSafeInteger(Number(indexText)))
    malformed('the index must be decimal with no leading zeroes');
  if (lines.length > MAX_PROOF_HASHES) malformed(`more than ${MAX_PROOF_HASHES} proof hashes`);
  const proof = lines.map((line, i) => {
    const hash = decodeBase64Strict(line);
    if (hash === undefined || hash.byteLength !== HASH_SIZE)
      malformed(`proof line ${i + 1} is not base64 of a ${HASH_SIZE}-byte hash`);
    return hash as Uint8Array;
  });
  const parsed: TlogProof = { index: Number(indexText), proof, checkpoint };
  return extra === undefined ? parsed : { ...parsed, extra };
}

/**
 * Verify a tlog-proof offline: the checkpoint is signed by a trusted key (note.ts rules) and,
 * with `origin`, names that log; then `leafHash` (hashLeaf of the entry) is included at the proof's
 * index in the checkpointed tree (RFC 9162 §2.1.3.2).
 */
export function verifyTlogProof(
  text: string,
  leafHash: Uint8Array,
  verifiers: string | NoteVerifier | readonly (string | NoteVerifier)[],
  options: { origin?: string } = {},
): VerifiedTlogProof {
  const { index, proof, checkpoint: note, extra } = parseTlogProof(text);
  const checkpoint = verifyCheckpoint(note, verifiers, options);
  verifyInclusionProof(leafHash, index, checkpoint.size, proof, checkpoint.rootHash);
  const verified: VerifiedTlogProof = { index, checkpoint };
  return extra === undefined ? verified : { ...verified, extra };
}

// C2SP tlog-checkpoint (https://c2sp.org/tlog-checkpoint): format, parse, verify, and the never-fork guard the signer runs.

// Checkpoint note text: "<origin>\n<tree size, decimal, no leading zeroes>\n<base64 root hash>\n"
// followed by optional non-empty extension lines. It is signed as a C2SP signed note (note.ts).
// tlog-checkpoint "Signatures": a log MUST NOT sign a checkpoint inconsistent with one it signed
// before — signCheckpoint enforces that through assertCheckpointConsistent.
//
// Errors: a malformed checkpoint is 'PROOF_INVALID'; bad inputs to formatCheckpoint are
// 'BAD_REQUEST'; a refused (rolled back, forked or unproven) next checkpoint is 'LOG_INCONSISTENT'.

import { ToolsealError } from '../core/errors.ts';
import { encodeBase64, equalBytes, hasLoneSurrogate } from '../core/bytes.ts';
import { HASH_SIZE, decodeHashText, hashEmpty } from './merkle.ts';
import { signNote, verifyNote, type NoteSigner, type NoteVerifier } from './note.ts';
import { verifyConsistencyProof } from './merkle-verify.ts';

/** A tree size and its RFC 6962 root hash. */
export interface TreeHead {
  size: number;
  rootHash: Uint8Array;
}

/** The three mandatory lines of a checkpoint, plus any extension lines (NOT RECOMMENDED by the spec). */
export interface Checkpoint extends TreeHead {
  origin: string;
  extensions?: readonly string[];
}

const CONTROL_CHARACTER = /[\u0000-\u001F]/;
const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

function isSingleLine(text: unknown): text is string {
  return typeof text === 'string' && text.length > 0 && !CONTROL_CHARACTER.test(text) && !hasLoneSurrogate(text);
}

/** tlog-checkpoint "Note text": the body to sign. */
export function formatCheckpoint(checkpoint: Checkpoint): string {
  const { origin, size, rootHash, extensions = [] } = checkpoint;
  if (!isSingleLine(origin)) throw new ToolsealError('BAD_REQUEST', 'checkpoint origin must be one non-empty line');
  if (!Number.isSafeInteger(size) || size < 0)
    throw new ToolsealError('BAD_REQUEST', 'checkpoint tree size must be a non-negative safe integer');
  if (!(rootHash instanceof Uint8Array) || rootHash.byteLength !== HASH_SIZE) {
    throw new ToolsealError('BAD_REQUEST', `checkpoint root hash must be ${HASH_SIZE} bytes`);
  }
  for (const line of extensions) {
    if (!isSingleLine(line))
      throw new ToolsealError('BAD_REQUEST', 'checkpoint extension lines must be non-empty single lines');
  }
  return [origin, String(size), encodeBase64(rootHash), ...extensions].map((line) => `${line}\n`).join('');
}

function malformed(why: string): never {
  throw new ToolsealError('PROOF_INVALID', `malformed checkpoint: ${why}`);
}

/** Parse a checkpoint note text (the body of the signed note, not the signed note itself). */
export function parseCheckpoint(body: string): Checkpoint {
  if (typeof body !== 'string' || !body.endsWith('\n')) malformed('the text must end with a newline');
  const lines = body.slice(0, -1).split('\n');
  if (lines.length < 3) malformed('expected origin, tree size and root hash lines');
  if (lines.some((line) => !isSingleLine(line))) malformed('lines must be non-empty, with no control characters');
  const [origin, sizeText, rootText, ...extensions] = lines as [string, string, string, ...string[]];
  if (!DECIMAL.test(sizeText)) malformed('the tree size must be decimal with no leading zeroes');
  const size = Number(sizeText);
  if (!Number.isSafeInteger(size)) malformed('the tree size is too large');
  const rootHash = decodeHashText(rootText);
  if (rootHash === undefined || rootHash.byteLength !== HASH_SIZE)
    malformed(`the root hash must be base64 of ${HASH_SIZE} bytes`);
  const checkpoint: Checkpoint = { origin, size, rootHash: rootHash as Uint8Array };
  return extensions.length > 0 ? { ...checkpoint, extensions } : checkpoint;
}

/**
 * Verify a signed checkpoint (signed-note rules, see verifyNote) and parse it. With `origin`, the
 * checkpoint must carry that origin line (a checkpoint of another log is refused as PROOF_INVALID).
 */
export function verifyCheckpoint(
  signedNote: string | Uint8Array,
  verifiers: string | NoteVerifier | readonly (string | NoteVerifier)[],
  options: { origin?: string } = {},
): Checkpoint {
  const { body } = verifyNote(signedNote, verifiers);
  const checkpoint = parseCheckpoint(body);
  if (options.origin !== undefined && checkpoint.origin !== options.origin) {
    throw new ToolsealError(
      'PROOF_INVALID',
      `checkpoint origin ${JSON.stringify(checkpoint.origin)} is not ${JSON.stringify(options.origin)}`,
    );
  }
  return checkpoint;
}

function refuse(why: string, cause?: unknown): never {
  throw new ToolsealError(
    'LOG_INCONSISTENT',
    `refusing to sign checkpoint: ${why}`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * The guard a log signer runs before signing any checkpoint (tlog-checkpoint "Signatures").
 * Refuses with 'LOG_INCONSISTENT':
 *  - a next tree smaller than the previous one (rollback);
 *  - the same size with a different root (fork);
 *  - a consistency proof (RFC 9162 §2.1.4.2) from previous to next that does not verify;
 *  - a size-0 head whose root is not the empty-tree hash, or a non-empty proof where none applies.
 * `previous` is the last checkpoint this log signed, or undefined for the first one; from an empty
 * previous tree any next tree is consistent, and the proof must then be empty.
 */
export function assertCheckpointConsistent(
  previous: TreeHead | undefined,
  next: TreeHead,
  proof: readonly Uint8Array[],
): void {
  const checkHead = (what: string, head: TreeHead): void => {
    if (!Number.isSafeInteger(head.size) || head.size < 0)
      refuse(`${what} tree size is not a non-negative safe integer`);
    if (!(head.rootHash instanceof Uint8Array) || head.rootHash.byteLength !== HASH_SIZE)
      refuse(`${what} root hash is not ${HASH_SIZE} bytes`);
    if (head.size === 0 && !equalBytes(head.rootHash, hashEmpty()))
      refuse(`${what} tree is empty but its root is not the empty-tree hash`);
  };
  checkHead('next', next);
  if (!Array.isArray(proof)) refuse('the consistency proof must be a list of hashes');
  if (previous === undefined || previous.size === 0) {
    if (previous !== undefined) checkHead('previous', previous);
    if (proof.length !== 0) refuse('a consistency proof from an empty tree must be empty');
    return;
  }
  checkHead('previous', previous);
  if (next.size < previous.size) refuse(`tree size would go back from ${previous.size} to ${next.size}`);
  if (next.size === previous.size) {
    if (!equalBytes(next.rootHash, previous.rootHash))
      refuse(`a second, different root for tree size ${next.size} would fork the log`);
    if (proof.length !== 0) refuse('trees of equal size need an empty consistency proof');
    return;
  }
  try {
    verifyConsistencyProof(previous.size, next.size, previous.rootHash, next.rootHash, proof);
  } catch (error) {
    refuse(`no valid consistency proof from size ${previous.size} to ${next.size}`, error);
  }
}

/**
 * Sign a checkpoint only if it is consistent with the previous one: runs assertCheckpointConsistent,
 * then returns the signed note. `signer.name` SHOULD equal the origin (tlog-checkpoint).
 */
export function signCheckpoint(
  checkpoint: Checkpoint,
  signer: NoteSigner | readonly NoteSigner[],
  previous: TreeHead | undefined,
  proof: readonly Uint8Array[],
): string {
  assertCheckpointConsistent(previous, checkpoint, proof);
  return signNote(formatCheckpoint(checkpoint), signer);
}

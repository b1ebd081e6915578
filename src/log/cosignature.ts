// C2SP tlog-cosignature (https://c2sp.org/tlog-cosignature) "Format" and "Ed25519 signed message": cosigner vkeys
// (signed-note type 0x04), timestamped Ed25519 cosignature lines over a checkpoint's note text, and their verification.

// Key ID = SHA-256(name || 0x0A || 0x04 || 32-byte public key)[:4]. Signature line: "— <name> base64(key ID ||
// u64 big-endian timestamp || 64-byte Ed25519 signature)". Signed message: "cosignature/v1\ntime <ts>\n" || note text.
//
// Errors: a bad vkey or signer input is 'BAD_REQUEST'; verifyCosignatures never throws for a cosignature line, it
// reports each line by a known key as verified, invalid or from the future.

import { createHash, sign, verify, type KeyObject } from 'node:crypto';
import { ToolsealError } from '../core/errors.ts';
import { decodeBase64Strict } from '../core/bytes.ts';
import {
  exportEd25519PublicKey,
  importEd25519PublicKey,
  isValidKeyName,
  parseNote,
  type NoteSignature,
  type NoteSigner,
} from './note.ts';

/** signed-note "Signature types": 0x04 is a timestamped Ed25519 witness cosignature. */
export const COSIGNATURE_SIGNATURE_TYPE = 0x04;
/** tlog-cosignature "Ed25519 signed message": the header line (domain separation). */
export const COSIGNATURE_V1_HEADER = 'cosignature/v1';

const ED25519_PUBLIC_KEY_SIZE = 32;
const ED25519_SIGNATURE_SIZE = 64;
const COSIGNATURE_BLOB_SIZE = 4 + 8 + ED25519_SIGNATURE_SIZE;
/** tlog-cosignature: the timestamp MUST NOT exceed 2^63 - 1. */
const MAX_TIMESTAMP = (1n << 63n) - 1n;

/** A cosigner (witness) public key, as a vkey names it. */
export interface CosignerKey {
  name: string;
  /** uint32 key ID (type 0x04). */
  keyId: number;
  /** Raw 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
}

/** One cosignature line by a known cosigner, and what became of it. */
export interface CheckedCosignature {
  name: string;
  keyId: number;
  /** POSIX seconds; undefined when it does not fit a safe integer (it is then 'future'). */
  timestamp: number | undefined;
  status: 'verified' | 'invalid' | 'future';
}

/** tlog-cosignature "Format": key ID = SHA-256(name || "\n" || 0x04 || 32-byte Ed25519 public key)[:4]. */
export function computeCosignerKeyId(name: string, publicKey: Uint8Array): number {
  if (publicKey.byteLength !== ED25519_PUBLIC_KEY_SIZE)
    throw new ToolsealError('BAD_REQUEST', `an Ed25519 public key is ${ED25519_PUBLIC_KEY_SIZE} bytes`);
  return createHash('sha256')
    .update(Buffer.from(name, 'utf8'))
    .update(new Uint8Array([0x0a, COSIGNATURE_SIGNATURE_TYPE]))
    .update(publicKey)
    .digest()
    .readUInt32BE(0);
}

/** The vkey of a cosigner: name+hex8(key ID)+base64(0x04 || public key) (signed-note "Verifier keys"). */
export function formatCosignerVkey(name: string, publicKey: Uint8Array | KeyObject): string {
  if (!isValidKeyName(name)) throw new ToolsealError('BAD_REQUEST', `invalid cosigner name ${JSON.stringify(name)}`);
  const raw = publicKey instanceof Uint8Array ? publicKey : exportEd25519PublicKey(publicKey);
  const typed = new Uint8Array(1 + raw.byteLength);
  typed[0] = COSIGNATURE_SIGNATURE_TYPE;
  typed.set(raw, 1);
  const keyId = computeCosignerKeyId(name, raw).toString(16).padStart(8, '0');
  return `${name}+${keyId}+${Buffer.from(typed).toString('base64')}`;
}

/** Parse a type-0x04 vkey and check its key ID; anything else is 'BAD_REQUEST'. */
export function parseCosignerVkey(text: string): CosignerKey {
  const bad = (why: string): never => {
    throw new ToolsealError('BAD_REQUEST', `invalid cosigner vkey: ${why}`);
  };
  if (typeof text !== 'string') bad('not a string');
  const firstPlus = text.indexOf('+');
  const secondPlus = firstPlus < 0 ? -1 : text.indexOf('+', firstPlus + 1);
  if (secondPlus < 0) bad('expected <name>+<key id>+<key>');
  const name = text.slice(0, firstPlus);
  const hex = text.slice(firstPlus + 1, secondPlus);
  if (!isValidKeyName(name)) bad('bad key name');
  if (!/^[0-9a-fA-F]{8}$/.test(hex)) bad('key ID must be 8 hex digits');
  const typed = decodeBase64Strict(text.slice(secondPlus + 1));
  if (typed === undefined || typed.byteLength === 0) bad('key is not base64');
  const key = typed as Uint8Array;
  if (key[0] !== COSIGNATURE_SIGNATURE_TYPE || key.byteLength !== 1 + ED25519_PUBLIC_KEY_SIZE)
    bad('only Ed25519 cosigner keys (type 0x04, 32 bytes) are supported');
  const publicKey = key.slice(1);
  const keyId = Number.parseInt(hex, 16);
  if (computeCosignerKeyId(name, publicKey) !== keyId) bad('key ID does not match the name and key');
  return { name, keyId, publicKey };
}

/** The cosigner key of a private key (for the witness that signs). */
export function cosignerKeyOf(signer: NoteSigner): CosignerKey {
  const publicKey = exportEd25519PublicKey(signer.privateKey);
  return { name: signer.name, keyId: computeCosignerKeyId(signer.name, publicKey), publicKey };
}

function requireTimestamp(timestamp: number): void {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new ToolsealError('BAD_REQUEST', 'a cosignature timestamp is a non-negative safe integer (POSIX seconds)');
}

/** tlog-cosignature "Ed25519 signed message": "cosignature/v1\ntime <timestamp>\n" then the checkpoint's note text. */
export function formatCosignedMessage(noteText: string, timestamp: number): string {
  requireTimestamp(timestamp);
  if (typeof noteText !== 'string' || !noteText.endsWith('\n'))
    throw new ToolsealError('BAD_REQUEST', 'a checkpoint note text ends with a newline');
  return `${COSIGNATURE_V1_HEADER}\ntime ${timestamp}\n${noteText}`;
}

/** Cosign a checkpoint's note text (without its signatures): one signature line "— name base64(...)\n". */
export function signCosignature(noteText: string, signer: NoteSigner, timestamp: number): string {
  if (!isValidKeyName(signer.name))
    throw new ToolsealError('BAD_REQUEST', `invalid cosigner name ${JSON.stringify(signer.name)}`);
  const message = Buffer.from(formatCosignedMessage(noteText, timestamp), 'utf8');
  const signature = sign(null, message, signer.privateKey);
  const blob = Buffer.alloc(COSIGNATURE_BLOB_SIZE);
  blob.writeUInt32BE(cosignerKeyOf(signer).keyId, 0);
  blob.writeBigUInt64BE(BigInt(timestamp), 4);
  blob.set(signature, 12);
  return `\u2014 ${signer.name} ${blob.toString('base64')}\n`;
}

/** The timestamp and signature of a cosignature's bytes after its key ID; undefined when not 8 + 64 bytes. */
export function decodeTimestampedSignature(
  afterKeyId: Uint8Array,
): { timestamp: bigint; signature: Uint8Array } | undefined {
  if (afterKeyId.byteLength !== 8 + ED25519_SIGNATURE_SIZE) return undefined;
  const view = Buffer.from(afterKeyId.buffer, afterKeyId.byteOffset, afterKeyId.byteLength);
  return { timestamp: view.readBigUInt64BE(0), signature: afterKeyId.subarray(8) };
}

/**
 * Check the cosignature lines of a signed checkpoint by the given cosigners (signed-note rule: a line whose name and
 * key ID do not both match a cosigner is ignored). A cosignature stamped later than `nowSeconds` is 'future' and
 * not verified (tlog-cosignature: verifiers MAY reject them); otherwise its Ed25519 signature is checked.
 * The note itself is parsed, not verified: the log's signature is the caller's to check.
 */
export function checkCosignatures(
  signedNote: string | Uint8Array,
  cosigners: readonly CosignerKey[],
  nowSeconds: number,
): CheckedCosignature[] {
  const { body, signatures } = parseNote(signedNote);
  const results: CheckedCosignature[] = [];
  for (const line of signatures) {
    const cosigner = cosigners.find((c) => c.name === line.name && c.keyId === line.keyId);
    if (cosigner !== undefined) results.push(checkCosignatureLine(body, line, cosigner, nowSeconds));
  }
  return results;
}

/** One cosignature line (whose name and key ID match `cosigner`) checked against the note text it follows. */
export function checkCosignatureLine(
  noteText: string,
  line: NoteSignature,
  cosigner: CosignerKey,
  nowSeconds: number,
): CheckedCosignature {
  const { name, keyId } = line;
  const decoded = decodeTimestampedSignature(line.signature);
  if (decoded === undefined || decoded.timestamp > MAX_TIMESTAMP)
    return { name, keyId, timestamp: undefined, status: 'invalid' };
  const timestamp = decoded.timestamp <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(decoded.timestamp) : undefined;
  if (timestamp === undefined || timestamp > nowSeconds) return { name, keyId, timestamp, status: 'future' };
  const message = Buffer.from(formatCosignedMessage(noteText, timestamp), 'utf8');
  const ok = verify(null, message, importEd25519PublicKey(cosigner.publicKey), decoded.signature);
  return { name, keyId, timestamp, status: ok ? 'verified' : 'invalid' };
}

/**
 * A signed note with extra signature lines appended (cosignatures a witness returned), skipping lines it already
 * carries. tlog-witness: the client "can move the valid signatures to its own view of the checkpoint".
 */
export function appendSignatureLines(signedNote: string, lines: readonly string[]): string {
  parseNote(signedNote);
  let result = signedNote;
  for (const line of lines) {
    const single = line.endsWith('\n') ? line : `${line}\n`;
    if (result.includes(`\n${single}`)) continue;
    result += single;
  }
  parseNote(result); // still one well-formed note
  return result;
}

// C2SP signed-note (https://c2sp.org/signed-note) with Ed25519 (type 0x01), byte-compatible with golang.org/x/mod/sumdb/note.

// A signed note is: text ending in "\n", a blank line, then one or more lines
// "— <key name> <base64(4-byte big-endian key ID || signature)>\n" (U+2014 EM DASH, space).
// Key ID = SHA-256(key name || 0x0A || 0x01 || 32-byte public key)[:4]; verifier string =
// "<name>+<key ID as 8 hex digits>+<base64(0x01 || public key)>".
//
// Errors: a malformed note is 'PROOF_INVALID'; a signature by a trusted key that does not verify is
// 'SIGNATURE_INVALID'; a note with no signature by any trusted key is 'UNKNOWN_KEY'; bad inputs to
// signNote / formatVerifierString / parseVerifierString are 'BAD_REQUEST'.

import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { ToolsealError } from '../core/errors.ts';
import { decodeBase64Strict, decodeUtf8Strict, encodeBase64, hasLoneSurrogate } from '../core/bytes.ts';

/** signed-note "Signature types": 0x01 is Ed25519. */
export const ED25519_SIGNATURE_TYPE = 0x01;

const ED25519_PUBLIC_KEY_SIZE = 32;
const ED25519_SIGNATURE_SIZE = 64;
const SIGNATURE_PREFIX = '\u2014 ';
/** Go's note.Open refuses more than 100 signature lines; the spec requires accepting at least 16. */
const MAX_SIGNATURES = 100;
const CONTROL_CHARACTER = /[\u0000-\u0009\u000B-\u001F]/;
const WHITE_SPACE = /\p{White_Space}/u;

/** A key that signs notes: its name and an Ed25519 private KeyObject. */
export interface NoteSigner {
  name: string;
  privateKey: KeyObject;
}

/** A trusted key, as parsed from a verifier string. */
export interface NoteVerifier {
  name: string;
  /** uint32 key ID. */
  keyId: number;
  /** Raw 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
}

/** One signature line of a note. */
export interface NoteSignature {
  name: string;
  keyId: number;
  /** The signature bytes after the 4-byte key ID. */
  signature: Uint8Array;
}

export interface ParsedNote {
  /** The note text: everything before the separating blank line, including its final newline. */
  body: string;
  signatures: NoteSignature[];
}

export interface VerifiedNote {
  body: string;
  /** The trusted keys whose signatures verified (at least one). */
  verifiedBy: { name: string; keyId: number }[];
}

/** signed-note "Format": key names are non-empty, valid UTF-8, with no Unicode space and no '+'. */
export function isValidKeyName(name: string): boolean {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    !hasLoneSurrogate(name) &&
    !WHITE_SPACE.test(name) &&
    !name.includes('+') &&
    !CONTROL_CHARACTER.test(name)
  );
}

function requireKeyName(name: string): void {
  if (!isValidKeyName(name)) {
    throw new ToolsealError(
      'BAD_REQUEST',
      `invalid note key name ${JSON.stringify(name)}: it must be non-empty, with no spaces and no '+'`,
    );
  }
}

/** The raw 32-byte public key of an Ed25519 KeyObject (public, or private from which it derives). */
export function exportEd25519PublicKey(key: KeyObject): Uint8Array {
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new ToolsealError('BAD_REQUEST', `expected an Ed25519 key, got ${String(key.asymmetricKeyType)}`);
  }
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  const jwk = publicKey.export({ format: 'jwk' });
  if (typeof jwk.x !== 'string') throw new ToolsealError('BAD_REQUEST', 'Ed25519 key has no public part');
  return new Uint8Array(Buffer.from(jwk.x, 'base64url'));
}

/** Imported note keys by their base64url bytes: importing costs about a tenth of a verify. */
const importedPublicKeys = new Map<string, KeyObject>();

/** A raw Ed25519 public key as a KeyObject, imported once per key (a bounded cache). */
export function importEd25519PublicKey(publicKey: Uint8Array): KeyObject {
  const x = Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.byteLength).toString('base64url');
  let key = importedPublicKeys.get(x);
  if (key === undefined) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    if (importedPublicKeys.size >= 1000) importedPublicKeys.clear();
    importedPublicKeys.set(x, key);
  }
  return key;
}

function toRawPublicKey(publicKey: Uint8Array | KeyObject): Uint8Array {
  if (publicKey instanceof Uint8Array) {
    if (publicKey.byteLength !== ED25519_PUBLIC_KEY_SIZE) {
      throw new ToolsealError('BAD_REQUEST', `an Ed25519 public key is ${ED25519_PUBLIC_KEY_SIZE} bytes`);
    }
    return publicKey;
  }
  return exportEd25519PublicKey(publicKey);
}

/** signed-note "Ed25519 signatures": key ID = SHA-256(name || 0x0A || 0x01 || public key)[:4], big-endian. */
export function computeKeyId(name: string, publicKey: Uint8Array | KeyObject): number {
  return Buffer.from(computeLogKeyId(name, publicKey)).readUInt32BE(0);
}

/**
 * The whole 32-byte hash the signed-note key ID is cut from, SHA-256(name || 0x0A || 0x01 || public key): a log's
 * identity where one is needed in full (a Sigstore bundle's `logId.keyId`, a trusted root's `checkpointKeyId`).
 */
export function computeLogKeyId(name: string, publicKey: Uint8Array | KeyObject): Uint8Array {
  const raw = toRawPublicKey(publicKey);
  const hash = createHash('sha256')
    .update(Buffer.from(name, 'utf8'))
    .update(new Uint8Array([0x0a, ED25519_SIGNATURE_TYPE]))
    .update(raw)
    .digest();
  return new Uint8Array(hash);
}

/** The verifier key string golang.org/x/mod/sumdb/note writes: name+hex8(key ID)+base64(0x01 || key). */
export function formatVerifierString(name: string, publicKey: Uint8Array | KeyObject): string {
  requireKeyName(name);
  const raw = toRawPublicKey(publicKey);
  const typed = new Uint8Array(1 + raw.byteLength);
  typed[0] = ED25519_SIGNATURE_TYPE;
  typed.set(raw, 1);
  const keyId = computeKeyId(name, raw).toString(16).padStart(8, '0');
  return `${name}+${keyId}+${encodeBase64(typed)}`;
}

/** Parse (and check the key ID of) a verifier string, as Go's note.NewVerifier does. */
export function parseVerifierString(text: string): NoteVerifier {
  const bad = (why: string): never => {
    throw new ToolsealError('BAD_REQUEST', `invalid note verifier key: ${why}`);
  };
  if (typeof text !== 'string') bad('not a string');
  const firstPlus = text.indexOf('+');
  const secondPlus = firstPlus < 0 ? -1 : text.indexOf('+', firstPlus + 1);
  if (secondPlus < 0) bad('expected <name>+<key id>+<key>');
  const name = text.slice(0, firstPlus);
  const hex = text.slice(firstPlus + 1, secondPlus);
  const typedKey = decodeBase64Strict(text.slice(secondPlus + 1));
  if (!isValidKeyName(name)) bad('bad key name');
  if (!/^[0-9a-fA-F]{8}$/.test(hex)) bad('key ID must be 8 hex digits');
  if (typedKey === undefined || typedKey.byteLength === 0) bad('key is not base64');
  const key = typedKey as Uint8Array;
  if (key[0] !== ED25519_SIGNATURE_TYPE || key.byteLength !== 1 + ED25519_PUBLIC_KEY_SIZE) {
    bad('only Ed25519 keys (type 0x01, 32 bytes) are supported');
  }
  const publicKey = key.slice(1);
  const keyId = Number.parseInt(hex, 16);
  if (computeKeyId(name, publicKey) !== keyId) bad('key ID does not match the name and key');
  return { name, keyId, publicKey };
}

function checkNoteCharacters(text: string): string | undefined {
  if (hasLoneSurrogate(text)) return 'note is not valid UTF-8';
  if (CONTROL_CHARACTER.test(text)) return 'note contains an ASCII control character other than newline';
  return undefined;
}

/**
 * Sign a note body (the note text, ending in "\n") with one or more Ed25519 keys; returns the
 * signed note: body, blank line, one signature line per signer.
 */
export function signNote(body: string, signers: NoteSigner | readonly NoteSigner[]): string {
  if (typeof body !== 'string' || !body.endsWith('\n')) {
    throw new ToolsealError('BAD_REQUEST', 'a note text must be non-empty and end with a newline');
  }
  const why = checkNoteCharacters(body);
  if (why !== undefined) throw new ToolsealError('BAD_REQUEST', why);
  const list: readonly NoteSigner[] = Array.isArray(signers) ? signers : [signers as NoteSigner];
  if (list.length === 0) throw new ToolsealError('BAD_REQUEST', 'a signed note needs at least one signer');
  const message = Buffer.from(body, 'utf8');
  let lines = '';
  for (const signer of list) {
    requireKeyName(signer.name);
    const { privateKey } = signer;
    if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'ed25519') {
      throw new ToolsealError('BAD_REQUEST', 'a note signer needs an Ed25519 private key');
    }
    const signature = sign(null, message, privateKey);
    const blob = Buffer.alloc(4 + signature.byteLength);
    blob.writeUInt32BE(signerKeyId(signer.name, privateKey), 0);
    blob.set(signature, 4);
    lines += `${SIGNATURE_PREFIX}${signer.name} ${blob.toString('base64')}\n`;
  }
  return `${body}\n${lines}`;
}

function malformed(why: string): never {
  throw new ToolsealError('PROOF_INVALID', `malformed signed note: ${why}`);
}

/** A signer's key ID, derived once per (key, name): deriving it exports the public key, which costs more than the hash. */
const signerKeyIds = new WeakMap<KeyObject, Map<string, number>>();

function signerKeyId(name: string, privateKey: KeyObject): number {
  let byName = signerKeyIds.get(privateKey);
  if (!byName) {
    byName = new Map();
    signerKeyIds.set(privateKey, byName);
  }
  let keyId = byName.get(name);
  if (keyId === undefined) {
    keyId = computeKeyId(name, privateKey);
    byName.set(name, keyId);
  }
  return keyId;
}

/** Split a signed note into its text and signature lines, without verifying anything. */
export function parseNote(note: string | Uint8Array): ParsedNote {
  let text: string;
  if (note instanceof Uint8Array) {
    const decoded = decodeUtf8Strict(note);
    if (decoded === undefined) malformed('not valid UTF-8');
    text = decoded as string;
  } else if (typeof note === 'string') {
    text = note;
  } else {
    malformed('not text');
  }
  const why = checkNoteCharacters(text);
  if (why !== undefined) malformed(why);
  // The text is separated from the signatures by the last empty line.
  const split = text.lastIndexOf('\n\n');
  if (split < 0) malformed('no blank line before the signatures');
  const body = text.slice(0, split + 1);
  const block = text.slice(split + 2);
  if (block.length === 0 || !block.endsWith('\n'))
    malformed('the signature block must be non-empty and end with a newline');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) malformed(`more than ${MAX_SIGNATURES} signatures`);
  const signatures = lines.map((line): NoteSignature => {
    if (!line.startsWith(SIGNATURE_PREFIX)) malformed('a signature line must start with an em dash and a space');
    const rest = line.slice(SIGNATURE_PREFIX.length);
    const space = rest.indexOf(' ');
    if (space < 0) malformed('a signature line needs a key name and a signature');
    const name = rest.slice(0, space);
    const blob = decodeBase64Strict(rest.slice(space + 1));
    if (!isValidKeyName(name)) malformed(`bad key name ${JSON.stringify(name)}`);
    if (blob === undefined || blob.byteLength < 5)
      malformed('a signature must be base64 of a key ID and signature bytes');
    const bytes = blob as Uint8Array;
    const keyId = Buffer.from(bytes.buffer, bytes.byteOffset, 4).readUInt32BE(0);
    return { name, keyId, signature: bytes.slice(4) };
  });
  return { body, signatures };
}

function toVerifier(value: string | NoteVerifier): NoteVerifier {
  return typeof value === 'string' ? parseVerifierString(value) : value;
}

/**
 * Verify a signed note against one or more trusted keys (verifier strings or parsed verifiers),
 * following signed-note "Signatures": signatures by unknown keys (name and key ID not both matching)
 * are ignored; every signature by a trusted key must verify; at least one must be present.
 */
export function verifyNote(
  note: string | Uint8Array,
  verifiers: string | NoteVerifier | readonly (string | NoteVerifier)[],
): VerifiedNote {
  const trusted = (Array.isArray(verifiers) ? verifiers : [verifiers as string | NoteVerifier]).map(toVerifier);
  const { body, signatures } = parseNote(note);
  const message = Buffer.from(body, 'utf8');
  const verifiedBy: { name: string; keyId: number }[] = [];
  for (const { name, keyId, signature } of signatures) {
    const verifier = trusted.find((v) => v.name === name && v.keyId === keyId);
    if (verifier === undefined) continue;
    const ok =
      signature.byteLength === ED25519_SIGNATURE_SIZE &&
      verify(null, message, importEd25519PublicKey(verifier.publicKey), signature);
    if (!ok) throw new ToolsealError('SIGNATURE_INVALID', `the note signature by ${name} does not verify`);
    if (!verifiedBy.some((v) => v.name === name && v.keyId === keyId)) verifiedBy.push({ name, keyId });
  }
  if (verifiedBy.length === 0) {
    const names = trusted.map((v) => v.name).join(', ');
    throw new ToolsealError('UNKNOWN_KEY', `the note has no signature by a trusted key (${names || 'none given'})`);
  }
  return { body, verifiedBy };
}

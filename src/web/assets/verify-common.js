// What both groups of the "Verified in this browser" panel share (verify.js checks the JWS, verify-bundle.js the
// Sigstore bundle): strict base64, SHA-256 and Ed25519 with WebCrypto, fetching from the public API only
// (src/protocol/routes.ts), the in-toto publish statement (src/attest/jws.ts parseStatement), the log key and C2SP
// signed-note checkpoints (src/log/note.ts, checkpoint.ts), witness cosignatures (C2SP tlog-cosignature,
// src/log/cosignature.ts) and RFC 9162 §2.1.3.2 inclusion (src/log/merkle-verify.ts). Nothing here touches the page.

const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
const PREDICATE_TYPE = 'https://toolseal.dev/attestation/publish/v1';
export const utf8 = new TextDecoder('utf-8', { fatal: true });
export const encoder = new TextEncoder();

/** A check that did not pass, with the reason shown beside it. */
export class CheckFailure extends Error {}

export function fail(reason) {
  throw new CheckFailure(reason);
}

// ── bytes ──────────────────────────────────────────────────────────────────

export function encodeBase64(bytes) {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Strict RFC 4648 §4 base64 (canonical padding and trailing bits), or undefined. */
export function decodeBase64(text) {
  if (typeof text !== 'string' || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const bytes = Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  return encodeBase64(bytes) === text ? bytes : undefined;
}

/** Unpadded base64url (RFC 7515 §2), or undefined. */
export function decodeBase64url(text) {
  if (typeof text !== 'string' || text.length % 4 === 1 || !/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  return decodeBase64(standard + '='.repeat((4 - (standard.length % 4)) % 4));
}

export function encodeBase64url(bytes) {
  return encodeBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function toHex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

export function concatBytes(...parts) {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

export function equalBytes(a, b) {
  return a.byteLength === b.byteLength && a.every((byte, index) => byte === b[index]);
}

export async function sha256(...parts) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', concatBytes(...parts)));
}

export async function verifyEd25519(publicKey, signature, message) {
  const key = await crypto.subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
  return crypto.subtle.verify({ name: 'Ed25519' }, key, signature, message);
}

export function parseJsonText(text, what) {
  try {
    return JSON.parse(text);
  } catch {
    return fail(`${what} is not JSON`);
  }
}

export function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ── fetching (the public API only) ─────────────────────────────────────────

export function manifestApiPath(name, version) {
  return `/v1/manifests/${name.split('/').map(encodeURIComponent).join('/')}/${encodeURIComponent(version)}`;
}

export async function fetchFromApi(path, as) {
  let response;
  try {
    response = await fetch(path, { cache: 'no-store', credentials: 'omit', redirect: 'error' });
  } catch (error) {
    return fail(`GET ${path} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!response.ok) fail(`GET ${path} answered ${response.status}`);
  return as === 'bytes' ? new Uint8Array(await response.arrayBuffer()) : response.text();
}

/** `promise`, marked handled: it is awaited later by every check that needs it (its failure is their reason). */
export function quiet(promise) {
  promise.catch(() => undefined);
  return promise;
}

// ── the attestation (src/attest/jws.ts decodeAttestation, parseStatement) ──────

/** The toolseal publish statement `payloadBytes` hold; `what` names them in a failure (e.g. "the DSSE payload"). */
export function parseStatement(payloadBytes, what = 'the attestation payload') {
  let statement;
  try {
    statement = JSON.parse(utf8.decode(payloadBytes));
  } catch {
    return fail(`${what} is not JSON`);
  }
  const subject = Array.isArray(statement?.subject) ? statement.subject[0] : undefined;
  const ok =
    statement?._type === STATEMENT_TYPE &&
    statement.predicateType === PREDICATE_TYPE &&
    statement.subject.length === 1 &&
    typeof subject?.name === 'string' &&
    typeof subject.digest?.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(subject.digest.sha256) &&
    typeof statement.predicate?.storedAt === 'string';
  if (!ok) fail(`${what} is not a toolseal publish statement`);
  return statement;
}

// ── the log: key, checkpoint (src/log/note.ts, src/log/checkpoint.ts) ───────

/**
 * A note verifier key `name+hex8+base64` split at its first two '+' (the base64 key may hold '+' itself), or
 * undefined when it has no such shape.
 */
function splitVerifierKey(line) {
  const first = line.indexOf('+');
  const second = first < 0 ? -1 : line.indexOf('+', first + 1);
  const name = line.slice(0, Math.max(first, 0));
  const hex = line.slice(first + 1, second);
  if (second < 0 || !name || /\s/.test(name) || !/^[0-9a-fA-F]{8}$/.test(hex)) return undefined;
  return { name, hex, keyText: line.slice(second + 1) };
}

/** A C2SP verifier string `name+hex8(key ID)+base64(0x01 || key)`, its key ID checked. */
export async function parseVerifierString(text) {
  const parts = splitVerifierKey(text.trim());
  if (parts === undefined) fail('the log key is not a note verifier string');
  const { name, hex } = parts;
  const typed = decodeBase64(parts.keyText);
  if (typed === undefined || typed.byteLength !== 33 || typed[0] !== 0x01) fail('the log key is not an Ed25519 key');
  const publicKey = typed.slice(1);
  const hash = await sha256(encoder.encode(name), new Uint8Array([0x0a, 0x01]), publicKey);
  const keyId = new DataView(hash.buffer).getUint32(0);
  if (keyId !== Number.parseInt(hex, 16)) fail('the log key ID does not match its name and key');
  // `logId`: the whole SHA-256, the C2SP key id a Sigstore bundle's tlog entry names the log by (computeLogKeyId).
  return { name, keyId, publicKey, logId: hash };
}

/** Split a signed note into its text and signature lines (signed-note "Format"). */
function parseNote(note) {
  if (/[\u0000-\u0009\u000B-\u001F]/.test(note)) fail('the checkpoint holds a control character');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) fail('the checkpoint has no blank line before its signatures');
  const body = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (block.length === 0 || !block.endsWith('\n')) fail('the checkpoint signature block is malformed');
  const signatures = block
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      const match = /^\u2014 (\S+) (\S+)$/.exec(line);
      const blob = match ? decodeBase64(match[2]) : undefined;
      if (!match || blob === undefined || blob.byteLength < 5) fail('a checkpoint signature line is malformed');
      return { name: match[1], keyId: new DataView(blob.buffer).getUint32(0), signature: blob.slice(4) };
    });
  return { body, signatures };
}

/** Verify the note with the log key (every signature by it must verify, at least one), then read the checkpoint. */
export async function verifyCheckpointNote(note, verifier) {
  const { body, signatures } = parseNote(note);
  const own = signatures.filter((s) => s.name === verifier.name && s.keyId === verifier.keyId);
  if (own.length === 0) fail(`the checkpoint has no signature by the log key ${verifier.name}`);
  for (const { signature } of own) {
    if (signature.byteLength !== 64 || !(await verifyEd25519(verifier.publicKey, signature, encoder.encode(body))))
      fail(`the checkpoint signature by ${verifier.name} does not verify`);
  }
  const [origin, sizeText, rootText, ...rest] = body.slice(0, -1).split('\n');
  if (rest.some((line) => line.length === 0)) fail('the checkpoint has an empty extension line');
  if (origin !== verifier.name) fail(`the checkpoint origin ${origin} is not the log ${verifier.name}`);
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText ?? '') || !Number.isSafeInteger(Number(sizeText)))
    fail('the checkpoint tree size is not a decimal integer');
  const rootHash = decodeBase64(rootText ?? '');
  if (rootHash === undefined || rootHash.byteLength !== 32) fail('the checkpoint root hash is not 32 bytes of base64');
  return { origin, size: Number(sizeText), rootHash, rootText };
}

// ── witness cosignatures (C2SP tlog-cosignature; src/log/cosignature.ts) ──────

/** The panel's witness list: one "NAME VKEY" per line, each vkey `name+hex8(key ID)+base64(0x04 || key)`. */
export async function readWitnesses(text) {
  const witnesses = [];
  for (const line of (text ?? '').split('\n')) {
    const [policyName, vkey] = line.trim().split(' ');
    if (!policyName || !vkey) continue;
    const parts = splitVerifierKey(vkey);
    if (parts === undefined) continue;
    const { name, hex } = parts;
    const typed = decodeBase64(parts.keyText);
    if (typed?.byteLength !== 33 || typed[0] !== 0x04) continue;
    const publicKey = typed.slice(1);
    const hash = await sha256(encoder.encode(name), new Uint8Array([0x0a, 0x04]), publicKey);
    if (new DataView(hash.buffer).getUint32(0) !== Number.parseInt(hex, 16)) continue;
    witnesses.push({ policyName, name, keyId: Number.parseInt(hex, 16), publicKey });
  }
  return witnesses;
}

/**
 * Verify every cosignature on `note` by a listed witness: one row per verified cosignature ("W1 (name): verified,
 * cosigned TIME"); a listed witness's cosignature that does not verify fails the check.
 */
export async function verifyCosignatures(note, witnesses) {
  if (witnesses.length === 0) return [];
  const { body, signatures } = parseNote(note);
  const rows = [];
  for (const line of signatures) {
    const witness = witnesses.find((w) => w.name === line.name && w.keyId === line.keyId);
    if (witness === undefined) continue;
    const blob = line.signature;
    const timestamp = blob.byteLength === 72 ? new DataView(blob.buffer, blob.byteOffset).getBigUint64(0) : undefined;
    const message = encoder.encode(`cosignature/v1\ntime ${timestamp}\n${body}`);
    const valid = timestamp !== undefined && (await verifyEd25519(witness.publicKey, blob.slice(8), message));
    if (!valid) fail(`the cosignature by witness ${witness.policyName} (${witness.name}) does not verify`);
    rows.push(
      `${witness.policyName} (${witness.name}): verified, cosigned ${new Date(Number(timestamp) * 1000).toISOString()}`,
    );
  }
  return rows;
}

// ── inclusion (RFC 9162 §2.1.3.2; src/log/merkle-verify.ts) ─────────────────

export async function verifyInclusion(leafHash, index, size, proof, rootHash) {
  if (!Number.isSafeInteger(index) || index < 0 || index >= size)
    fail(`leaf ${index} is not in a tree of size ${size}`);
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  const node = (left, right) => sha256(new Uint8Array([0x01]), left, right);
  for (const p of proof) {
    if (sn === 0) fail('the inclusion proof is too long');
    if (fn % 2 === 1 || fn === sn) {
      r = await node(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = await node(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) fail('the inclusion proof is too short');
  if (!equalBytes(r, rootHash)) fail("the inclusion proof does not lead to the checkpoint's root");
}

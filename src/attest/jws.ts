// Sign and verify attestations: JWS flattened JSON serialisation (RFC 7515 §7.2.2) over a JCS statement.

import { createPublicKey, verify as verifyEd25519, type KeyObject } from 'node:crypto';
import { flattenedVerify, importJWK, type CryptoKey, type FlattenedJWS } from 'jose';
import { ToolsealError } from '../core/errors.ts';
import type { Sha256Digest } from '../pipeline/index.ts';
import { SIGNING_ALG, type Jwks, type JwksKey, type SigningKey } from './jwk.ts';
import { runSigningJob, type SigningJob } from './signing-job.ts';
import {
  ATTESTATION_JWS_TYPE,
  IN_TOTO_STATEMENT_TYPE,
  TOOLSEAL_PREDICATE_TYPE,
  formatSubjectName,
  serializeStatementJcs,
  type PublishStatement,
} from './statement.ts';

const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Sign `statement` (serialised with JCS) and return the exact attestation bytes to store and serve:
 * a flattened JWS (RFC 7515 §7.2.2) itself serialised with JCS. Synchronous (node:crypto Ed25519),
 * so a publish can sign inside its database transaction.
 */
export function signStatement(statement: PublishStatement, key: SigningKey): Buffer {
  return runSigningJob(buildStatementSigningJob(statement, key));
}

/** signStatement as a SigningJob (signing-job.ts): the same bytes, signed where the caller chooses. */
export function buildStatementSigningJob(statement: PublishStatement, key: SigningKey): SigningJob<Buffer> {
  return buildJcsStatementSigningJob(serializeStatementJcs(statement), key);
}

/** buildStatementSigningJob for a statement already in its JCS form (serializeStatementJcs), serialised once. */
export function buildJcsStatementSigningJob(statementJcs: string, key: SigningKey): SigningJob<Buffer> {
  const payload = Buffer.from(statementJcs, 'utf8').toString('base64url');
  const header = { alg: SIGNING_ALG, kid: key.kid, typ: ATTESTATION_JWS_TYPE };
  const protectedHeader = Buffer.from(JSON.stringify(header)).toString('base64url');
  return {
    algorithm: null,
    // RFC 7515 §5.1: the signing input is ASCII(BASE64URL(header) || '.' || BASE64URL(payload)).
    data: Buffer.from(`${protectedHeader}.${payload}`, 'ascii'),
    key: key.privateKey,
    finish: (signature) => {
      const encoded = Buffer.from(signature).toString('base64url');
      // JCS of {payload, protected, signature}: the members are already in RFC 8785 §3.2.3 order and every
      // value is base64url, which JSON writes without escapes, so the canonical form is this template.
      return Buffer.from(`{"payload":"${payload}","protected":"${protectedHeader}","signature":"${encoded}"}`, 'ascii');
    },
  };
}

export interface AttestationExpectation {
  /** `name@version` the caller asked for. */
  name?: string;
  version?: string;
  /** Digest of the bytes the caller holds (recomputed by the caller, never taken from the server). */
  digest?: Sha256Digest;
}

export interface VerifiedAttestation {
  kid: string;
  statement: PublishStatement;
  digest: Sha256Digest;
  subjectName: string;
  storedAt: Date;
}

/**
 * Verify attestation bytes against a JWKS: the key by `kid`, the Ed25519 signature, the statement's
 * shape, the key's validity at the time the registry stored the manifest, and the expected subject.
 */
export async function verifyAttestation(
  attestation: Uint8Array | string,
  jwks: Jwks,
  expected: AttestationExpectation = {},
): Promise<VerifiedAttestation> {
  const { jws, kid } = decodeAttestation(attestation);
  const jwk = findKey(jwks, kid);
  const publicKey = await importPublicKey(jwk);
  let payload: Uint8Array;
  try {
    ({ payload } = await flattenedVerify(jws, publicKey, { algorithms: [SIGNING_ALG] }));
  } catch (cause) {
    throw new ToolsealError('SIGNATURE_INVALID', 'attestation signature does not verify', { cause });
  }
  return checkStatement(payload, jwk, kid, expected);
}

/**
 * verifyAttestation without jose: the same checks in the same order with the same codes, but the
 * Ed25519 signature is checked synchronously with node:crypto (no WebCrypto round trip). It accepts a
 * subset of what jose accepts (base64url without padding or white space, as signStatement writes it;
 * an unprotected `header` only when disjoint from the protected one and without `crit`), so anything
 * it accepts verifyAttestation accepts too. For hosts that verify on a hot path (dispatch, benchmarks).
 * Bytes in signStatement's exact form are read without JSON.parse or base64 strings (readJcsAttestation), with the
 * same checks in the same order; any other input takes the general path.
 */
export function verifyAttestationSync(
  attestation: Uint8Array | string,
  jwks: Jwks,
  expected: AttestationExpectation = {},
): VerifiedAttestation {
  const template = attestation instanceof Uint8Array ? readJcsAttestation(attestation) : undefined;
  if (template !== undefined) return verifyJcsAttestation(attestation as Uint8Array, template, jwks, expected);
  return verifyAnyAttestation(attestation, jwks, expected);
}

/** verifyAttestationSync for any flattened JWS: parsed with JSON.parse, every member checked. */
function verifyAnyAttestation(
  attestation: Uint8Array | string,
  jwks: Jwks,
  expected: AttestationExpectation,
): VerifiedAttestation {
  const { jws, header, kid } = decodeAttestation(attestation);
  const jwk = findKey(jwks, kid);
  const unprotected = (jws as { header?: unknown }).header;
  if (unprotected !== undefined) {
    if (typeof unprotected !== 'object' || unprotected === null || Array.isArray(unprotected)) {
      throw new ToolsealError('SIGNATURE_INVALID', 'attestation signature does not verify', {
        cause: new Error('JWS Unprotected Header incorrect type'),
      });
    }
    const names = Object.keys(unprotected);
    if (names.includes('crit') || names.some((name) => Object.hasOwn(header, name))) {
      throw new ToolsealError('SIGNATURE_INVALID', 'attestation signature does not verify', {
        cause: new Error('JWS header parameters must be disjoint, crit protected'),
      });
    }
  }
  if (!isBase64url(jws.protected) || !isBase64url(jws.payload) || !isBase64url(jws.signature)) {
    throw new ToolsealError('SIGNATURE_INVALID', 'attestation signature does not verify', {
      cause: new Error('JWS member is not base64url'),
    });
  }
  try {
    utf8Decoder.decode(Buffer.from(jws.protected, 'base64url')); // jose decodes the protected header as strict UTF-8
  } catch (cause) {
    throw new ToolsealError('SIGNATURE_INVALID', 'attestation signature does not verify', { cause });
  }
  const signingInput = Buffer.from(`${jws.protected}.${jws.payload}`, 'ascii');
  verifySignature(signingInput, Buffer.from(jws.signature, 'base64url'), jwk);
  return checkStatement(Buffer.from(jws.payload, 'base64url'), jwk, kid, expected);
}

/** Throws SIGNATURE_INVALID unless `signature` is the Ed25519 signature of `signingInput` by `jwk`. */
function verifySignature(signingInput: Uint8Array, signature: Uint8Array, jwk: JwksKey): void {
  let ok = false;
  try {
    ok =
      signature.byteLength === ED25519_SIGNATURE_BYTES &&
      verifyEd25519(null, signingInput, publicKeyObject(jwk), signature);
  } catch (cause) {
    throw new ToolsealError('SIGNATURE_INVALID', 'attestation signature does not verify', { cause });
  }
  if (!ok) throw new ToolsealError('SIGNATURE_INVALID', 'attestation signature does not verify');
}

/** The three members of a JCS flattened JWS, decoded, and where the signing input's parts are (readJcsAttestation). */
interface JcsAttestation {
  payload: Buffer;
  protectedHeader: Buffer;
  signature: Buffer;
  /** The protected header's and the payload's base64url text in the attestation bytes: [start, end). */
  protectedAt: number;
  protectedEnd: number;
  payloadAt: number;
  payloadEnd: number;
}

const JCS_PAYLOAD = Buffer.from('{"payload":"', 'ascii');
const JCS_PROTECTED = Buffer.from('","protected":"', 'ascii');
const JCS_SIGNATURE = Buffer.from('","signature":"', 'ascii');
const JCS_END = Buffer.from('"}', 'ascii');

/**
 * The members of `bytes` when they are exactly what signStatement writes: `{"payload":"P","protected":"H",
 * "signature":"S"}` with P, H and S unpadded base64url (RFC 7515 §2) of a whole number of bytes, decoded. JSON.parse
 * reads such bytes as exactly {payload: P, protected: H, signature: S} (base64url needs no escape, and a JSON string
 * ends at its first quote), with no unprotected header, and every such member passes isBase64url: what the general
 * path checks of them holds. Undefined for any other bytes, which take the general path.
 */
function readJcsAttestation(bytes: Uint8Array): JcsAttestation | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!startsWithAt(buffer, JCS_PAYLOAD, 0)) return undefined;
  const payloadAt = JCS_PAYLOAD.byteLength;
  const payloadEnd = buffer.indexOf(0x22, payloadAt);
  if (payloadEnd < 0 || !startsWithAt(buffer, JCS_PROTECTED, payloadEnd)) return undefined;
  const protectedAt = payloadEnd + JCS_PROTECTED.byteLength;
  const protectedEnd = buffer.indexOf(0x22, protectedAt);
  if (protectedEnd < 0 || !startsWithAt(buffer, JCS_SIGNATURE, protectedEnd)) return undefined;
  const signatureAt = protectedEnd + JCS_SIGNATURE.byteLength;
  const signatureEnd = buffer.byteLength - JCS_END.byteLength;
  if (signatureEnd < signatureAt || !startsWithAt(buffer, JCS_END, signatureEnd)) return undefined;
  const payload = decodeBase64urlAt(bytes, payloadAt, payloadEnd);
  const protectedHeader = decodeBase64urlAt(bytes, protectedAt, protectedEnd);
  const signature = decodeBase64urlAt(bytes, signatureAt, signatureEnd);
  if (payload === undefined || protectedHeader === undefined || signature === undefined) return undefined;
  return { payload, protectedHeader, signature, protectedAt, protectedEnd, payloadAt, payloadEnd };
}

/** `buffer` holds `expected` at `at` (byte by byte: these are short literals, shorter than a native call costs). */
function startsWithAt(buffer: Buffer, expected: Buffer, at: number): boolean {
  const length = expected.byteLength;
  if (buffer.byteLength < at + length) return false;
  for (let i = 0; i < length; i++) if (buffer[at + i] !== expected[i]) return false;
  return true;
}

const HEADER_HEAD = Buffer.from(`{"alg":${JSON.stringify(SIGNING_ALG)},"kid":"`, 'ascii');
const HEADER_TAIL = Buffer.from(`","typ":${JSON.stringify(ATTESTATION_JWS_TYPE)}}`, 'ascii');

/**
 * The kid of a protected header exactly as signStatement writes it, `{"alg":"EdDSA","kid":"K","typ":"…"}` with K
 * base64url (so JSON.parse reads it as {alg: EdDSA, kid: K, typ} and checkHeader accepts it with kid K); undefined
 * for any other header, which is parsed.
 */
function readSignedHeaderKid(header: Buffer): string | undefined {
  const kidAt = HEADER_HEAD.byteLength;
  const kidEnd = header.byteLength - HEADER_TAIL.byteLength;
  if (kidEnd < kidAt || !startsWithAt(header, HEADER_HEAD, 0) || !startsWithAt(header, HEADER_TAIL, kidEnd)) {
    return undefined;
  }
  for (let i = kidAt; i < kidEnd; i++) if (BASE64URL_VALUES[header[i] as number] === -1) return undefined;
  return header.toString('latin1', kidAt, kidEnd);
}

/** The value of each base64url symbol (RFC 4648 §5) by its byte, -1 for any other byte. */
const BASE64URL_VALUES = (() => {
  const values = new Int8Array(256).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  for (let i = 0; i < alphabet.length; i++) values[alphabet.charCodeAt(i)] = i;
  return values;
})();

/**
 * The bytes that `Buffer.from(text, 'base64url')` decodes from the text `bytes[start, end)` when that text passes
 * isBase64url (only base64url symbols, no padding, a length that is not 1 mod 4), read from the bytes without making
 * a string; undefined for any other text. Like Buffer, it drops the unused low bits of the last symbol.
 */
export function decodeBase64urlAt(bytes: Uint8Array, start: number, end: number): Buffer | undefined {
  const length = end - start;
  const tail = length % 4;
  if (start < 0 || end > bytes.byteLength || length < 0 || tail === 1) return undefined;
  const out = Buffer.allocUnsafe((length - tail) * 0.75 + (tail === 0 ? 0 : tail - 1));
  const values = BASE64URL_VALUES;
  const groupsEnd = end - tail;
  let o = 0;
  for (let i = start; i < groupsEnd; i += 4) {
    const a = values[bytes[i] as number] as number;
    const b = values[bytes[i + 1] as number] as number;
    const c = values[bytes[i + 2] as number] as number;
    const d = values[bytes[i + 3] as number] as number;
    if ((a | b | c | d) < 0) return undefined;
    out[o++] = (a << 2) | (b >> 4);
    out[o++] = ((b & 0x0f) << 4) | (c >> 2);
    out[o++] = ((c & 0x03) << 6) | d;
  }
  if (tail !== 0) {
    const a = values[bytes[groupsEnd] as number] as number;
    const b = values[bytes[groupsEnd + 1] as number] as number;
    const c = tail === 3 ? (values[bytes[groupsEnd + 2] as number] as number) : 0;
    if ((a | b | c) < 0) return undefined;
    out[o++] = (a << 2) | (b >> 4);
    if (tail === 3) out[o] = ((b & 0x0f) << 4) | (c >> 2);
  }
  return out;
}

/**
 * verifyAttestationSync for bytes readJcsAttestation read: the same checks in the same order, the protected header
 * decoded once, and the signing input copied from the bytes. A protected header that is not strict UTF-8 goes the
 * general way (which reads it leniently first, so an unknown kid in it is still UNKNOWN_KEY).
 */
function verifyJcsAttestation(
  bytes: Uint8Array,
  jws: JcsAttestation,
  jwks: Jwks,
  expected: AttestationExpectation,
): VerifiedAttestation {
  let kid = readSignedHeaderKid(jws.protectedHeader);
  if (kid === undefined) {
    let headerText: string;
    try {
      headerText = utf8Decoder.decode(jws.protectedHeader);
    } catch {
      return verifyAnyAttestation(bytes, jwks, expected);
    }
    kid = checkHeader(headerText);
  }
  const jwk = findKey(jwks, kid);
  const protectedLength = jws.protectedEnd - jws.protectedAt;
  const signingInput = Buffer.allocUnsafe(protectedLength + 1 + jws.payloadEnd - jws.payloadAt);
  signingInput.set(bytes.subarray(jws.protectedAt, jws.protectedEnd), 0);
  signingInput[protectedLength] = 0x2e; // .
  signingInput.set(bytes.subarray(jws.payloadAt, jws.payloadEnd), protectedLength + 1);
  verifySignature(signingInput, jws.signature, jwk);
  return checkStatement(jws.payload, jwk, kid, expected);
}

const ED25519_SIGNATURE_BYTES = 64;

/** Unpadded base64url (RFC 7515 §2) of a whole number of bytes: a length of 1 mod 4 is never valid. */
function isBase64url(text: string): boolean {
  return /^[A-Za-z0-9_-]*$/.test(text) && text.length % 4 !== 1;
}

type DecodedJws = FlattenedJWS & { protected: string; payload: string; signature: string };

/** Parse the flattened JWS and its protected header; refuses anything but {alg: EdDSA, typ, kid} without crit. */
function decodeAttestation(attestation: Uint8Array | string): {
  jws: DecodedJws;
  header: Record<string, unknown>;
  kid: string;
} {
  let jws: FlattenedJWS;
  try {
    jws = JSON.parse(typeof attestation === 'string' ? attestation : utf8Decoder.decode(attestation)) as FlattenedJWS;
  } catch (cause) {
    throw new ToolsealError('SIGNATURE_INVALID', 'attestation is not JSON', { cause });
  }
  if (
    typeof jws !== 'object' ||
    jws === null ||
    typeof jws.protected !== 'string' ||
    typeof jws.payload !== 'string' ||
    typeof jws.signature !== 'string'
  ) {
    throw new ToolsealError('SIGNATURE_INVALID', 'attestation is not a flattened JWS');
  }
  const header = parseHeader(Buffer.from(jws.protected, 'base64url').toString('utf8'));
  return { jws: jws as DecodedJws, header: header as Record<string, unknown>, kid: checkHeaderFields(header) };
}

type ProtectedHeader = { alg?: unknown; kid?: unknown; typ?: unknown; crit?: unknown };

function parseHeader(text: string): ProtectedHeader {
  try {
    return JSON.parse(text) as ProtectedHeader;
  } catch (cause) {
    throw new ToolsealError('SIGNATURE_INVALID', 'attestation protected header is not JSON', { cause });
  }
}

/** The kid of a protected header {alg: EdDSA, typ, kid} without crit; SIGNATURE_INVALID for any other header. */
function checkHeader(text: string): string {
  return checkHeaderFields(parseHeader(text));
}

function checkHeaderFields(header: ProtectedHeader): string {
  if (
    typeof header !== 'object' ||
    header === null ||
    header.alg !== SIGNING_ALG ||
    header.typ !== ATTESTATION_JWS_TYPE ||
    header.crit !== undefined ||
    typeof header.kid !== 'string'
  ) {
    throw new ToolsealError(
      'SIGNATURE_INVALID',
      `attestation header must be {alg: ${SIGNING_ALG}, typ: ${ATTESTATION_JWS_TYPE}, kid} without crit`,
    );
  }
  return header.kid;
}

function findKey(jwks: Jwks, kid: string): JwksKey {
  const jwk = jwks.keys.find((key) => key.kid === kid);
  if (!jwk) throw new ToolsealError('UNKNOWN_KEY', `no public key with kid ${kid}`);
  return jwk;
}

/**
 * After the signature: the statement's shape, the key's validity at storedAt, the subject and the digest. Shared by
 * the JWS and the DSSE (Sigstore bundle) forms: any key with a JWKS validity window.
 */
export function checkStatement(
  payload: Uint8Array,
  jwk: { nbf: number; exp?: number },
  kid: string,
  expected: AttestationExpectation,
): VerifiedAttestation {
  const statement = parseStatement(payload);
  const subject = statement.subject[0];
  const digest: Sha256Digest = `sha256:${subject.digest.sha256}`;
  const storedAt = new Date(statement.predicate.storedAt);
  const storedAtSeconds = Math.floor(storedAt.getTime() / 1000);
  if (
    Number.isNaN(storedAtSeconds) ||
    storedAtSeconds < jwk.nbf ||
    (jwk.exp !== undefined && storedAtSeconds >= jwk.exp)
  ) {
    throw new ToolsealError(
      'KEY_NOT_VALID',
      `key ${kid} was not the registry's signing key at ${statement.predicate.storedAt}`,
    );
  }
  if (expected.name !== undefined || expected.version !== undefined) {
    const want = formatSubjectName(expected.name ?? '', expected.version ?? '');
    if (subject.name !== want)
      throw new ToolsealError('SUBJECT_MISMATCH', `attestation is for ${subject.name}, not ${want}`);
  }
  if (expected.digest !== undefined && expected.digest !== digest) {
    throw new ToolsealError(
      'DIGEST_MISMATCH',
      `bytes have digest ${expected.digest} but the attestation covers ${digest}`,
    );
  }
  return { kid, statement, digest, subjectName: subject.name, storedAt };
}

const publicKeyObjects = new Map<string, KeyObject>();

function publicKeyObject(jwk: JwksKey): KeyObject {
  let key = publicKeyObjects.get(jwk.x);
  if (!key) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
    if (publicKeyObjects.size > 1000) publicKeyObjects.clear();
    publicKeyObjects.set(jwk.x, key);
  }
  return key;
}

const importedKeys = new Map<string, CryptoKey>();

async function importPublicKey(jwk: JwksKey): Promise<CryptoKey> {
  const cacheKey = `${jwk.kid}:${jwk.x}`;
  let key = importedKeys.get(cacheKey);
  if (!key) {
    key = (await importJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }, SIGNING_ALG)) as CryptoKey;
    if (importedKeys.size > 1000) importedKeys.clear();
    importedKeys.set(cacheKey, key);
  }
  return key;
}

function parseStatement(payload: Uint8Array): PublishStatement {
  let statement: PublishStatement;
  try {
    statement = JSON.parse(utf8Decoder.decode(payload)) as PublishStatement;
  } catch (cause) {
    throw new ToolsealError('SIGNATURE_INVALID', 'attestation payload is not JSON', { cause });
  }
  const subject = Array.isArray(statement?.subject) ? statement.subject[0] : undefined;
  if (
    statement?._type !== IN_TOTO_STATEMENT_TYPE ||
    statement.predicateType !== TOOLSEAL_PREDICATE_TYPE ||
    statement.subject.length !== 1 ||
    typeof subject?.name !== 'string' ||
    typeof subject.digest?.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(subject.digest.sha256) ||
    typeof statement.predicate?.storedAt !== 'string'
  ) {
    throw new ToolsealError('SIGNATURE_INVALID', 'attestation payload is not a toolseal publish statement');
  }
  return statement;
}

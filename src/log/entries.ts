// The transparency log's entry formats, formatted and parsed in this one place. Leaf data (hashed with RFC 6962's
// 0x00 prefix) is JCS JSON (RFC 8785) of one kind:
//   attestation — the exact attestation bytes, a flattened JWS (RFC 7515 §7.2.2) {payload, protected, signature};
//   yank        — {"type":"toolseal.yank/v1","subject":"<name>@<version>","digest":"sha256:…","reason":…,"yankedAt":…};
//   key         — {"type":"toolseal.key/v1","kid":…,"publicJwk":{…},"notBefore":…,"retires":{"kid":…,"notAfter":…}|null};
//   approval-decision    — {"type":"toolseal.approval-decision/v1","approval":"apr_…","commitment":"sha256:…",
//                           "decision":"approve"|"deny","operator":…,"audience":…,"manifest":"name@version","tool":…,
//                           "decidedAt":…};
//   approval-consumption — {"type":"toolseal.approval-consumption/v1","approval":"apr_…","commitment":"sha256:…",
//                           "consumedAt":…};
//   bundle      — the Rekor v2 hashedrekord v0.0.2 body of a Sigstore bundle's DSSE signature (issue 26,
//                 src/attest/rekor-entry.ts): {"apiVersion":"0.0.2","kind":"hashedrekord","spec":{…}}, no `type`;
//                 checked against its statement and the bundle keys by checkBundleLeaf (bundle-leaf.ts).
// An approval leaf commits to the action digest with a secret salt (issue 13 §3, docs/approvals.md): the digest of a
// low-entropy envelope could be brute-forced from the log, the salted commitment cannot.

import { computeKid, type PublicJwk } from '../attest/jwk.ts';
import { HASHEDREKORD_KIND, type HashedRekordFacts, parseHashedRekordBody } from '../attest/rekor-entry.ts';
import { equalBytes } from '../core/bytes.ts';
import { computeDigest, isSha256Digest, type Sha256Digest } from '../core/digest.ts';
import { isToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import { parseStrict } from '../pipeline/parse.ts';

export type LogEntryKind = 'attestation' | 'yank' | 'key' | 'approval-decision' | 'approval-consumption' | 'bundle';

export const YANK_ENTRY_TYPE = 'toolseal.yank/v1';
export const KEY_ENTRY_TYPE = 'toolseal.key/v1';
export const APPROVAL_DECISION_ENTRY_TYPE = 'toolseal.approval-decision/v1';
export const APPROVAL_CONSUMPTION_ENTRY_TYPE = 'toolseal.approval-consumption/v1';
/** The domain of an approval leaf's commitment to its action digest. */
export const APPROVAL_COMMITMENT_DOMAIN = 'toolseal/v1/approval-commitment:';
/** Bytes of an approval's commitment salt. */
export const APPROVAL_SALT_BYTES = 32;
/** Longest yank reason, in UTF-16 code units. */
export const MAX_YANK_REASON_LENGTH = 1000;
/** Largest leaf an entry bundle can carry (C2SP tlog-tiles: a two-byte length). */
const MAX_ENTRY_BYTES = 0xffff;

export interface YankEntry {
  type: typeof YANK_ENTRY_TYPE;
  subject: string;
  digest: Sha256Digest;
  reason: string;
  yankedAt: string;
}

export interface KeyEntry {
  type: typeof KEY_ENTRY_TYPE;
  kid: string;
  publicJwk: PublicJwk;
  /** Seconds since the epoch. */
  notBefore: number;
  retires: { kid: string; notAfter: number } | null;
}

export interface ApprovalDecisionEntry {
  type: typeof APPROVAL_DECISION_ENTRY_TYPE;
  approval: string;
  commitment: Sha256Digest;
  decision: 'approve' | 'deny';
  operator: string;
  audience: string;
  /** `name@version` of the signed manifest. */
  manifest: string;
  tool: string;
  decidedAt: string;
}

export interface ApprovalConsumptionEntry {
  type: typeof APPROVAL_CONSUMPTION_ENTRY_TYPE;
  approval: string;
  commitment: Sha256Digest;
  consumedAt: string;
}

const commitmentDomain = new TextEncoder().encode(APPROVAL_COMMITMENT_DOMAIN);

/**
 * `"sha256:" + hex(SHA-256("toolseal/v1/approval-commitment:" || salt || UTF-8(actionDigest)))`: what an approval leaf
 * records of the action digest. Without the 32-byte secret salt nobody can test guessed arguments against it.
 */
export function computeApprovalCommitment(salt: Uint8Array, actionDigest: string): Sha256Digest {
  const digest = new TextEncoder().encode(actionDigest);
  const bytes = new Uint8Array(commitmentDomain.length + salt.length + digest.length);
  bytes.set(commitmentDomain, 0);
  bytes.set(salt, commitmentDomain.length);
  bytes.set(digest, commitmentDomain.length + salt.length);
  return computeDigest(bytes);
}

export function formatApprovalDecisionEntry(entry: Omit<ApprovalDecisionEntry, 'type'>): Uint8Array {
  const { approval, commitment, decision, operator, audience, manifest, tool, decidedAt } = entry;
  return canonicalizeToBytes({
    type: APPROVAL_DECISION_ENTRY_TYPE,
    approval,
    commitment,
    decision,
    operator,
    audience,
    manifest,
    tool,
    decidedAt,
  });
}

export function formatApprovalConsumptionEntry(entry: Omit<ApprovalConsumptionEntry, 'type'>): Uint8Array {
  const { approval, commitment, consumedAt } = entry;
  return canonicalizeToBytes({ type: APPROVAL_CONSUMPTION_ENTRY_TYPE, approval, commitment, consumedAt });
}

export function formatYankEntry(entry: Omit<YankEntry, 'type'>): Uint8Array {
  return canonicalizeToBytes({ type: YANK_ENTRY_TYPE, ...entry });
}

export function formatKeyEntry(entry: Omit<KeyEntry, 'type'>): Uint8Array {
  const { kid, publicJwk, notBefore, retires } = entry;
  return canonicalizeToBytes({
    type: KEY_ENTRY_TYPE,
    kid,
    publicJwk: publicJwk as unknown as JsonValue,
    notBefore,
    retires: retires === null ? null : { kid: retires.kid, notAfter: retires.notAfter },
  });
}

/** Why a leaf is not a well-formed entry: the form of the leaf, or the rules of its kind. */
export type EntryProblemCode =
  | 'ENTRY_MALFORMED'
  | 'YANK_ENTRY_INVALID'
  | 'KEY_ENTRY_INVALID'
  | 'APPROVAL_ENTRY_INVALID'
  | 'BUNDLE_ENTRY_INVALID';

export type ParsedLogEntry =
  | { ok: true; kind: 'attestation' }
  | { ok: true; kind: 'yank'; entry: YankEntry }
  | { ok: true; kind: 'key'; entry: KeyEntry }
  | { ok: true; kind: 'approval-decision'; entry: ApprovalDecisionEntry }
  | { ok: true; kind: 'approval-consumption'; entry: ApprovalConsumptionEntry }
  | { ok: true; kind: 'bundle'; entry: HashedRekordFacts }
  | { ok: false; code: EntryProblemCode; message: string };

/**
 * Parse one leaf's data: strict JSON, an object, in JCS form, then the rules of its kind. An attestation is
 * only recognised by its shape here; its signature is the verifier's business.
 */
export function parseLogEntry(data: Uint8Array): ParsedLogEntry {
  let value: JsonValue;
  try {
    value = parseStrict(data, { maxBytes: MAX_ENTRY_BYTES, maxDepth: 16 }).value;
  } catch (error) {
    return malformed(`not strict JSON: ${isToolsealError(error) ? `${error.code}: ${error.message}` : String(error)}`);
  }
  if (!isJsonObject(value)) return malformed('not a JSON object');
  if (!equalBytes(canonicalizeToBytes(value), data)) return malformed('not in JCS canonical form');
  const type = value['type'];
  if (type === YANK_ENTRY_TYPE) return parseYankEntry(value);
  if (type === KEY_ENTRY_TYPE) return parseKeyEntry(value);
  if (type === APPROVAL_DECISION_ENTRY_TYPE) return parseApprovalDecisionEntry(value);
  if (type === APPROVAL_CONSUMPTION_ENTRY_TYPE) return parseApprovalConsumptionEntry(value);
  if (type === undefined && hasExactKeys(value, ['payload', 'protected', 'signature'])) {
    return { ok: true, kind: 'attestation' };
  }
  if (type === undefined && value['kind'] === HASHEDREKORD_KIND) {
    const facts = parseHashedRekordBody(data);
    if (typeof facts === 'string') return { ok: false, code: 'BUNDLE_ENTRY_INVALID', message: facts };
    return { ok: true, kind: 'bundle', entry: facts };
  }
  return malformed('neither an attestation, a yank, a key, an approval nor a bundle entry');
}

const SUBJECT_PATTERN = /^[^@\s]+\/[^@\s]+@[^@\s]+$/;
const KID_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** RFC 3339 §5.6 date-time. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

function parseYankEntry(entry: JsonObject): ParsedLogEntry {
  const bad = (why: string): ParsedLogEntry => ({ ok: false, code: 'YANK_ENTRY_INVALID', message: why });
  if (!hasExactKeys(entry, ['type', 'subject', 'digest', 'reason', 'yankedAt'])) {
    return bad('expected exactly type, subject, digest, reason, yankedAt');
  }
  const { subject, digest, reason, yankedAt } = entry;
  if (typeof subject !== 'string' || !SUBJECT_PATTERN.test(subject)) return bad('subject must be "<name>@<version>"');
  if (!isSha256Digest(digest)) return bad('digest must be sha256:<64 hex>');
  if (typeof reason !== 'string' || reason.trim().length === 0 || reason.length > MAX_YANK_REASON_LENGTH) {
    return bad(`reason must be 1 to ${MAX_YANK_REASON_LENGTH} characters`);
  }
  if (typeof yankedAt !== 'string' || !RFC3339.test(yankedAt) || Number.isNaN(Date.parse(yankedAt))) {
    return bad('yankedAt must be an RFC 3339 time');
  }
  return { ok: true, kind: 'yank', entry: { type: YANK_ENTRY_TYPE, subject, digest, reason, yankedAt } };
}

/** An approval request's id: `apr_` and 22 base64url characters (16 random bytes); the one definition of its form. */
export const APPROVAL_ID_SOURCE = 'apr_[A-Za-z0-9_-]{22}';
export const APPROVAL_ID_PATTERN = new RegExp(`^${APPROVAL_ID_SOURCE}$`);
/** Operator and host names (src/registry/principals.ts). */
const PRINCIPAL_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

function isRfc3339(value: JsonValue | undefined): value is string {
  return typeof value === 'string' && RFC3339.test(value) && !Number.isNaN(Date.parse(value));
}

function parseApprovalDecisionEntry(entry: JsonObject): ParsedLogEntry {
  const bad = (why: string): ParsedLogEntry => ({ ok: false, code: 'APPROVAL_ENTRY_INVALID', message: why });
  const keys = ['type', 'approval', 'commitment', 'decision', 'operator', 'audience', 'manifest', 'tool', 'decidedAt'];
  if (!hasExactKeys(entry, keys)) return bad(`expected exactly ${keys.join(', ')}`);
  const { approval, commitment, decision, operator, audience, manifest, tool, decidedAt } = entry;
  if (typeof approval !== 'string' || !APPROVAL_ID_PATTERN.test(approval)) return bad('approval must be an apr_ id');
  if (!isSha256Digest(commitment)) return bad('commitment must be sha256:<64 hex>');
  if (decision !== 'approve' && decision !== 'deny') return bad('decision must be "approve" or "deny"');
  if (typeof operator !== 'string' || !PRINCIPAL_NAME_PATTERN.test(operator)) return bad('operator must be a name');
  if (typeof audience !== 'string' || !PRINCIPAL_NAME_PATTERN.test(audience)) return bad('audience must be a name');
  if (typeof manifest !== 'string' || !SUBJECT_PATTERN.test(manifest))
    return bad('manifest must be "<name>@<version>"');
  if (typeof tool !== 'string' || tool === '' || [...tool].length > 128) return bad('tool must be a tool name');
  if (!isRfc3339(decidedAt)) return bad('decidedAt must be an RFC 3339 time');
  return {
    ok: true,
    kind: 'approval-decision',
    entry: {
      type: APPROVAL_DECISION_ENTRY_TYPE,
      approval,
      commitment,
      decision,
      operator,
      audience,
      manifest,
      tool,
      decidedAt,
    },
  };
}

function parseApprovalConsumptionEntry(entry: JsonObject): ParsedLogEntry {
  const bad = (why: string): ParsedLogEntry => ({ ok: false, code: 'APPROVAL_ENTRY_INVALID', message: why });
  if (!hasExactKeys(entry, ['type', 'approval', 'commitment', 'consumedAt'])) {
    return bad('expected exactly type, approval, commitment, consumedAt');
  }
  const { approval, commitment, consumedAt } = entry;
  if (typeof approval !== 'string' || !APPROVAL_ID_PATTERN.test(approval)) return bad('approval must be an apr_ id');
  if (!isSha256Digest(commitment)) return bad('commitment must be sha256:<64 hex>');
  if (!isRfc3339(consumedAt)) return bad('consumedAt must be an RFC 3339 time');
  return {
    ok: true,
    kind: 'approval-consumption',
    entry: { type: APPROVAL_CONSUMPTION_ENTRY_TYPE, approval, commitment, consumedAt },
  };
}

function parseKeyEntry(entry: JsonObject): ParsedLogEntry {
  const bad = (why: string): ParsedLogEntry => ({ ok: false, code: 'KEY_ENTRY_INVALID', message: why });
  if (!hasExactKeys(entry, ['type', 'kid', 'publicJwk', 'notBefore', 'retires'])) {
    return bad('expected exactly type, kid, publicJwk, notBefore, retires');
  }
  const { kid, publicJwk, notBefore, retires } = entry;
  if (typeof kid !== 'string' || !KID_PATTERN.test(kid)) {
    return bad('kid must be an RFC 7638 thumbprint (43 base64url characters)');
  }
  const jwkProblem = checkPublicJwk(publicJwk, kid);
  if (jwkProblem !== undefined) return bad(jwkProblem);
  if (typeof notBefore !== 'number' || !Number.isSafeInteger(notBefore) || notBefore < 0) {
    return bad('notBefore must be seconds since the epoch');
  }
  let retired: KeyEntry['retires'] = null;
  if (retires !== null) {
    if (!isJsonObject(retires) || !hasExactKeys(retires, ['kid', 'notAfter'])) {
      return bad('retires must be null or {kid, notAfter}');
    }
    const { kid: retiredKid, notAfter } = retires;
    if (typeof retiredKid !== 'string' || typeof notAfter !== 'number' || !Number.isSafeInteger(notAfter)) {
      return bad('retires must be null or {kid, notAfter}');
    }
    retired = { kid: retiredKid, notAfter };
  }
  const jwk = publicJwk as unknown as PublicJwk;
  return { ok: true, kind: 'key', entry: { type: KEY_ENTRY_TYPE, kid, publicJwk: jwk, notBefore, retires: retired } };
}

/** Undefined when `publicJwk` is an Ed25519 public key whose RFC 7638 thumbprint is `kid`; else why not. */
function checkPublicJwk(publicJwk: JsonValue | undefined, kid: string): string | undefined {
  if (
    !isJsonObject(publicJwk) ||
    publicJwk['kty'] !== 'OKP' ||
    publicJwk['crv'] !== 'Ed25519' ||
    typeof publicJwk['x'] !== 'string'
  ) {
    return 'publicJwk must be an Ed25519 OKP key';
  }
  if ('d' in publicJwk) return 'publicJwk holds private key material';
  if (computeKid({ crv: 'Ed25519', x: publicJwk['x'] }) !== kid) {
    return `kid ${kid} is not the RFC 7638 thumbprint of its publicJwk`;
  }
  if (publicJwk['kid'] !== undefined && publicJwk['kid'] !== kid) return 'publicJwk.kid differs from kid';
  return undefined;
}

function malformed(message: string): ParsedLogEntry {
  return { ok: false, code: 'ENTRY_MALFORMED', message };
}

function hasExactKeys(value: JsonObject, keys: readonly string[]): boolean {
  const own = Object.keys(value);
  return own.length === keys.length && keys.every((key) => Object.hasOwn(value, key));
}

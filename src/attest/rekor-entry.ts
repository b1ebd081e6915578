// The Rekor v2 `hashedrekord` v0.0.2 log entry (sigstore/protobuf-specs rekor/v2/entry.proto, hashedrekord.proto) a
// bundle's DSSE signature is logged as: the digest is SHA-256 of the DSSE PAE, the signature the envelope's, the
// verifier the P-256 key. Served and logged in JCS form (RFC 8785): a verifier hashes `canonicalizedBody` as it is
// (leaf = SHA-256(0x00 ‖ body), RFC 6962 §2.1), so the leaf is rebuilt from the bundle and nothing else.

import { createHash, type KeyObject } from 'node:crypto';
import { decodeBase64Strict, encodeBase64, equalBytes } from '../core/bytes.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { exportSpkiDer } from './p256-jwk.ts';

export const HASHEDREKORD_KIND = 'hashedrekord';
export const HASHEDREKORD_API_VERSION = '0.0.2';
/** protobuf-specs PublicKeyDetails of the bundle key. */
export const P256_KEY_DETAILS = 'PKIX_ECDSA_P256_SHA_256';
/** Largest body accepted when reading one back (a leaf of the log is at most 0xffff bytes). */
const MAX_BODY_BYTES = 0xffff;

/** What a hashedrekord v0.0.2 body says: the signed digest, the signature, and the signer's SPKI DER. */
export interface HashedRekordFacts {
  /** SHA-256 of the signed bytes (for DSSE: of the PAE). */
  digest: Uint8Array;
  signature: Uint8Array;
  /** DER SubjectPublicKeyInfo of the P-256 key. */
  publicKeySpki: Uint8Array;
}

/**
 * The JCS bytes of the hashedrekord v0.0.2 entry over `pae` (the DSSE pre-authentication encoding) signed by
 * `signature` with `publicKey`. These bytes are the log leaf's data and the bundle's `canonicalizedBody`.
 */
export function formatHashedRekordBody(pae: Uint8Array, signature: Uint8Array, publicKey: KeyObject): Uint8Array {
  return formatHashedRekordFacts({
    digest: new Uint8Array(createHash('sha256').update(pae).digest()),
    signature,
    publicKeySpki: exportSpkiDer(publicKey),
  });
}

/** formatHashedRekordBody from the facts themselves. */
export function formatHashedRekordFacts(facts: HashedRekordFacts): Uint8Array {
  return canonicalizeToBytes({
    apiVersion: HASHEDREKORD_API_VERSION,
    kind: HASHEDREKORD_KIND,
    spec: {
      hashedRekordV002: {
        data: { algorithm: 'SHA2_256', digest: encodeBase64(facts.digest) },
        signature: {
          content: encodeBase64(facts.signature),
          verifier: { keyDetails: P256_KEY_DETAILS, publicKey: { rawBytes: encodeBase64(facts.publicKeySpki) } },
        },
      },
    },
  });
}

/**
 * Read a hashedrekord v0.0.2 body: strict JSON, in JCS form, exactly the members formatHashedRekordFacts writes.
 * Returns the facts, or why the bytes are not such a body (the caller names the error).
 */
export function parseHashedRekordBody(body: Uint8Array): HashedRekordFacts | string {
  let value: JsonValue;
  try {
    value = parseStrict(body, { maxBytes: MAX_BODY_BYTES, maxDepth: 8 }).value;
  } catch {
    return 'is not strict JSON';
  }
  if (!isJsonObject(value)) return 'is not a JSON object';
  if (!equalBytes(canonicalizeToBytes(value), body)) return 'is not in JCS canonical form';
  if (value['kind'] !== HASHEDREKORD_KIND || value['apiVersion'] !== HASHEDREKORD_API_VERSION) {
    return `is not a ${HASHEDREKORD_KIND} v${HASHEDREKORD_API_VERSION} entry`;
  }
  const spec = member(member(value, 'spec'), 'hashedRekordV002');
  const data = member(spec, 'data');
  const signature = member(spec, 'signature');
  const verifier = member(signature, 'verifier');
  const publicKey = member(verifier, 'publicKey');
  if (data?.['algorithm'] !== 'SHA2_256') return 'does not digest with SHA2_256';
  if (verifier?.['keyDetails'] !== P256_KEY_DETAILS) return `is not for a ${P256_KEY_DETAILS} key`;
  const digest = readBytes(data?.['digest']);
  const content = readBytes(signature?.['content']);
  const spki = readBytes(publicKey?.['rawBytes']);
  if (digest === undefined || digest.byteLength !== 32) return 'has no 32-byte digest';
  if (content === undefined || spki === undefined) return 'has no signature or public key';
  const facts = { digest, signature: content, publicKeySpki: spki };
  // Only the members written above: a body with anything else is not one this registry logged.
  if (!equalBytes(formatHashedRekordFacts(facts), body)) return 'has members other than a hashedrekord v0.0.2 entry';
  return facts;
}

function member(object: JsonObject | undefined, key: string): JsonObject | undefined {
  const value = object?.[key];
  return isJsonObject(value) ? value : undefined;
}

function readBytes(value: JsonValue | undefined): Uint8Array | undefined {
  return typeof value === 'string' ? decodeBase64Strict(value) : undefined;
}

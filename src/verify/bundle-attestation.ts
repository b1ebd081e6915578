// Bundle stage: a Sigstore bundle v0.3 (sigstore/protobuf-specs sigstore_bundle.proto) read strictly; its DSSE
// envelope (one signature, keyid = the public-key hint) signed by a pinned P-256 bundle key, over a toolseal publish
// statement; and its tlog entry's hashedrekord v0.0.2 leaf rebuilt from the envelope and that key, never taken from it.

import {
  type AttestationExpectation,
  checkStatement,
  formatHashedRekordBody,
  formatPromisePayload,
  HASHEDREKORD_API_VERSION,
  HASHEDREKORD_KIND,
  type PublishStatement,
  readDsseEnvelope,
  SIGSTORE_BUNDLE_MEDIA_TYPE,
  type UsableBundleKey,
  verifyP256,
} from '../attest/index.ts';
import { decodeBase64Strict, equalBytes } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import type { InclusionEvidence } from './log-evidence.ts';
import { parseStrict } from '../pipeline/parse.ts';

/** Bundles are a few kilobytes; anything past this is not one of ours. */
const MAX_BUNDLE_BYTES = 1024 * 1024;
const DECIMAL = /^(?:0|[1-9][0-9]{0,15})$/;

/** A bundle whose signature and statement verified, with the log evidence still to prove. */
export interface VerifiedBundleAttestation {
  kid: string;
  statement: PublishStatement;
  subjectName: string;
  /** The leaf the log must hold: rebuilt here from the envelope and the pinned key. */
  leaf: Uint8Array;
  logIndex: number;
  /** The log's key id the entry names (`logId.keyId`), 32 bytes. */
  logId: Uint8Array;
  integratedTime: number;
  /** The log's signed entry timestamp, and the payload it must sign. */
  promise: { payload: Uint8Array; signature: Uint8Array };
  inclusion: InclusionEvidence;
  /** The root hash the proof claims (base64): it must be the checkpoint's. */
  rootHash: string;
}

function malformed(why: string): never {
  throw new ToolsealError('SIGNATURE_INVALID', `the bundle is not a Sigstore bundle v0.3 of this registry: ${why}`);
}

function objectAt(value: JsonValue | undefined, what: string): JsonObject {
  if (!isJsonObject(value)) malformed(`${what} is not an object`);
  return value as JsonObject;
}

function countAt(value: JsonValue | undefined, what: string): number {
  if (typeof value !== 'string' || !DECIMAL.test(value) || !Number.isSafeInteger(Number(value))) {
    malformed(`${what} is not a decimal string`);
  }
  return Number(value);
}

function bytesAt(value: JsonValue | undefined, what: string): Uint8Array {
  const bytes = typeof value === 'string' ? decodeBase64Strict(value) : undefined;
  if (bytes === undefined) malformed(`${what} is not base64`);
  return bytes as Uint8Array;
}

/**
 * Verify the bundle's signature and statement against the usable bundle keys (selectUsableBundleKeys). Throws
 * SIGNATURE_INVALID (not a bundle, not one signature with keyid = hint, a bad signature), UNKNOWN_KEY (no usable
 * key with the hint), KEY_NOT_VALID (storedAt, or the log's integration time, outside the key's nbf/exp),
 * SUBJECT_MISMATCH or DIGEST_MISMATCH (another name@version or digest than `expected`).
 */
export function verifyBundleAttestation(
  bundleBytes: Uint8Array,
  keys: ReadonlyMap<string, UsableBundleKey>,
  expected: AttestationExpectation,
): VerifiedBundleAttestation {
  let value: JsonValue;
  try {
    value = parseStrict(bundleBytes, { maxBytes: MAX_BUNDLE_BYTES, maxDepth: 16 }).value;
  } catch (cause) {
    throw new ToolsealError('SIGNATURE_INVALID', 'the bundle is not strict JSON', { cause });
  }
  const bundle = objectAt(value, 'the bundle');
  if (bundle['mediaType'] !== SIGSTORE_BUNDLE_MEDIA_TYPE) malformed(`mediaType is not ${SIGSTORE_BUNDLE_MEDIA_TYPE}`);
  const material = objectAt(bundle['verificationMaterial'], 'verificationMaterial');
  const hint = objectAt(material['publicKey'], 'verificationMaterial.publicKey')['hint'];
  if (typeof hint !== 'string' || hint === '') malformed('there is no public-key hint');
  const envelope = readDsseEnvelope(bundle['dsseEnvelope']);
  if (envelope.keyid !== hint) malformed('the DSSE signature keyid is not the public-key hint');
  const key = keys.get(hint as string);
  if (key === undefined) throw new ToolsealError('UNKNOWN_KEY', `no bundle key with kid ${hint}`);
  if (!verifyP256(envelope.pae, key.publicKey, envelope.signature)) {
    throw new ToolsealError('SIGNATURE_INVALID', 'the DSSE signature does not verify with the bundle key');
  }
  try {
    // The statement is read strictly (no duplicate member, no rounded number) before checkStatement reads it.
    parseStrict(envelope.payload, { maxBytes: MAX_BUNDLE_BYTES, maxDepth: 16 });
  } catch (cause) {
    throw new ToolsealError('SIGNATURE_INVALID', 'the signed statement is not strict JSON', { cause });
  }
  const verified = checkStatement(envelope.payload, key, key.kid, expected);

  const entries = material['tlogEntries'];
  if (!Array.isArray(entries) || entries.length !== 1) malformed('there is not exactly one tlog entry');
  const entry = objectAt((entries as JsonValue[])[0], 'tlogEntries[0]');
  const kindVersion = objectAt(entry['kindVersion'], 'kindVersion');
  if (kindVersion['kind'] !== HASHEDREKORD_KIND || kindVersion['version'] !== HASHEDREKORD_API_VERSION) {
    malformed(`the tlog entry is not ${HASHEDREKORD_KIND} ${HASHEDREKORD_API_VERSION}`);
  }
  const logIndex = countAt(entry['logIndex'], 'logIndex');
  const integratedTime = countAt(entry['integratedTime'], 'integratedTime');
  // The key must have been valid when the log integrated the entry, as a Sigstore verifier judges it.
  if (integratedTime < key.nbf || (key.exp !== undefined && integratedTime >= key.exp)) {
    throw new ToolsealError('KEY_NOT_VALID', `key ${key.kid} was not the registry's bundle key when it was logged`);
  }
  const leaf = formatHashedRekordBody(envelope.pae, envelope.signature, key.publicKey);
  const served = entry['canonicalizedBody'];
  if (served !== undefined && !equalBytes(bytesAt(served, 'canonicalizedBody'), leaf)) {
    malformed('canonicalizedBody is not the entry rebuilt from the envelope and the key');
  }
  const logId = bytesAt(objectAt(entry['logId'], 'logId')['keyId'], 'logId.keyId');
  const proof = objectAt(entry['inclusionProof'], 'inclusionProof');
  if (countAt(proof['logIndex'], 'inclusionProof.logIndex') !== logIndex) malformed('the proof is for another index');
  const hashes = proof['hashes'];
  if (!Array.isArray(hashes) || !hashes.every((hash) => typeof hash === 'string')) malformed('hashes is not a list');
  const checkpoint = objectAt(proof['checkpoint'], 'inclusionProof.checkpoint')['envelope'];
  if (typeof checkpoint !== 'string') malformed('the checkpoint is not a signed note');
  const promise = objectAt(entry['inclusionPromise'], 'inclusionPromise')['signedEntryTimestamp'];
  return {
    kid: key.kid,
    statement: verified.statement,
    subjectName: verified.subjectName,
    leaf,
    logIndex,
    logId,
    integratedTime,
    promise: {
      payload: formatPromisePayload(leaf, integratedTime, logIndex, logId),
      signature: bytesAt(promise, 'signedEntryTimestamp'),
    },
    inclusion: {
      index: logIndex,
      size: countAt(proof['treeSize'], 'treeSize'),
      hashes: hashes as string[],
      checkpoint: checkpoint as string,
    },
    rootHash: typeof proof['rootHash'] === 'string' ? proof['rootHash'] : malformed('rootHash is not base64'),
  };
}

// Sigstore bundle v0.3 (sigstore/protobuf-specs sigstore_bundle.proto, sigstore_rekor.proto; JSON in the protobuf
// JSON mapping: bytes as standard base64, int64 as decimal strings) for a DSSE-signed in-toto Statement, keyed by a
// public-key hint, with one tlog entry: the hashedrekord v0.0.2 leaf, its RFC 6962 inclusion proof up to a C2SP
// checkpoint of our log, and an inclusion promise (signed entry timestamp) by the log key.
//
// At publish time, in two steps: signBundleEntry (the envelope and the leaf to log) before the leaf is appended, then
// assembleBundle once the log has an index, a checkpoint and a proof for it. The promise (signInclusionPromise) is
// fixed per entry; the proof and checkpoint may be any later ones.

import { verify, type KeyObject } from 'node:crypto';
import { encodeBase64, encodeHex } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import { computeLogKeyId, parseNote, type NoteSigner } from '../log/note.ts';
import { parseCheckpoint } from '../log/checkpoint.ts';
import { buildDsseSigningJob, type DsseEnvelope } from './dsse.ts';
import type { BundleSigningKey } from './p256-jwk.ts';
import { formatHashedRekordBody, HASHEDREKORD_API_VERSION, HASHEDREKORD_KIND } from './rekor-entry.ts';
import { runSigningJob, type SigningJob } from './signing-job.ts';

export const SIGSTORE_BUNDLE_MEDIA_TYPE = 'application/vnd.dev.sigstore.bundle.v0.3+json';

export interface TlogEntryJson {
  logIndex: string;
  logId: { keyId: string };
  kindVersion: { kind: typeof HASHEDREKORD_KIND; version: typeof HASHEDREKORD_API_VERSION };
  integratedTime: string;
  inclusionPromise: { signedEntryTimestamp: string };
  inclusionProof: {
    logIndex: string;
    rootHash: string;
    treeSize: string;
    hashes: string[];
    checkpoint: { envelope: string };
  };
  canonicalizedBody: string;
}

export interface SigstoreBundleJson {
  mediaType: typeof SIGSTORE_BUNDLE_MEDIA_TYPE;
  verificationMaterial: {
    publicKey: { hint: string };
    tlogEntries: [TlogEntryJson];
  };
  dsseEnvelope: DsseEnvelope;
}

/** What is signed and logged for one statement, before the log has placed it. */
export interface SignedBundleEntry {
  envelope: DsseEnvelope;
  /** The JCS hashedrekord v0.0.2 body: append exactly these bytes to the log as one leaf. */
  leaf: Uint8Array;
}

/** Sign `statement` (its exact bytes) with the P-256 bundle key; the leaf records SHA-256(PAE) and the signature. */
export function signBundleEntry(statement: Uint8Array, key: BundleSigningKey): SignedBundleEntry {
  return runSigningJob(buildBundleEntrySigningJob(statement, key));
}

/** signBundleEntry as a SigningJob (signing-job.ts). */
export function buildBundleEntrySigningJob(
  statement: Uint8Array,
  key: BundleSigningKey,
): SigningJob<SignedBundleEntry> {
  const dsse = buildDsseSigningJob(statement, key);
  return {
    ...dsse,
    finish: (signature) => ({
      envelope: dsse.finish(signature),
      leaf: formatHashedRekordBody(dsse.data, signature, key.publicKey),
    }),
  };
}

/** The log a bundle points at: its checkpoint origin (the note key name) and its Ed25519 public key. */
export interface BundleLog {
  origin: string;
  /** Raw 32-byte Ed25519 public key, or the key object. */
  publicKey: Uint8Array | KeyObject;
}

/**
 * The bytes an inclusion promise signs, as Rekor's signed entry timestamp does and sigstore verifiers rebuild them:
 * JCS of {body: base64(canonicalizedBody), integratedTime, logID: hex(log id), logIndex}. JSON, never a note text
 * (a signed note's text ends in a newline), so the log key's two uses cannot be confused.
 */
export function formatPromisePayload(leaf: Uint8Array, integratedTime: number, logIndex: number, logId: Uint8Array) {
  return canonicalizeToBytes({ body: encodeBase64(leaf), integratedTime, logID: encodeHex(logId), logIndex });
}

/**
 * The log's signed entry timestamp for leaf `logIndex` integrated at `integratedTime` (seconds since the epoch):
 * the time a verifier judges the bundle key's validity by, with no timestamp authority. Signed by the log key.
 */
export function signInclusionPromise(
  leaf: Uint8Array,
  integratedTime: number,
  logIndex: number,
  logSigner: NoteSigner,
): Uint8Array {
  return runSigningJob(
    buildInclusionPromiseSigningJob(leaf, integratedTime, logIndex, {
      privateKey: logSigner.privateKey,
      logId: computeLogKeyId(logSigner.name, logSigner.privateKey),
    }),
  );
}

/** signInclusionPromise as a SigningJob (signing-job.ts), for a log whose key id (computeLogKeyId) is known. */
export function buildInclusionPromiseSigningJob(
  leaf: Uint8Array,
  integratedTime: number,
  logIndex: number,
  log: { privateKey: KeyObject; logId: Uint8Array },
): SigningJob<Uint8Array> {
  requireCount('integratedTime', integratedTime);
  requireCount('logIndex', logIndex);
  return {
    algorithm: null,
    data: formatPromisePayload(leaf, integratedTime, logIndex, log.logId),
    key: log.privateKey,
    finish: (signature) => signature,
  };
}

/** Whether `promise` is the log key's signature over the promise payload (Ed25519, RFC 8032). */
export function verifyInclusionPromise(payload: Uint8Array, promise: Uint8Array, logPublicKey: KeyObject): boolean {
  try {
    return verify(null, payload, logPublicKey, promise);
  } catch {
    return false;
  }
}

/** Everything the bundle of one logged statement holds. */
export interface BundleInput {
  entry: SignedBundleEntry;
  /** kid of the bundle key that signed (the hint, and the DSSE keyid). */
  kid: string;
  log: BundleLog;
  logIndex: number;
  integratedTime: number;
  /** signInclusionPromise's signature for this leaf, index and time. */
  promise: Uint8Array;
  /** RFC 9162 §2.1.3 inclusion proof of the leaf up to the checkpoint's tree, leaf to root. */
  proof: readonly Uint8Array[];
  /** The signed checkpoint (C2SP signed note), verbatim; its size and root are the proof's. */
  checkpoint: string;
}

/** The bundle v0.3 JSON. BAD_REQUEST when the parts do not belong together (kid, index, checkpoint origin). */
export function assembleBundle(input: BundleInput): SigstoreBundleJson {
  const { entry, kid, log, logIndex, integratedTime, promise, proof, checkpoint } = input;
  if (entry.envelope.signatures[0].keyid !== kid) {
    throw new ToolsealError('BAD_REQUEST', 'the DSSE signature keyid is not the bundle key hint');
  }
  requireCount('logIndex', logIndex);
  requireCount('integratedTime', integratedTime);
  const head = parseCheckpoint(parseNote(checkpoint).body);
  if (head.origin !== log.origin) {
    throw new ToolsealError('BAD_REQUEST', `the checkpoint is of ${head.origin}, not of the log ${log.origin}`);
  }
  if (logIndex >= head.size) throw new ToolsealError('BAD_REQUEST', 'the checkpoint does not cover the log index');
  const index = String(logIndex);
  return {
    mediaType: SIGSTORE_BUNDLE_MEDIA_TYPE,
    verificationMaterial: {
      publicKey: { hint: kid },
      tlogEntries: [
        {
          logIndex: index,
          logId: { keyId: encodeBase64(computeLogKeyId(log.origin, log.publicKey)) },
          kindVersion: { kind: HASHEDREKORD_KIND, version: HASHEDREKORD_API_VERSION },
          integratedTime: String(integratedTime),
          inclusionPromise: { signedEntryTimestamp: encodeBase64(promise) },
          inclusionProof: {
            logIndex: index,
            rootHash: encodeBase64(head.rootHash),
            treeSize: String(head.size),
            hashes: proof.map(encodeBase64),
            checkpoint: { envelope: checkpoint },
          },
          canonicalizedBody: encodeBase64(entry.leaf),
        },
      ],
    },
    dsseEnvelope: entry.envelope,
  };
}

function requireCount(what: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ToolsealError('BAD_REQUEST', `${what} must be a non-negative safe integer`);
  }
}

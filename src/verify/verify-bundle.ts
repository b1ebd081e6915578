// verifyBundle: the stages for a Sigstore bundle in order (pin, bundle, subject, log evidence; see ./index.ts), pure
// and synchronous, with the JWS path's guarantees: the bytes' digest recomputed, a pinned key's signature, the
// statement's subject and the bytes' own name@version, the leaf rebuilt from the bundle proven in the pinned log.

import { createPublicKey } from 'node:crypto';
import { type PublishStatement, selectUsableBundleKeys, verifyInclusionPromise } from '../attest/index.ts';
import { equalBytes } from '../core/bytes.ts';
import { computeDigest, type Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { computeLogKeyId, type NoteVerifier } from '../log/index.ts';
import type { Manifest } from '../pipeline/envelope.ts';
import { verifyBundleAttestation } from './bundle-attestation.ts';
import { toVerifier, type VerifiedCheckpoint, verifyLogEvidence } from './log-evidence.ts';
import { checkPinnedDigest } from './pin.ts';
import { checkDeclaredSubject } from './subject.ts';
import type { VerifyExpectation } from './verify-fetched.ts';

export interface VerifyBundleInput {
  /** The manifest bytes exactly as received. */
  bytes: Uint8Array;
  /** The bundle (application/vnd.dev.sigstore.bundle.v0.3+json) exactly as received. */
  bundle: Uint8Array;
  /**
   * Pinned bundle keys: a JWKS or a list of JWKs; its P-256 keys named by their RFC 7638 thumbprint, with nbf/exp,
   * are used (the Ed25519 JWS keys of the same JWKS are ignored here).
   */
  bundleKeys: unknown;
  /** The log's C2SP note verifier string (or a parsed verifier); the checkpoint origin must be its name. */
  logKey: string | NoteVerifier;
  expected?: VerifyExpectation;
}

export interface VerifiedBundle {
  bytes: Uint8Array;
  /** `bytes` parsed (strictly), when first read. */
  readonly manifest: Manifest;
  /** sha256 of `bytes`, recomputed here. */
  digest: Sha256Digest;
  name: string;
  version: string;
  statement: PublishStatement;
  /** The bundle key that signed. */
  kid: string;
  storedAt: string;
  /** When the log integrated the entry (seconds since the epoch), as its signed entry timestamp says. */
  integratedTime: number;
  logIndex: number;
  checkpoint: VerifiedCheckpoint;
}

/**
 * Every check of a bundle on in-memory inputs, synchronously. Throws ToolsealError with the codes of ./index.ts in
 * the same order: PIN_MISMATCH; SIGNATURE_INVALID, UNKNOWN_KEY, KEY_NOT_VALID, SUBJECT_MISMATCH, DIGEST_MISMATCH
 * (bundle stage); SUBJECT_MISMATCH (the bytes' own name@version); NOT_IN_LOG (the entry names another log, the
 * log's signed entry timestamp does not verify, the proof or checkpoint does not prove the rebuilt leaf).
 */
export function verifyBundle(input: VerifyBundleInput): VerifiedBundle {
  const { bytes, bundle, expected = {} } = input;
  if (!(bytes instanceof Uint8Array) || !(bundle instanceof Uint8Array)) {
    throw new ToolsealError('BAD_REQUEST', 'bytes and bundle must be Uint8Arrays');
  }
  const digest = computeDigest(bytes);
  checkPinnedDigest(digest, expected);
  const subject: { name?: string; version?: string; digest: Sha256Digest } = { digest };
  if (expected.name !== undefined) subject.name = expected.name;
  if (expected.version !== undefined) subject.version = expected.version;
  const attested = verifyBundleAttestation(bundle, selectUsableBundleKeys(input.bundleKeys), subject);
  const declared = checkDeclaredSubject(bytes, attested.subjectName);

  const verifier = toVerifier(input.logKey);
  const notInLog = (why: string): never => {
    throw new ToolsealError('NOT_IN_LOG', `the bundle is not proven to be in the log ${verifier.name}: ${why}`);
  };
  if (!equalBytes(attested.logId, computeLogKeyId(verifier.name, verifier.publicKey))) {
    notInLog('its tlog entry names another log');
  }
  const logPublicKey = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(verifier.publicKey).toString('base64url') },
    format: 'jwk',
  });
  if (!verifyInclusionPromise(attested.promise.payload, attested.promise.signature, logPublicKey)) {
    notInLog("the log's signed entry timestamp does not verify");
  }
  const proven = verifyLogEvidence(attested.leaf, attested.inclusion, verifier, expected.logIndex);
  if (proven.checkpoint.rootHash !== attested.rootHash) notInLog("the proof's root hash is not the checkpoint's");
  return {
    bytes,
    get manifest(): Manifest {
      return declared.readManifest();
    },
    digest,
    name: declared.name,
    version: declared.version,
    statement: attested.statement,
    kid: attested.kid,
    storedAt: attested.statement.predicate.storedAt,
    integratedTime: attested.integratedTime,
    logIndex: proven.index,
    checkpoint: proven.checkpoint,
  };
}

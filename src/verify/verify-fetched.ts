// verifyFetched: the stages in order (pin, attestation, subject, log evidence; see ./index.ts), pure and synchronous.

import type { Jwks, JwksKey, PublishStatement } from '../attest/index.ts';
import { computeDigest, type Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { selectUsableKeys } from '../attest/index.ts';
import type { NoteVerifier, WitnessPolicy } from '../log/index.ts';
import type { Manifest } from '../pipeline/envelope.ts';
import { type AttestedSubject, verifyAttestationWithUsableKeys } from './attestation.ts';
import {
  type InclusionEvidence,
  type LogEvidenceHooks,
  type VerifiedCheckpoint,
  verifyLogEvidence,
} from './log-evidence.ts';
import { checkPinnedDigest } from './pin.ts';
import { checkDeclaredSubject } from './subject.ts';
import type { JsonValue } from '../core/json.ts';
import { expectPublisherClaim, type PublisherClaimExpectation } from './publisher-claim.ts';

export interface VerifyExpectation {
  /** Manifest name (`namespace/name`) asked for; the attestation subject must match. */
  name?: string;
  /** Exact version asked for; the attestation subject must match. */
  version?: string;
  /** A pinned digest (lockfile, configuration): anything else is PIN_MISMATCH, whatever is signed. */
  digest?: Sha256Digest;
  /** The log index the registry claims; the proof must be for that index. */
  logIndex?: number;
  /** Claims the attestation's provenance must carry exactly (issue 28 §3): PUBLISHER_MISMATCH otherwise. */
  publisherClaims?: PublisherClaimExpectation;
}

export interface VerifyFetchedInput {
  /** The manifest bytes exactly as received. */
  bytes: Uint8Array;
  /** The attestation bytes exactly as logged (a JCS flattened JWS). */
  attestation: Uint8Array;
  /** The inclusion proof of the attestation; undefined is NOT_IN_LOG. */
  inclusion: InclusionEvidence | undefined;
  /** Keys the attestation may be signed with (pinned, or the registry's). */
  jwks: Jwks | readonly JwksKey[];
  /** The log's C2SP note verifier string (or a parsed verifier); the checkpoint origin must be its name. */
  logKey: string | NoteVerifier;
  expected?: VerifyExpectation;
  /** A C2SP tlog-policy the checkpoint must meet (parseWitnessPolicy): else WITNESS_QUORUM. */
  witnessPolicy?: WitnessPolicy;
  /** POSIX seconds cosignature timestamps are compared with (later ones are ignored); default: now. */
  nowSeconds?: number;
}

export interface VerifiedManifest {
  /** The verified bytes: hand exactly these (or `manifest`, parsed from them) to the model and router. */
  bytes: Uint8Array;
  /** `bytes` parsed (strictly); parsed when first read, the bytes having been shown to parse when verified. */
  readonly manifest: Manifest;
  /** sha256 of `bytes`, recomputed here. */
  digest: Sha256Digest;
  name: string;
  version: string;
  /** The attestation bytes exactly as verified and found in the log. */
  attestation: Uint8Array;
  statement: PublishStatement;
  kid: string;
  storedAt: string;
  /** The proven log index of the attestation. */
  logIndex: number;
  checkpoint: VerifiedCheckpoint;
}

/**
 * Every host-side check on in-memory inputs, synchronously: no network, no clock, no database.
 * Throws ToolsealError with the codes, in the order, listed in ./index.ts; returns what was proven.
 */
export function verifyFetched(input: VerifyFetchedInput): VerifiedManifest {
  return verifyWithKeys(input, new KeysOfInput(input.jwks));
}

/**
 * How a verification reads its keys and checkpoints (called as methods): selected now (verifyFetched) or once (a
 * Verifier). checkCheckpoint verifies the checkpoint note (default: verifyCheckpoint, every time); readEvidence
 * reads the inclusion evidence (default: readEvidence; a Verifier remembers the previous proof's hashes).
 */
export interface VerificationKeys extends LogEvidenceHooks {
  /** The usable keys of the input's JWKS (selectUsableKeys), asked for only once the pin holds. */
  usableJwks(): Jwks;
}

/** verifyFetched's keys: the input's JWKS, selected when asked for. */
class KeysOfInput implements VerificationKeys {
  constructor(private readonly jwks: Jwks | readonly JwksKey[]) {}

  usableJwks(): Jwks {
    return selectUsableKeys(this.jwks).jwks;
  }
}

/** verifyFetched with the keys and checkpoint check `keys` gives: the same stages, codes and order. */
export function verifyWithKeys(input: VerifyFetchedInput, keys: VerificationKeys): VerifiedManifest {
  const { bytes, attestation, expected = {} } = input;
  if (!(bytes instanceof Uint8Array) || !(attestation instanceof Uint8Array)) {
    throw new ToolsealError('BAD_REQUEST', 'bytes and attestation must be Uint8Arrays');
  }
  const digest = computeDigest(bytes);
  checkPinnedDigest(digest, expected);
  const subject: AttestedSubject = { digest };
  if (expected.name !== undefined) subject.name = expected.name;
  if (expected.version !== undefined) subject.version = expected.version;
  const verified = verifyAttestationWithUsableKeys(attestation, keys.usableJwks(), subject);
  const declared = checkDeclaredSubject(bytes, verified.subjectName);
  const witness =
    input.witnessPolicy === undefined
      ? undefined
      : { policy: input.witnessPolicy, nowSeconds: input.nowSeconds ?? Date.now() / 1000 };
  const proven = verifyLogEvidence(attestation, input.inclusion, input.logKey, expected.logIndex, keys, witness);
  if (expected.publisherClaims !== undefined) {
    expectPublisherClaim(verified.statement.predicate as unknown as JsonValue, expected.publisherClaims);
  }
  return {
    bytes,
    get manifest(): Manifest {
      return declared.readManifest();
    },
    digest,
    name: declared.name,
    version: declared.version,
    attestation,
    statement: verified.statement,
    kid: verified.kid,
    storedAt: verified.statement.predicate.storedAt,
    logIndex: proven.index,
    checkpoint: proven.checkpoint,
  };
}

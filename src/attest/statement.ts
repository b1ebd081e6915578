// The in-toto Statement v1 a publish attestation signs (in-toto attestation spec, Statement layer v1).

import { canonicalizeToText, type JsonValue, type Sha256Digest } from '../pipeline/index.ts';
import type { PublishProvenance } from './provenance.ts';

export const IN_TOTO_STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
/** Versioned: a change to the predicate's meaning is a new URI. */
export const TOOLSEAL_PREDICATE_TYPE = 'https://toolseal.dev/attestation/publish/v1';
/** JWS `typ` (RFC 7515 §4.1.9) of our attestations. */
export const ATTESTATION_JWS_TYPE = 'application/vnd.toolseal.attestation.v1+jws';

export interface PublishPredicate {
  /** Origin of the registry that stored and signed (e.g. `http://127.0.0.1:8787`). */
  registry: string;
  /** The publisher's namespace. */
  publisher: string;
  /** When the registry stored the bytes (RFC 3339, UTC, milliseconds). Keys are judged by this time. */
  storedAt: string;
  /** The pipeline policy version that produced the canonical bytes. */
  policy: string;
  /** Canonical size in bytes. */
  size: number;
  /** Digest of the previous version of the same manifest name, or null for the first. */
  previousDigest: Sha256Digest | null;
  /** How the publish was authorised (issue 28 §3): a publisher token or an OIDC ID token; absent before issue 28. */
  provenance?: PublishProvenance;
}

export interface PublishStatement {
  _type: typeof IN_TOTO_STATEMENT_TYPE;
  subject: [{ name: string; digest: { sha256: string } }];
  predicateType: typeof TOOLSEAL_PREDICATE_TYPE;
  predicate: PublishPredicate;
}

export function formatSubjectName(name: string, version: string): string {
  return `${name}@${version}`;
}

export function buildPublishStatement(input: {
  name: string;
  version: string;
  digest: Sha256Digest;
  predicate: PublishPredicate;
}): PublishStatement {
  return {
    _type: IN_TOTO_STATEMENT_TYPE,
    subject: [
      { name: formatSubjectName(input.name, input.version), digest: { sha256: input.digest.slice('sha256:'.length) } },
    ],
    predicateType: TOOLSEAL_PREDICATE_TYPE,
    predicate: input.predicate,
  };
}

/**
 * The statement's JCS form (RFC 8785), written directly rather than walked generically: it runs once per publish
 * inside the commit. Members are emitted in §3.2.3 order (sorted by UTF-16 code unit: `_type` < `predicate` <
 * `predicateType` < `subject`), strings by JSON.stringify (§3.2.2.2 is ECMAScript's string serialisation) and
 * the size as a safe integer (§3.2.2.3). Anything off that shape goes through the generic canonicaliser.
 */
export function serializeStatementJcs(statement: PublishStatement): string {
  const { predicate } = statement;
  const subject = statement.subject[0];
  const exactShape =
    Object.keys(statement).length === 4 &&
    statement.subject.length === 1 &&
    Object.keys(subject).length === 2 &&
    Object.keys(subject.digest).length === 1 &&
    Object.keys(predicate).length === 6 && // PublishPredicate's members, each written below
    Number.isSafeInteger(predicate.size) &&
    [
      statement._type,
      statement.predicateType,
      subject.name,
      subject.digest.sha256,
      predicate.registry,
      predicate.publisher,
      predicate.storedAt,
      predicate.policy,
    ].every((value) => typeof value === 'string') &&
    (predicate.previousDigest === null || typeof predicate.previousDigest === 'string');
  if (!exactShape) return canonicalizeToText(statement as unknown as JsonValue);
  const text = JSON.stringify;
  return (
    `{"_type":${text(statement._type)},` +
    `"predicate":{"policy":${text(predicate.policy)},"previousDigest":${predicate.previousDigest === null ? 'null' : text(predicate.previousDigest)},` +
    `"publisher":${text(predicate.publisher)},"registry":${text(predicate.registry)},"size":${String(predicate.size)},"storedAt":${text(predicate.storedAt)}},` +
    `"predicateType":${text(statement.predicateType)},` +
    `"subject":[{"digest":{"sha256":${text(subject.digest.sha256)}},"name":${text(subject.name)}}]}`
  );
}

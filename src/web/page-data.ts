// What the pages show of stored data, read for display only (nothing here is verification; the browser's panel is):
// the attestation's claims (RFC 7515 §7.2.2 flattened JWS over an in-toto Statement v1), log leaves by kind
// (docs/transparency-log.md), and manifest bytes as a Manifest (the stored bytes are RFC 8785 JCS of a checked one).

import { describePublishProvenance, readPublishProvenance } from '../attest/provenance.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import { parseLogEntry } from '../log/entries.ts';
import type { Manifest } from '../pipeline/index.ts';
import { versionPagePath } from './paths.ts';

/** What an attestation says about itself; any member it does not carry is undefined. */
export interface AttestationClaims {
  kid: string | undefined;
  subject: string | undefined;
  digest: string | undefined;
  registry: string | undefined;
  publisher: string | undefined;
  storedAt: string | undefined;
  policy: string | undefined;
  previousDigest: string | null | undefined;
  /** How the publish was authorised, in one line (issue 28 §3); undefined for an attestation without provenance. */
  provenance: string | undefined;
}

export interface LogRow {
  index: number;
  kind: 'attestation' | 'yank' | 'key' | 'approval-decision' | 'approval-consumption' | 'bundle' | 'unreadable';
  subject: string;
  time: string | undefined;
  link: { href: string; label: string } | undefined;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

function decodeBase64urlJson(value: JsonValue | undefined): Record<string, JsonValue> | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = parseJson(Buffer.from(value, 'base64url').toString('utf8'));
  return isJsonObject(parsed) ? parsed : undefined;
}

const text = (value: JsonValue | undefined): string | undefined => (typeof value === 'string' ? value : undefined);

/** The claims of attestation bytes (a flattened JWS), unverified. */
export function readAttestationClaims(bytes: Uint8Array): AttestationClaims {
  let jws: JsonValue | undefined;
  try {
    jws = parseJson(decoder.decode(bytes));
  } catch {
    jws = undefined;
  }
  const header = isJsonObject(jws) ? decodeBase64urlJson(jws['protected']) : undefined;
  const statement = isJsonObject(jws) ? decodeBase64urlJson(jws['payload']) : undefined;
  const subjects = statement?.['subject'];
  const subject = Array.isArray(subjects) && isJsonObject(subjects[0]) ? subjects[0] : undefined;
  const digest = isJsonObject(subject?.['digest']) ? text(subject['digest']['sha256']) : undefined;
  const predicate = isJsonObject(statement?.['predicate']) ? statement['predicate'] : {};
  const previous = predicate['previousDigest'];
  return {
    kid: text(header?.['kid']),
    subject: text(subject?.['name']),
    digest: digest === undefined ? undefined : `sha256:${digest}`,
    registry: text(predicate['registry']),
    publisher: text(predicate['publisher']),
    storedAt: text(predicate['storedAt']),
    policy: text(predicate['policy']),
    previousDigest: previous === null ? null : text(previous),
    provenance: describeProvenanceMember(predicate['provenance']),
  };
}

function describeProvenanceMember(value: JsonValue | undefined): string | undefined {
  const provenance = readPublishProvenance(value);
  return provenance === undefined ? undefined : describePublishProvenance(provenance);
}

/** `name@version` split at its last `@` (versions hold no `@`), or undefined. */
function splitSubject(subject: string | undefined): { name: string; version: string } | undefined {
  const at = subject?.lastIndexOf('@') ?? -1;
  if (subject === undefined || at <= 0) return undefined;
  return { name: subject.slice(0, at), version: subject.slice(at + 1) };
}

function linkToVersion(subject: string | undefined): LogRow['link'] {
  const ref = splitSubject(subject);
  return ref && { href: versionPagePath(ref.name, ref.version), label: 'manifest' };
}

/** One log leaf as a row: its kind, what it names, when, and where to look at it. */
export function describeLogEntry(index: number, data: Uint8Array): LogRow {
  const parsed = parseLogEntry(data);
  if (!parsed.ok) return { index, kind: 'unreadable', subject: parsed.message, time: undefined, link: undefined };
  if (parsed.kind === 'yank') {
    const { subject, yankedAt, reason } = parsed.entry;
    return { index, kind: 'yank', subject: `${subject}: ${reason}`, time: yankedAt, link: linkToVersion(subject) };
  }
  if (parsed.kind === 'key') {
    const { kid, notBefore, retires } = parsed.entry;
    const subject = retires === null ? `key ${kid}` : `key ${kid} (retires ${retires.kid})`;
    const time = new Date(notBefore * 1000).toISOString();
    return { index, kind: 'key', subject, time, link: { href: '/.well-known/jwks.json', label: 'JWKS' } };
  }
  if (parsed.kind === 'approval-decision') {
    const { approval, decision, operator, audience, manifest, tool, decidedAt } = parsed.entry;
    const subject = `${approval}: ${decision} by ${operator} for ${audience} (${manifest} ${tool})`;
    return { index, kind: parsed.kind, subject, time: decidedAt, link: linkToVersion(manifest) };
  }
  if (parsed.kind === 'approval-consumption') {
    const { approval, consumedAt } = parsed.entry;
    return { index, kind: parsed.kind, subject: `${approval}: consumed`, time: consumedAt, link: undefined };
  }
  if (parsed.kind === 'bundle') {
    // A Sigstore bundle's hashedrekord (issue 26): it names a digest and a key, not a version.
    return {
      index,
      kind: 'bundle',
      subject: 'Sigstore bundle signature (hashedrekord)',
      time: undefined,
      link: undefined,
    };
  }
  const claims = readAttestationClaims(data);
  const subject = claims.subject ?? '(no subject)';
  return { index, kind: 'attestation', subject, time: claims.storedAt, link: linkToVersion(claims.subject) };
}

/** Stored manifest bytes as a Manifest (they passed the closed envelope when they were published). */
export function readManifest(bytes: Uint8Array): Manifest {
  return JSON.parse(decoder.decode(bytes)) as Manifest;
}

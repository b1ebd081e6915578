// How a publish was authorised, for the publish attestation's predicate (issue 28 §3; in the spirit of SLSA
// Provenance v1 `runDetails.builder` / npm provenance): a long-lived publisher token, or an OIDC ID token (OpenID
// Connect Core 1.0 §2) whose CI claims are recorded under names shared by GitHub Actions and GitLab CI.

import { isJsonObject, type JsonValue } from '../core/json.ts';

/** The CI claims a host can require (`--expect-publisher-claim NAME=VALUE`), each copied from the verified token. */
export interface ProvenanceClaims {
  /** GitHub `repository` / GitLab `project_path`. */
  repository?: string;
  /** GitHub `workflow_ref` / GitLab `ci_config_ref_uri`. */
  workflow_ref?: string;
  /** The commit built: GitHub and GitLab `sha`. */
  sha?: string;
  /** GitHub `run_id` / GitLab `pipeline_id`. */
  run_id?: string;
  /** GitHub and GitLab `environment`. */
  environment?: string;
}

export const PROVENANCE_CLAIM_NAMES = ['repository', 'workflow_ref', 'sha', 'run_id', 'environment'] as const;
export type ProvenanceClaimName = (typeof PROVENANCE_CLAIM_NAMES)[number];

export type PublishProvenance =
  | { method: 'token'; publisher: string; unverifiedNamespace?: true }
  | { method: 'oidc'; issuer: string; subject: string; claims: ProvenanceClaims; unverifiedNamespace?: true };

/** The OIDC claim each provenance claim is read from, GitHub's name first. */
const SOURCE_CLAIMS: Readonly<Record<ProvenanceClaimName, readonly string[]>> = {
  repository: ['repository', 'project_path'],
  workflow_ref: ['workflow_ref', 'ci_config_ref_uri'],
  sha: ['sha'],
  run_id: ['run_id', 'pipeline_id'],
  environment: ['environment'],
};

export function buildTokenProvenance(
  publisher: string,
  options: { unverifiedNamespace?: boolean } = {},
): PublishProvenance {
  return options.unverifiedNamespace === true
    ? { method: 'token', publisher, unverifiedNamespace: true }
    : { method: 'token', publisher };
}

/** The provenance of a verified ID token: its issuer, `sub`, and the CI claims it carries as strings. */
export function buildOidcProvenance(
  issuer: string,
  payload: Readonly<Record<string, unknown>>,
  options: { unverifiedNamespace?: boolean } = {},
): PublishProvenance {
  const claims: ProvenanceClaims = {};
  for (const name of PROVENANCE_CLAIM_NAMES) {
    for (const source of SOURCE_CLAIMS[name]) {
      const value = payload[source];
      if (typeof value === 'string' && value !== '') {
        claims[name] = value;
        break;
      }
    }
  }
  const subject = typeof payload.sub === 'string' ? payload.sub : '';
  const provenance: PublishProvenance = { method: 'oidc', issuer, subject, claims };
  if (options.unverifiedNamespace === true) provenance.unverifiedNamespace = true;
  return provenance;
}

/** `value` read back as a provenance record (from a parsed, verified statement); undefined when it is not one. */
export function readPublishProvenance(value: JsonValue | undefined): PublishProvenance | undefined {
  if (!isJsonObject(value)) return undefined;
  const unverified = value.unverifiedNamespace;
  if (unverified !== undefined && unverified !== true) return undefined;
  const flag = unverified === true ? { unverifiedNamespace: true as const } : {};
  if (value.method === 'token') {
    if (typeof value.publisher !== 'string' || !hasOnlyKeys(value, ['method', 'publisher', 'unverifiedNamespace'])) {
      return undefined;
    }
    return { method: 'token', publisher: value.publisher, ...flag };
  }
  if (value.method !== 'oidc') return undefined;
  const { issuer, subject, claims } = value;
  if (typeof issuer !== 'string' || typeof subject !== 'string' || !isJsonObject(claims)) return undefined;
  if (!hasOnlyKeys(value, ['method', 'issuer', 'subject', 'claims', 'unverifiedNamespace'])) return undefined;
  if (!hasOnlyKeys(claims, PROVENANCE_CLAIM_NAMES)) return undefined;
  const copy: ProvenanceClaims = {};
  for (const name of PROVENANCE_CLAIM_NAMES) {
    const claim = claims[name];
    if (claim === undefined) continue;
    if (typeof claim !== 'string') return undefined;
    copy[name] = claim;
  }
  return { method: 'oidc', issuer, subject, claims: copy, ...flag };
}

/**
 * The provenance in stored attestation bytes (a flattened JWS over the statement), read without verifying: for what
 * the registry shows of its own attestations (pages, `/v0.1` `_meta`). Undefined when there is none or it is unreadable.
 */
export function readAttestationProvenance(attestation: Uint8Array): PublishProvenance | undefined {
  try {
    const jws: unknown = JSON.parse(new TextDecoder().decode(attestation));
    const payload = isJsonObject(jws as JsonValue) ? (jws as Record<string, unknown>).payload : undefined;
    if (typeof payload !== 'string') return undefined;
    const statement = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as JsonValue;
    const predicate = isJsonObject(statement) ? statement.predicate : undefined;
    return isJsonObject(predicate) ? readPublishProvenance(predicate.provenance) : undefined;
  } catch {
    return undefined;
  }
}

/** One line for pages and CLI output: "published by acme/payments-mcp, workflow release.yml at 3f2a1b9c". */
export function describePublishProvenance(provenance: PublishProvenance): string {
  const unverified = provenance.unverifiedNamespace === true ? ' (namespace not verified)' : '';
  if (provenance.method === 'token') return `published with the token of ${provenance.publisher}${unverified}`;
  const { claims } = provenance;
  const parts = [`published by ${claims.repository ?? provenance.subject}`];
  const workflowPath = claims.workflow_ref?.split('@')[0];
  if (workflowPath !== undefined) parts.push(`workflow ${workflowPath.slice(workflowPath.lastIndexOf('/') + 1)}`);
  let text = parts.join(', ');
  if (claims.sha !== undefined) text += ` at ${claims.sha.slice(0, 8)}`;
  return text + unverified;
}

function hasOnlyKeys(value: object, allowed: readonly string[]): boolean {
  return Object.keys(value).every((key) => allowed.includes(key));
}

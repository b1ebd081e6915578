// The MCP Registry read API's answers (modelcontextprotocol/registry, docs/reference/api/openapi.yaml 2025-12-01:
// ServerResponse, ServerList, the 404 body, URL-encoded `{serverName}`), built from a stored version, pure. The
// routes (/v0.1/servers…) are mounted by src/http; this module only shapes what they send.

import type { PublishProvenance } from '../attest/provenance.ts';
import type { Sha256Digest } from '../core/digest.ts';
import type { JsonObject } from '../core/json.ts';
import type { Manifest } from '../pipeline/envelope.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import { computeDigest } from '../core/digest.ts';
import { composeServerDetail } from '../pipeline/server-member.ts';
import { formatManifestRef, isManifestName } from './manifest-ref.ts';
import type { VersionStatus } from './wire.ts';

/** The official registry's own `_meta` key (ServerResponse._meta): status, publishedAt, updatedAt, isLatest. */
export const OFFICIAL_META_KEY = 'io.modelcontextprotocol.registry/official';

/** Our `_meta` key (reverse DNS of toolseal.dev): what a client that knows toolseal verifies. */
export const TOOLSEAL_META_KEY = 'dev.toolseal/signed-manifest';

/** The official lifecycle status: a yanked version is `deprecated` (it stays readable, as yanked versions do). */
export type OfficialStatus = 'active' | 'deprecated';

/** `_meta["io.modelcontextprotocol.registry/official"]`: exactly these members (the schema allows no other we use). */
export interface OfficialMeta {
  status: OfficialStatus;
  publishedAt: string;
  updatedAt: string;
  isLatest: boolean;
}

/** Where a client finds the evidence for a version (absolute URLs or registry paths; the caller decides). */
export interface EvidenceUrls {
  /** The flattened JWS attestation (GET …/{version}/attestation). */
  attestationUrl: string;
  /** Everything needed offline: attestation, inclusion proof and tlog-proof text (GET /v1/attestations/{digest}). */
  bundleUrl: string;
  /** The version's Sigstore bundle v0.3 (GET …/{version}/bundle), for @sigstore/verify and cosign (issue 26). */
  sigstoreBundleUrl?: string;
  /** The C2SP tlog-proof text on its own, when the registry serves it at its own URL. */
  tlogProofUrl?: string;
}

/** `_meta["dev.toolseal/signed-manifest"]`. */
export interface ToolsealMeta {
  /** `name@version`. */
  manifest: string;
  /** sha256 of the signed manifest bytes (JCS): what the attestation signs. */
  digest: Sha256Digest;
  /** One digest per tool, in manifest order: sha256(JCS(the signed tool object)), the action digest's toolDigest. */
  tools: { name: string; digest: Sha256Digest }[];
  status: VersionStatus;
  /** Present exactly when the version is yanked. */
  yankReason?: string;
  attestationUrl: string;
  bundleUrl: string;
  sigstoreBundleUrl?: string;
  tlogProofUrl?: string;
  /** Index of the attestation's leaf in the transparency log. */
  logIndex: number;
  /** How the publish was authorised, as the attestation records it (issue 28 §3); absent when it records nothing. */
  provenance?: PublishProvenance;
}

/** A stored version, as the caller read it (the manifest parsed from bytes that matched their digest). */
export interface StoredServerVersion {
  manifest: Manifest;
  digest: Sha256Digest;
  status: VersionStatus;
  yankReason?: string | null;
  /** RFC 3339: when this version was published. */
  publishedAt: string;
  /** RFC 3339: the last change to this version's entry (its yank, else its publication). */
  updatedAt: string;
  isLatest: boolean;
  logIndex: number;
  evidence: EvidenceUrls;
  provenance?: PublishProvenance | undefined;
}

/** ServerResponse: `{server, _meta}`. */
export interface OfficialServerResponse {
  server: JsonObject;
  _meta: { [OFFICIAL_META_KEY]: OfficialMeta; [TOOLSEAL_META_KEY]: ToolsealMeta };
}

/** ServerList: `{servers, metadata: {nextCursor?, count}}` (nextCursor absent on the last page). */
export interface OfficialServerList {
  servers: OfficialServerResponse[];
  metadata: { nextCursor?: string; count: number };
}

/** The 404 body of every /v0.1 route (OpenAPI: `{error: string}`). */
export interface OfficialNotFoundBody {
  error: string;
}

/**
 * The ServerResponse for a stored version; `undefined` when its manifest has no `server` member (such versions are
 * not in the official API at all).
 */
export function formatServerResponse(version: StoredServerVersion): OfficialServerResponse | undefined {
  const server = composeServerDetail(version.manifest);
  if (server === undefined) return undefined;
  const yanked = version.status === 'yanked';
  const ours: ToolsealMeta = {
    manifest: formatManifestRef(version.manifest.name, version.manifest.version),
    digest: version.digest,
    tools: version.manifest.tools.map((tool) => ({ name: tool.name, digest: computeSignedToolDigest(tool) })),
    status: version.status,
    ...(yanked ? { yankReason: version.yankReason ?? '' } : {}),
    attestationUrl: version.evidence.attestationUrl,
    bundleUrl: version.evidence.bundleUrl,
    ...(version.evidence.sigstoreBundleUrl === undefined
      ? {}
      : { sigstoreBundleUrl: version.evidence.sigstoreBundleUrl }),
    ...(version.evidence.tlogProofUrl === undefined ? {} : { tlogProofUrl: version.evidence.tlogProofUrl }),
    logIndex: version.logIndex,
    ...(version.provenance === undefined ? {} : { provenance: version.provenance }),
  };
  return {
    server,
    _meta: {
      [OFFICIAL_META_KEY]: {
        status: yanked ? 'deprecated' : 'active',
        publishedAt: version.publishedAt,
        updatedAt: version.updatedAt,
        isLatest: version.isLatest,
      },
      [TOOLSEAL_META_KEY]: ours,
    },
  };
}

/** `"sha256:" + hex(SHA-256(JCS(tool)))`: the same digest as src/dispatch's computeToolDigest (a test holds them equal). */
export function computeSignedToolDigest(tool: object): Sha256Digest {
  return computeDigest(canonicalizeToBytes(tool as JsonObject));
}

/** A ServerList page. `nextCursor` null or empty: the last page (the member is then left out, as the API says). */
export function formatServerList(
  servers: readonly OfficialServerResponse[],
  nextCursor: string | null,
): OfficialServerList {
  return {
    servers: [...servers],
    metadata: { ...(nextCursor ? { nextCursor } : {}), count: servers.length },
  };
}

/** The 404 body for an unknown (or not URL-encoded) server name, or an unknown version of a known server. */
export function formatNotFoundBody(what: 'server' | 'version'): OfficialNotFoundBody {
  return { error: what === 'server' ? 'Server not found' : 'Server version not found' };
}

/**
 * The manifest name a raw `{serverName}` path segment stands for, or `undefined` (answer 404): the segment must be
 * URL-encoded as the API says (`io.github.acme%2Fpayments`: the slash as %2F, no literal '/') and decode to a valid
 * manifest name. Pass the segment as it appears in the request path, before any router decoding.
 */
export function decodeServerNameSegment(rawSegment: string): string | undefined {
  if (rawSegment.includes('/') || !/%2f/i.test(rawSegment)) return undefined;
  let name: string;
  try {
    name = decodeURIComponent(rawSegment);
  } catch {
    return undefined;
  }
  return isManifestName(name) ? name : undefined;
}

/** The version a raw `{version}` segment names (`1.0.0%2Bbuild` → `1.0.0+build`), `latest` kept; `undefined` if malformed. */
export function decodeVersionSegment(rawSegment: string): string | undefined {
  if (rawSegment.includes('/')) return undefined;
  try {
    const version = decodeURIComponent(rawSegment);
    return version === '' || version.includes('/') ? undefined : version;
  } catch {
    return undefined;
  }
}

/** The path of a server's version in the official API (what a client builds): the name URL-encoded. */
export function officialVersionPath(name: string, version: string): string {
  return `/v0.1/servers/${encodeURIComponent(name)}/versions/${encodeURIComponent(version)}`;
}

// The registry's HTTP routes, once: the patterns the server mounts and the paths clients build, so the two sides
// cannot drift. Log paths follow C2SP tlog-tiles (tiles, entry bundles) and tlog-checkpoint.

import type { Sha256Digest } from '../core/digest.ts';
import { APPROVAL_ID_SOURCE } from '../log/entries.ts';
import { formatEntryBundlePath } from '../log/tiles.ts';

/** Hono route patterns (the server side). */
export const ROUTES = {
  health: '/healthz',
  jwks: '/.well-known/jwks.json',
  /** The OpenAPI 3.1 document of this API (src/http/openapi.ts). */
  openapi: '/openapi.json',
  manifests: '/v1/manifests',
  manifest: '/v1/manifests/:namespace/:name',
  version: '/v1/manifests/:namespace/:name/:version',
  attestation: '/v1/manifests/:namespace/:name/:version/attestation',
  /** The version's Sigstore bundle v0.3 (issue 26, docs/sigstore.md). */
  bundle: '/v1/manifests/:namespace/:name/:version/bundle',
  /** The Sigstore trusted root naming the registry's log (issue 26). */
  trustedRoot: '/v1/sigstore/trusted-root.json',
  yank: '/v1/manifests/:namespace/:name/:version/yank',
  blob: '/v1/blobs/:digest{sha256:[0-9a-f]{64}}',
  /** The Sigstore bundle of the one version whose bytes have this digest (issue 26 §1: "and by digest"). */
  bundleByDigest: '/v1/blobs/:digest{sha256:[0-9a-f]{64}}/bundle',
  attestationsByDigest: '/v1/attestations/:digest{sha256:[0-9a-f]{64}}',
  logCheckpoint: '/v1/log/checkpoint',
  logKey: '/v1/log/key',
  logTile: '/v1/log/tile/*',
  inclusionProof: '/v1/log/proof/inclusion',
  consistencyProof: '/v1/log/proof/consistency',
  whoami: '/v1/whoami',
  approvals: '/v1/approvals',
  approval: `/v1/approvals/:id{${APPROVAL_ID_SOURCE}}`,
  approvalDecision: `/v1/approvals/:id{${APPROVAL_ID_SOURCE}}/decision`,
  approvalConsume: `/v1/approvals/:id{${APPROVAL_ID_SOURCE}}/consume`,
} as const;

/** Every tile and entry-bundle path is below this prefix (`tile/…` follows it). */
export const LOG_PREFIX = '/v1/log/';

/** The methods each route family answers (for 405 with `Allow`, RFC 9110 §15.5.6). */
export const ROUTE_METHODS: readonly (readonly [RegExp, readonly string[]])[] = [
  [/^\/v1\/manifests$/, ['GET', 'HEAD', 'POST']],
  [/^\/v1\/manifests\/[^/]+\/[^/]+\/[^/]+\/yank$/, ['POST']],
  [/^\/v1\/manifests\/[^/]+\/[^/]+(\/[^/]+(\/attestation|\/bundle)?)?$/, ['GET', 'HEAD']],
  [/^\/v1\/sigstore\/trusted-root\.json$/, ['GET', 'HEAD']],
  [/^\/v1\/(blobs|attestations)\/sha256:[0-9a-f]{64}$/, ['GET', 'HEAD']],
  [/^\/v1\/blobs\/sha256:[0-9a-f]{64}\/bundle$/, ['GET', 'HEAD']],
  [/^\/v1\/log\/(checkpoint|key|tile\/.+|proof\/(inclusion|consistency))$/, ['GET', 'HEAD']],
  [/^\/(healthz|\.well-known\/jwks\.json)$/, ['GET', 'HEAD']],
  [/^\/openapi\.json$/, ['GET', 'HEAD']],
  [/^\/v1\/whoami$/, ['GET', 'HEAD']],
  [/^\/v1\/approvals$/, ['GET', 'HEAD', 'POST']],
  [new RegExp(`^/v1/approvals/${APPROVAL_ID_SOURCE}$`), ['GET', 'HEAD']],
  [new RegExp(`^/v1/approvals/${APPROVAL_ID_SOURCE}/(decision|consume)$`), ['POST']],
  // The MCP Registry read API (issue 27 §3): read-only, with the CORS preflight (any path below /v0.1/servers is
  // answered, an unknown name with the official 404 body).
  [/^\/v0\.1\/servers(\/.+)?$/, ['GET', 'HEAD', 'OPTIONS']],
];

/** The methods `path` answers; empty for an unknown path. */
export function allowedMethodsOf(path: string): readonly string[] {
  return ROUTE_METHODS.find(([pattern]) => pattern.test(path))?.[1] ?? [];
}

/** `/v1/manifests/{namespace}/{name}`: the versions of a manifest. */
export function manifestPath(name: string): string {
  return `${ROUTES.manifests}/${name.split('/').map(encodeURIComponent).join('/')}`;
}

/** `/v1/manifests/{namespace}/{name}/{version}`: the exact stored bytes. */
export function versionPath(name: string, version: string): string {
  return `${manifestPath(name)}/${encodeURIComponent(version)}`;
}

export function attestationPath(name: string, version: string): string {
  return `${versionPath(name, version)}/attestation`;
}

/** `/v1/manifests/{namespace}/{name}/{version}/bundle`: the Sigstore bundle of the version. */
export function bundlePath(name: string, version: string): string {
  return `${versionPath(name, version)}/bundle`;
}

export function yankPath(name: string, version: string): string {
  return `${versionPath(name, version)}/yank`;
}

export function blobPath(digest: Sha256Digest | string): string {
  return `/v1/blobs/${digest}`;
}

/** `/v1/blobs/{digest}/bundle`: the Sigstore bundle of the version whose bytes have `digest`. */
export function bundleByDigestPath(digest: Sha256Digest | string): string {
  return `${blobPath(digest)}/bundle`;
}

export function attestationsByDigestPath(digest: Sha256Digest | string): string {
  return `/v1/attestations/${digest}`;
}

export function entryBundlePath(bundle: number, width: number): string {
  return `${LOG_PREFIX}${formatEntryBundlePath(bundle, width)}`;
}

export function inclusionProofPath(index: number, size: number): string {
  return `${ROUTES.inclusionProof}?index=${index}&size=${size}`;
}

export function consistencyProofPath(from: number, to: number): string {
  return `${ROUTES.consistencyProof}?from=${from}&to=${to}`;
}

/** `/v1/approvals/{id}`: one approval request (host or operator). */
export function approvalPath(id: string): string {
  return `${ROUTES.approvals}/${encodeURIComponent(id)}`;
}

/** `/v1/approvals?status=…`: the operator's list. */
export function approvalsListPath(status?: string): string {
  return status === undefined ? ROUTES.approvals : `${ROUTES.approvals}?status=${encodeURIComponent(status)}`;
}

export function approvalDecisionPath(id: string): string {
  return `${approvalPath(id)}/decision`;
}

export function approvalConsumePath(id: string): string {
  return `${approvalPath(id)}/consume`;
}

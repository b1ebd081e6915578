// The JSON shapes of the registry's HTTP API (what the server writes with `satisfies`, what clients parse).
// Media types: manifests and JSON answers application/json, attestations application/jose+json (RFC 7515 §7.2).

import type { Sha256Digest } from '../core/digest.ts';
import type { JsonObject } from '../core/json.ts';
import type { RenamedTool } from '../pipeline/names.ts';

export const JSON_CONTENT_TYPE = 'application/json';
export const JOSE_JSON_CONTENT_TYPE = 'application/jose+json';

export type VersionStatus = 'active' | 'yanked';

/** An inclusion proof (RFC 9162 §2.1.3.1) of a leaf up to a signed checkpoint (C2SP signed note, verbatim). */
export interface InclusionProofDto {
  index: number;
  size: number;
  /** Base64 sibling hashes, leaf to root. */
  hashes: string[];
  checkpoint: string;
}

/** POST /v1/manifests, 201 or 200. */
export interface PublishResponse {
  name: string;
  version: string;
  digest: Sha256Digest;
  size: number;
  /** The flattened JWS exactly as stored (its JCS bytes are the log leaf). */
  attestation: JsonObject;
  renamedTools: RenamedTool[];
  status: VersionStatus;
  storedAt: string;
  logIndex: number;
  inclusionProof: InclusionProofDto;
  /** The same evidence as a C2SP tlog-proof text. */
  tlogProof: string;
  url: string;
}

/** GET /v1/manifests. */
export interface ManifestListResponse {
  items: {
    name: string;
    latestVersion: string;
    digest: string;
    status: VersionStatus;
    storedAt: string;
    publisher: string;
    url: string;
  }[];
  nextCursor: string | null;
}

/** GET /v1/manifests/{namespace}/{name}. */
export interface VersionListResponse {
  name: string;
  versions: {
    version: string;
    digest: string;
    status: VersionStatus;
    storedAt: string;
    yankReason?: string | null;
    yankedAt?: string | null;
  }[];
}

/** POST …/yank body. */
export interface YankRequest {
  reason: string;
}

/** POST …/yank answer. */
export interface YankResponse {
  name: string;
  version: string;
  digest: string;
  status: VersionStatus;
  yankReason: string | null;
  yankedAt: string | null;
  yankLogIndex: number | null;
  /** True when the version was yanked before: nothing changed, and `yankReason` is the first reason. */
  alreadyYanked?: boolean;
  /** On a second yank, the reason this request gave (not recorded). */
  requestedReason?: string;
}

/** One name@version bound to a digest (GET /v1/attestations/{digest}). */
export interface BindingDto {
  name: string;
  version: string;
  publisher: string;
  storedAt: string;
  kid: string;
  status: VersionStatus;
  yankReason?: string | null;
  logIndex: number;
  attestation: JsonObject;
  inclusionProof: InclusionProofDto;
  tlogProof: string;
}

export interface BindingsResponse {
  digest: string;
  bindings: BindingDto[];
}

export interface HealthResponse {
  status: 'ok';
  logSize: number;
  activeKid: string;
}

export interface InclusionProofResponse {
  index: number;
  size: number;
  hashes: string[];
}

export interface ConsistencyProofResponse {
  from: number;
  to: number;
  hashes: string[];
}

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
  /** The path of the version's Sigstore bundle on this registry (GET …/{version}/bundle; issue 26). */
  bundle: string;
}

export interface BindingsResponse {
  digest: string;
  bindings: BindingDto[];
}

export interface HealthResponse {
  status: 'ok';
  logSize: number;
  activeKid: string;
  /** With several processes on one PostgreSQL database: whether this one holds the sequencer lease now. */
  sequencer?: 'sequencer' | 'follower';
  /** With `serve --witness-policy`: each witness of the policy, how far behind the log it is and its last failure. */
  witnesses?: WitnessHealthDto[];
}

/** One witness in /healthz (issue 25 §2): sizes are null while unknown (a witness never reached). */
export interface WitnessHealthDto {
  /** The witness's name in the policy file. */
  name: string;
  /** The last log size it cosigned with a cosignature that verified (a size it only claimed never counts). */
  cosignedSize: number | null;
  /** The latest submitted size minus cosignedSize. */
  behindBy: number | null;
  consecutiveFailures: number;
  /** Its last failure, one line (down, slow, garbage, a cosignature that does not verify, a size the log never had). */
  lastError: string | null;
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

// ── approvals (docs/approvals.md) ─────────────────────────────────────────

/** GET /v1/whoami (any token): the principal a bearer token belongs to (a host's name is its approvals' audience). */
export interface WhoamiResponse {
  kind: 'publisher' | 'operator' | 'host';
  name: string;
}

/** The `_meta` key under which guard names an approval (in a tool result, and in a retried call's params). */
export const APPROVAL_META_KEY = 'io.toolseal/approval';

/** How long an approval request stays open unless the server is told otherwise (`serve --approval-ttl`). */
export const DEFAULT_APPROVAL_TTL_SECONDS = 900;

/**
 * An approval request's state. `expired` is never stored: a pending or approved request past `expiresAt` reads as
 * expired (and fails closed); `denied` and `consumed` are final.
 */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'consumed' | 'expired';

export const APPROVAL_STATUSES: readonly ApprovalStatus[] = ['pending', 'approved', 'denied', 'consumed', 'expired'];

/**
 * POST /v1/approvals (201 for a new request; 200 with the existing one when an identical request — same digest, same
 * host — is still open, i.e. pending or approved and neither expired nor consumed).
 */
export interface ApprovalCreatedResponse {
  /** `apr_` + 22 base64url characters (128 random bits). */
  id: string;
  /** The action digest the registry recomputed from the envelope and the signed tool. */
  digest: Sha256Digest;
  status: ApprovalStatus;
  expiresAt: string;
  /** Absolute URL of the request on this registry (GET it; the web page is /ui/approvals/{id}). */
  url: string;
}

/** GET /v1/approvals/{id} (the host it is for, or an operator). */
export interface ApprovalResponse {
  id: string;
  digest: Sha256Digest;
  status: ApprovalStatus;
  /** The action envelope exactly as the host sent it (`arguments` as the call sent them). */
  envelope: JsonObject;
  /** The signed tool object from the signed manifest bytes (name, description, inputSchema, capabilities, approval). */
  tool: JsonObject;
  /** The material view the digest binds (informational members removed, strings NFC, unordered arrays sorted). */
  material: JsonObject;
  createdAt: string;
  expiresAt: string;
  /** The operator who decided, once decided. */
  decidedBy?: string;
  decidedAt?: string;
  reason?: string;
  consumedAt?: string;
  /** Log indexes of the decision and consumption leaves, once logged. */
  decisionLogIndex?: number;
  consumptionLogIndex?: number;
  /**
   * The salt of the log leaves' commitment (base64url), shown only to the host and operators: with it and the
   * digest anyone they share it with can check the leaves; without it, a leaf reveals nothing about the arguments.
   */
  commitmentSalt: string;
}

/** GET /v1/approvals?status=… (operators): newest first. */
export interface ApprovalListResponse {
  items: Omit<ApprovalResponse, 'envelope' | 'tool' | 'material' | 'commitmentSalt'>[];
}

/** POST /v1/approvals/{id}/decision (operator token). A closed object. */
export interface ApprovalDecisionRequest {
  decision: 'approve' | 'deny';
  /** The digest the operator was shown: another one is APPROVAL_DIGEST_MISMATCH. */
  digest: string;
  reason?: string;
}

/** POST /v1/approvals/{id}/decision → 200; POST /v1/approvals/{id}/consume → 200. */
export interface ApprovalTransitionResponse {
  id: string;
  digest: Sha256Digest;
  status: ApprovalStatus;
  /** The leaf recording the transition, under a signed checkpoint before this answer. */
  logIndex: number;
}

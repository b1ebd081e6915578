// `toolseal/host`: the stable façade an MCP host imports — fetch-and-verify, the lockfile, the dispatch-time checks.
// Loads no server, database or MCP SDK code and no child_process (checked by .dependency-cruiser.cjs and by the
// tarball test). The proxy is `toolseal/guard`, the auditor `toolseal/audit`.

export {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  createVerifier,
  fetchVerified,
  fetchVerifiedBundle,
  parseManifestRef,
  parseWitnessPolicy,
  verifyBundle,
  verifyFetched,
} from '../verify/index.ts';
export type {
  FetchedBundle,
  FetchedManifestBundle,
  FetchVerifiedBundleFormatOptions,
  FetchVerifiedBundleOptions,
  VerifiedBundle,
  VerifyBundleInput,
  ConsistencyEvidence,
  ConsistencyRange,
  Verifier,
  VerifierInput,
  VerifierOptions,
  YankedPolicy,
  FetchVerifiedOptions,
  FetchedManifest,
  InclusionEvidence,
  ManifestRef,
  VerifiedCheckpoint,
  VerifiedManifest,
  VerifyExpectation,
  VerifyFetchedInput,
  WitnessPolicy,
} from '../verify/index.ts';

export {
  DEFAULT_LOCKFILE_NAME,
  LOCKFILE_VERSION,
  emptyLockfile,
  formatLockfile,
  getLockEntry,
  lockKey,
  parseLockfile,
  readLockfile,
  setLockEntry,
  writeLockfile,
} from '../lock/lockfile.ts';
export type { LockEntry, Lockfile } from '../lock/lockfile.ts';

export { writeFileAtomic } from '../lock/atomic-file.ts';

export {
  DEFAULT_HOST_ANNOTATIONS_KEY,
  checkPresentedTool,
  findFirstDifference,
  normalisePresentedTool,
  presentableSignedTool,
  verifyDispatch,
} from '../dispatch/dispatch.ts';
export type { Difference, ToolCheck, VerifyDispatchOptions } from '../dispatch/dispatch.ts';

export {
  ACTION_DIGEST_DOMAIN,
  ACTION_TYPE,
  computeAction,
  computeActionForCall,
  computeToolDigest,
  selectSignedTool,
} from '../dispatch/action-digest.ts';
export type { Action, ActionEnvelope, SignedTool } from '../dispatch/action-digest.ts';
export { computeActionFromRequest, readActionRequest } from '../dispatch/action-request.ts';
export type { ActionRequest } from '../dispatch/action-request.ts';
export { fromParsedArguments, readCallArguments, readToolCall } from '../dispatch/arguments.ts';
export type { CallArguments, ToolCall } from '../dispatch/arguments.ts';
export { buildMaterialView } from '../dispatch/material-view.ts';
export type { ApprovalClassification } from '../dispatch/argument-patterns.ts';

export { APPROVAL_ID_PATTERN, ApprovalsClient } from '../client/approvals.ts';
export type { ApprovalCreated, ApprovalDecision, ApprovalsClientOptions } from '../client/approvals.ts';
export type {
  ApprovalCreatedResponse,
  ApprovalListResponse,
  ApprovalResponse,
  ApprovalStatus,
  ApprovalTransitionResponse,
  WhoamiResponse,
} from '../protocol/wire.ts';

export { ToolsealError, isToolsealError } from '../core/errors.ts';
export type { ErrorCode, ErrorJson } from '../core/errors.ts';
export type { Jwks, JwksKey } from '../attest/index.ts';
export type { Manifest, ManifestTool, Sha256Digest } from '../pipeline/index.ts';

// `toolseal/host`: what an MCP host imports — fetch-and-verify, the lockfile, and the dispatch-time checks.
// No server or database code is reachable from here (no store, http, registry, SQLite, drizzle or hono).

export {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  fetchVerified,
  parseManifestRef,
  verifyFetched,
} from '../verify/fetch-verified.ts';
export type {
  FetchVerifiedOptions,
  FetchedManifest,
  InclusionEvidence,
  ManifestRef,
  VerifiedCheckpoint,
  VerifiedManifest,
  VerifyExpectation,
  VerifyFetchedInput,
} from '../verify/fetch-verified.ts';

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

export { ToolsealError, isToolsealError } from '../core/errors.ts';
export type { ErrorCode, ErrorJson } from '../core/errors.ts';
export type { Jwks, JwksKey } from '../attest/index.ts';
export type { Manifest, ManifestTool, Sha256Digest } from '../pipeline/index.ts';

export {
  GUARD_CALL_REFUSED_CODE,
  GUARD_LIST_REFUSED_CODE,
  GUARD_PARSE_ERROR_CODE,
  GUARD_SESSION_REFUSED_CODE,
  GuardedTransport,
  ToolGuard,
  startStdioGuard,
} from '../guard/guard.ts';
export type {
  GuardDecision,
  GuardFinding,
  GuardFindingEvent,
  GuardFindingReason,
  GuardMessage,
  GuardedTransportOptions,
  StdioGuardOptions,
  StdioGuardOutcome,
  StdioGuardSession,
  ToolGuardOptions,
} from '../guard/guard.ts';

export { AUDIT_STATE_TYPE, auditWithStateFile, formatAuditState, parseAuditState, runAudit } from '../audit/audit.ts';
export type {
  AuditOptions,
  AuditProblem,
  AuditProblemCode,
  AuditReport,
  AuditResult,
  AuditState,
  LogKeySource,
} from '../audit/audit.ts';

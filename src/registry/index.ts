// Public face of the registry use cases: publish, fetch, yank, publishers, operators and hosts, approvals, auditor
// queries, keys, log, fsck.
// No HTTP, no SQL, no threads here: the store is a port (src/store), and where the pipeline runs and where
// publishes are committed are ports too (PipelineRunner, PublishCommitter), implemented inline or in src/runtime.

export { openRegistry, Registry } from './registry.ts';
export {
  assertPublisherCurrent,
  authenticatePublisher,
  createPublisher,
  hashToken,
  listPublishers,
  revokePublisher,
  rotatePublisherToken,
  type PublisherSummary,
} from './publishers.ts';
export { checkYankReason, yankVersion, type YankOutcome } from './yank.ts';
export {
  authenticateAnyPrincipal,
  authenticatePrincipal,
  createPrincipal,
  identifyToken,
  listPrincipals,
  PRINCIPAL_NAME_PATTERN,
  revokePrincipal,
  type PrincipalKind,
  type PrincipalRecord,
  type PrincipalSummary,
} from './principals.ts';
export { computeApprovalStatus, MAX_APPROVAL_LIST_LIMIT, type ApprovalRequestOutcome } from './approvals.ts';
export type {
  RegistryOptions,
  PublishOutcome,
  StoredManifest,
  ManifestListing,
  DigestBinding,
  SequencingOptions,
} from './registry.ts';
export type { ServerCursor, ServerPageQuery, ServerVersionEntry } from './official-servers.ts';
export type { SequencerEvent, SequencerRole } from './sequencer.ts';
export { TransparencyLog, bodyOf } from './transparency-log.ts';
export type { InclusionProof } from './transparency-log.ts';
export { compareVersions, pickLatestVersion } from './semver.ts';
export type { PublisherRecord, VersionRecord } from '../store/index.ts';
export { inlinePipeline, type PipelineOutput, type PipelineRunner } from './pipeline-runner.ts';
export { runFsck, type FsckReport, type FsckProblem } from './fsck.ts';
export { GroupCommitter } from './group-commit.ts';
export type { CommitOutcome, GroupCommitterOptions, PublishCommitter } from './group-commit.ts';
export {
  addTrustRule,
  type AuthorisedPublisher,
  type PublishAuthoriser,
  recordNamespaceVerification,
  removeTrustRule,
  toTrustRule,
  TrustedPublishing,
  type TrustedPublishingOptions,
} from './trust-rules.ts';

// Public face of the registry use cases (no HTTP here).

export { openRegistry, Registry, hashToken, createPublisher } from './registry.ts';
export type { RegistryOptions, PublishOutcome, StoredManifest, ManifestListing, DigestBinding } from './registry.ts';
export { TransparencyLog, bodyOf } from './transparency-log.ts';
export type { InclusionProof } from './transparency-log.ts';
export { compareVersions, pickLatestVersion } from './semver.ts';
export type { PublisherRecord, VersionRecord } from '../store/sqlite/sqlite-store.ts';
export { defaultPipelineWorkers, inlinePipeline, startPipelinePool } from '../runtime/pipeline-pool.ts';
export type { PipelineOutput, PipelinePoolOptions, PipelineRunner } from '../runtime/pipeline-pool.ts';
export { runFsck, type FsckReport, type FsckProblem } from './fsck.ts';
export { GroupCommitter } from './group-commit.ts';
export type { CommitOutcome, GroupCommitterOptions, PublishCommitter } from './group-commit.ts';
export { startPublishWriter } from '../runtime/publish-writer.ts';
export type { PublishWriterOptions } from '../runtime/publish-writer.ts';

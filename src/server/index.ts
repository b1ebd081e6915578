// Public face of the composition root: start a registry server, open a registry on a data folder, administer it.

export {
  openRegistryAt,
  startRegistryServer,
  type OpenedRegistry,
  type RegistryConfig,
  type RegistryServerOptions,
  type RunningRegistryServer,
} from './start-registry-server.ts';
export {
  addPrincipal,
  listPrincipals,
  revokePrincipal,
  type PrincipalKind,
  type PrincipalSummary,
} from './admin.ts';
export {
  addPublisher,
  backupRegistry,
  checkRegistry,
  listPublishers,
  migrateRegistry,
  revokePublisher,
  rotatePublisherToken,
  rotateSigningKey,
  type PublisherSummary,
} from './admin.ts';
export { DEV_NAMESPACE, seedDevRegistry, type DevSeed } from './dev-seed.ts';
export { isDatabaseUrl, redactDatabaseUrl } from '../store/postgres/index.ts';
export { defaultPipelineWorkers } from '../runtime/pipeline-pool.ts';
export type { SequencerEvent } from '../registry/index.ts';
export {
  addVerifiedPublisher,
  listTrustRules,
  trustNamespace,
  untrustNamespace,
  type TrustAdminOptions,
  type TrustRuleRecord,
  type VerifiedPublisherOptions,
} from './trust-admin.ts';
export type { TrustedPublishingConfig } from './trusted-publishing.ts';

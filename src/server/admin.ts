// Registry administration on a data folder, for the CLI (which never opens a store itself): publishers (add, list,
// revoke, rotate a token), key rotation, and fsck with the log verifier rebuilt from the keys folder. These run beside
// a server on the same folder: the server looks tokens up per request, so a revocation or rotation holds at once.

import { existsSync } from 'node:fs';
import { describeError, isToolsealError, ToolsealError } from '../core/errors.ts';
import { hasLogKeyFile, loadOrCreateLogKey } from '../keys/key-files.ts';
import { parseCheckpoint } from '../log/checkpoint.ts';
import { formatVerifierString } from '../log/note.ts';
import { type FsckReport, runFsck } from '../registry/fsck.ts';
import { readBundleKeyList } from '../keys/bundle-key-files.ts';
import type { BundleKeyValidity } from '../attest/index.ts';
import {
  createPublisher,
  listPublishers as listStoredPublishers,
  type PublisherSummary,
  revokePublisher as revokeStoredPublisher,
  rotatePublisherToken as rotateStoredPublisherToken,
} from '../registry/publishers.ts';
import {
  createPrincipal,
  listPrincipals as listStoredPrincipals,
  type PrincipalKind,
  type PrincipalSummary,
  revokePrincipal as revokeStoredPrincipal,
} from '../registry/principals.ts';
import { openRegistry } from '../registry/registry.ts';
import { bodyOf } from '../registry/transparency-log.ts';
import { findLogRollback } from '../registry/rollback-guard.ts';
import type { CheckpointRecord, Store } from '../store/index.ts';
import { isDatabaseUrl, redactDatabaseUrl } from '../store/postgres/index.ts';
import { openStoreFor } from './start-registry-server.ts';
import { backupDatabase, type DatabaseBackup, databaseFileOf, inspectDatabaseFile } from '../store/sqlite/index.ts';

export type { PublisherSummary } from '../registry/publishers.ts';
export type { PrincipalKind, PrincipalSummary } from '../registry/principals.ts';

/** `dataDir` may also be a database URL (postgres://…, pglite:…): the PostgreSQL store (see openStoreFor). */
async function withStore<T>(dataDir: string, work: (store: Store) => Promise<T> | T): Promise<T> {
  const store = await openStoreFor(dataDir);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * NO_REGISTRY, naming the folder, when `dataDir` holds no registry database: only `serve` and `migrate` create one,
 * so an admin command run from the wrong folder never leaves an empty registry behind (issue 23 §7).
 */
function checkRegistryExists(dataDir: string): void {
  if (isDatabaseUrl(dataDir) || existsSync(databaseFileOf(dataDir))) return;
  throw new ToolsealError(
    'NO_REGISTRY',
    `no registry in ${dataDir}: give the --data folder of a registry, or create one there with toolseal migrate`,
  );
}

/** Like withStore, but NO_REGISTRY (and nothing created) when the folder holds no registry database. */
export function withExistingStore<T>(dataDir: string, work: (store: Store) => Promise<T> | T): Promise<T> {
  try {
    checkRegistryExists(dataDir);
  } catch (error) {
    return Promise.reject(error);
  }
  return withStore(dataDir, work);
}

/** Create a publisher owning `namespace`; the token is returned once (only its hash is stored). */
export async function addPublisher(dataDir: string, namespace: string): Promise<{ namespace: string; token: string }> {
  return withExistingStore(dataDir, async (store) => {
    const { publisher, token } = await createPublisher(store, namespace);
    return { namespace: publisher.namespace, token };
  });
}

/** Every publisher: namespace, creation and revocation times; never a token or a token hash. */
export function listPublishers(dataDir: string): Promise<PublisherSummary[]> {
  return withExistingStore(dataDir, (store) => listStoredPublishers(store));
}

/** Revoke the publisher of `namespace`: its token is refused from now on, its manifests stay served. */
export function revokePublisher(
  dataDir: string,
  namespace: string,
): Promise<{ namespace: string; revokedAt: string; alreadyRevoked: boolean }> {
  return withExistingStore(dataDir, (store) => revokeStoredPublisher(store, namespace));
}

/** A new token for the publisher of `namespace` (returned once); the old one is refused from now on. */
export function rotatePublisherToken(
  dataDir: string,
  namespace: string,
): Promise<{ namespace: string; token: string }> {
  return withExistingStore(dataDir, (store) => rotateStoredPublisherToken(store, namespace));
}

/** Create an operator or a host called `name`; the token is returned once (only its hash is stored). */
export async function addPrincipal(
  dataDir: string,
  kind: PrincipalKind,
  name: string,
): Promise<{ kind: PrincipalKind; name: string; token: string }> {
  return withExistingStore(dataDir, async (store) => {
    const { principal, token } = await createPrincipal(store, kind, name);
    return { kind, name: principal.name, token };
  });
}

/** Every operator (or host): name, creation and revocation times; never a token or a token hash. */
export function listPrincipals(dataDir: string, kind: PrincipalKind): Promise<PrincipalSummary[]> {
  return withExistingStore(dataDir, (store) => listStoredPrincipals(store, kind));
}

/** Revoke an operator or a host: its token is refused from now on, also by a running server. */
export function revokePrincipal(
  dataDir: string,
  kind: PrincipalKind,
  name: string,
): Promise<{ kind: PrincipalKind; name: string; revokedAt: string; alreadyRevoked: boolean }> {
  return withExistingStore(dataDir, (store) => revokeStoredPrincipal(store, kind, name));
}

/** Make a new signing key active and retire the current one (logged). */
export function rotateSigningKey(options: {
  dataDir: string;
  keysDir: string;
  origin: string;
}): Promise<{ retired: string; active: string }> {
  return withExistingStore(options.dataDir, async (store) =>
    (await openRegistry({ store, keysDir: options.keysDir, origin: options.origin })).rotateSigningKey(),
  );
}

/**
 * An online backup of the data folder's database to one file (SQLite's backup API, beside a running server); the
 * keys folder is not in it (docs/deploy.md: back it up separately). Restore: that file as `<data>/toolseal.db`.
 */
export function backupRegistry(options: { dataDir: string; out: string }): Promise<DatabaseBackup> {
  checkRegistryExists(options.dataDir);
  return backupDatabase(options.dataDir, options.out);
}

/**
 * fsck over the data folder. Checkpoint signatures are checked when the log key is in `keysDir`: the verifier is
 * rebuilt from it and the origin the checkpoints were signed under. NOT_FOUND when there is no database; a database
 * too damaged to open is a report with its INTEGRITY_ERROR problem.
 */
export async function checkRegistry(options: { dataDir: string; keysDir: string }): Promise<FsckReport> {
  // `dataDir` may be a database URL: the PostgreSQL store (its structure check: triggers, amcheck when installed).
  const onUrl = isDatabaseUrl(options.dataDir);
  if (!onUrl) checkRegistryExists(options.dataDir);
  let store: Store;
  try {
    store = await openStoreFor(options.dataDir);
  } catch (error) {
    if (!onUrl && isToolsealError(error) && error.code === 'INTEGRITY_ERROR')
      return reportUnreadable(options.dataDir, error);
    throw error;
  }
  try {
    const latest = await readLatestCheckpoint(store);
    let verifier: string | undefined;
    if (latest !== undefined && hasLogKeyFile(options.keysDir)) {
      const { origin } = parseCheckpoint(bodyOf(latest.note));
      verifier = formatVerifierString(origin, loadOrCreateLogKey(options.keysDir, false).publicKey);
    }
    let bundleKeys: BundleKeyValidity[] | undefined;
    let keysProblem: string | undefined;
    try {
      bundleKeys = readBundleKeyList(options.keysDir);
    } catch (error) {
      keysProblem = describeError(error);
    }
    const report = await runFsck(store, verifier, bundleKeys);
    if (keysProblem !== undefined) {
      report.problems.push({ code: 'INTEGRITY_ERROR', where: 'bundle keys', message: keysProblem });
      report.ok = false;
    }
    // The log against the checkpoint this registry last signed, kept beside its keys (issue 25 §1).
    const rollback = await findLogRollbackReported(store, options.keysDir, verifier);
    if (rollback) {
      report.problems.push({ code: 'LOG_ROLLBACK', where: 'log', message: rollback });
      report.ok = false;
    }
    return report;
  } finally {
    await store.close();
  }
}

/** The rollback guard's finding as a message (a checkpoint file that does not verify is one too). */
async function findLogRollbackReported(
  store: Store,
  keysDir: string,
  verifier: string | undefined,
): Promise<string | undefined> {
  try {
    return (await findLogRollback(store, keysDir, verifier))?.message;
  } catch (error) {
    if (isToolsealError(error) && error.code === 'LOG_ROLLBACK') return error.message;
    if (isToolsealError(error) && error.code === 'INTEGRITY_ERROR') return undefined; // reported by runFsck
    throw error;
  }
}

/** The latest checkpoint, or undefined when it cannot be read (runFsck then reports the damage). */
async function readLatestCheckpoint(store: Store): Promise<CheckpointRecord | undefined> {
  try {
    return await store.latestCheckpoint();
  } catch (error) {
    if (isToolsealError(error) && error.code === 'INTEGRITY_ERROR') return undefined;
    throw error;
  }
}

/** A database too damaged to open: why, and what SQLite's own check finds in the file (read-only). */
function reportUnreadable(dataDir: string, error: ToolsealError): FsckReport {
  const messages = new Set([error.message]);
  for (const line of inspectDatabaseFile(databaseFileOf(dataDir))) messages.add(`the database is corrupt: ${line}`);
  return {
    ok: false,
    checked: {
      blobs: 0,
      versions: 0,
      logEntries: 0,
      logNodes: 0,
      checkpoints: 0,
      checkpointSignatures: 0,
      bundles: 0,
      approvals: 0,
    },
    problems: [...messages].map((message) => ({ code: 'INTEGRITY_ERROR', where: 'database', message })),
  };
}

/**
 * Apply the committed migrations to the database at `where` (a database URL, or a SQLite data folder), creating it
 * if needed: opening a store migrates it. Says where, without a password.
 */
export function migrateRegistry(where: string): Promise<{ database: string; dialect: 'postgresql' | 'sqlite' }> {
  const onUrl = isDatabaseUrl(where);
  return withStore(where, () => ({
    database: onUrl ? redactDatabaseUrl(where) : databaseFileOf(where),
    dialect: onUrl ? 'postgresql' : 'sqlite',
  }));
}

// Sigstore bundles of published versions (issue 26, docs/sigstore.md; sigstore/protobuf-specs bundle v0.3): at
// publish, the same in-toto Statement the JWS carries is signed in a DSSE envelope by the active P-256 bundle key, its
// hashedrekord v0.0.2 body appended as a `bundle` leaf in the publish's own transaction, with the log's inclusion
// promise; a served bundle is assembled from those stored parts, the latest signed checkpoint and a proof computed
// here, after checking its leaf against the statement and a bundle key of the trusted root.

import {
  assembleBundle,
  buildBundleJwksKeys,
  buildRegistryTrustMaterial,
  type BundleKeyValidity,
  type BundleSigningKey,
  type DsseEnvelope,
  type BundleJwksKey,
  type Jwks,
  type JwksKey,
  type PublicKeyJson,
  type SigstoreBundleJson,
  buildBundleEntrySigningJob,
  runSigningJobOffThread,
  type TrustedRootJson,
} from '../attest/index.ts';
import { decodeBase64Strict, equalBytes } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import {
  loadBundleSigningKey,
  loadOrCreateBundleKeys,
  readBundleKeyList,
  rotateBundleKey,
} from '../keys/bundle-key-files.ts';
import { checkBundleLeaf } from '../log/bundle-leaf.ts';
import type { BundleStore, KeyStore, LogStore, StoreTransactions, VersionRecord } from '../store/index.ts';
import type { TransparencyLog } from './transparency-log.ts';

/** A version's bundle signed in its publish (or backfill) transaction, before its leaf is appended. */
export interface PendingBundle {
  versionId: number;
  kid: string;
  envelope: DsseEnvelope;
  leaf: Uint8Array;
  /** Seconds since the epoch: the publish's storedAt (or the backfill's start). */
  integratedTime: number;
}

/**
 * The bundle key to sign at a given second with, from the keys folder: the one whose window holds it, so `keys rotate`
 * (maybe by another process) is picked up at once, and a publish in the second a rotation retired a key at (its window
 * ends at the next second) is still signed by that key. Private keys are loaded once per kid. Only the process that
 * signs calls it, so only that one ever creates the first key.
 */
export class BundleKeySource {
  private readonly loaded = new Map<string, BundleSigningKey>();

  constructor(private readonly keysDir: string) {}

  keyAt(at: number): BundleSigningKey {
    // None yet: this process signs now (a sequencer that started as a follower), so it creates the first one.
    const keys = readBundleKeyList(this.keysDir) ?? loadOrCreateBundleKeys(this.keysDir, at).keys;
    const window =
      keys.find((key) => key.notBefore <= at && (key.notAfter === null || at < key.notAfter)) ??
      (keys[keys.length - 1] as BundleKeyValidity);
    let key = this.loaded.get(window.kid);
    if (key === undefined) {
      key = loadBundleSigningKey(this.keysDir, window.kid);
      this.loaded.set(window.kid, key);
    }
    return key;
  }
}

/** Whole seconds since the epoch of `date`. */
export function seconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** The exact statement bytes of a stored attestation (a flattened JWS): its payload, base64url-decoded. */
export function readAttestedStatement(attestation: Uint8Array): Uint8Array {
  let payload: unknown;
  try {
    payload = (JSON.parse(Buffer.from(attestation).toString('utf8')) as { payload?: unknown }).payload;
  } catch {
    payload = undefined;
  }
  if (typeof payload !== 'string' || !/^[A-Za-z0-9_-]*$/.test(payload)) {
    throw new ToolsealError('INTEGRITY_ERROR', 'a stored attestation is not a flattened JWS');
  }
  return new Uint8Array(Buffer.from(payload, 'base64url'));
}

/** Sign `statement` (its exact bytes) for version `versionId` with `key`, in libuv's thread pool (signing-job.ts). */
export async function signPendingBundle(
  versionId: number,
  statement: Uint8Array,
  key: BundleSigningKey,
  integratedTime: number,
): Promise<PendingBundle> {
  const { envelope, leaf } = await runSigningJobOffThread(buildBundleEntrySigningJob(statement, key));
  return { versionId, kid: key.kid, envelope, leaf, integratedTime };
}

/**
 * Inside the caller's transaction: append the bundles' leaves (kind `bundle`) in one go, then keep their parts
 * (storeLoggedBundles).
 */
export async function logPendingBundles(
  store: BundleStore,
  log: TransparencyLog,
  pending: readonly PendingBundle[],
): Promise<void> {
  if (pending.length === 0) return;
  const indexes = await log.appendLeaves(
    'bundle',
    pending.map((bundle) => bundle.leaf),
  );
  await storeLoggedBundles(store, log, pending, indexes);
}

/**
 * Inside the caller's transaction, for bundles whose leaves it appended at `indexes`: sign each one's inclusion promise
 * now that its index is known (all at once, off the event loop), and store the parts a bundle is assembled from.
 */
export async function storeLoggedBundles(
  store: BundleStore,
  log: TransparencyLog,
  pending: readonly PendingBundle[],
  indexes: readonly number[],
): Promise<void> {
  const promises = await Promise.all(
    pending.map((bundle, offset) => log.signInclusionPromise(bundle.leaf, bundle.integratedTime, indexes[offset]!)),
  );
  await store.insertBundles(
    pending.map((bundle, offset) => ({
      versionId: bundle.versionId,
      kid: bundle.kid,
      envelope: JSON.stringify(bundle.envelope),
      logIndex: indexes[offset]!,
      integratedTime: bundle.integratedTime,
      promise: Buffer.from(promises[offset]!),
    })),
  );
}

export interface ServedBundleDeps {
  store: BundleStore & LogStore & KeyStore & StoreTransactions;
  log: TransparencyLog;
  keysDir: string;
}

/**
 * The bundle of `record`, assembled from its stored parts, the latest signed checkpoint (`decorate` adds witness
 * cosignatures) and an inclusion proof up to it. NOT_FOUND when the version has no bundle yet; INTEGRITY_ERROR (never
 * served) when its statement names another subject than the version row, its leaf is not the logged hashedrekord of
 * this version's statement, signed by a bundle key of the trusted root valid at its integratedTime, or its envelope is
 * not the one logged.
 */
export async function readServedBundle(
  deps: ServedBundleDeps,
  record: VersionRecord,
  decorate: (note: string) => string = (note) => note,
): Promise<SigstoreBundleJson> {
  const { store, log } = deps;
  const stored = await store.getBundle(record.id);
  if (!stored) throw new ToolsealError('NOT_FOUND', `${record.name}@${record.version} has no Sigstore bundle yet`);
  const refuse = (why: string): never => {
    throw new ToolsealError('INTEGRITY_ERROR', `the bundle of ${record.name}@${record.version} ${why}; not served`);
  };
  const keys = readBundleKeyList(deps.keysDir) ?? [];
  const [entry] = await store.readLogEntries(stored.logIndex, stored.logIndex + 1);
  if (entry?.kind !== 'bundle') return refuse('does not point at a bundle leaf');
  const statement = readAttestedStatement(record.attestation);
  if (!attestsVersion(statement, record)) return refuse("attests another subject than the version's name and digest");
  const check = checkBundleLeaf({
    leaf: entry.data,
    statement,
    bundleKeys: buildBundleJwksKeys(keys),
    at: stored.integratedTime,
  });
  if (!check.ok) return refuse(`fails its leaf check (${check.code}: ${check.message})`);
  if (check.kid !== stored.kid) return refuse('names another bundle key than its leaf');
  const envelope = JSON.parse(stored.envelope) as DsseEnvelope;
  const signature = decodeBase64Strict(envelope.signatures?.[0]?.sig ?? '');
  const payload = decodeBase64Strict(envelope.payload ?? '');
  if (!signature || !payload || !equalBytes(signature, check.facts.signature) || !equalBytes(payload, statement)) {
    return refuse('carries another envelope than the one logged');
  }
  const checkpoint = await log.latestCheckpoint();
  if (!checkpoint || checkpoint.size <= stored.logIndex) {
    throw new ToolsealError('NOT_FOUND', `the bundle of ${record.name}@${record.version} is not in a checkpoint yet`);
  }
  const [proof] = await log.proveInclusions([stored.logIndex], checkpoint);
  return assembleBundle({
    entry: { envelope, leaf: entry.data },
    kid: stored.kid,
    log: { origin: log.origin, publicKey: log.publicKey },
    logIndex: stored.logIndex,
    integratedTime: stored.integratedTime,
    promise: stored.promise,
    proof: proof!.hashes.map((hash) => new Uint8Array(Buffer.from(hash, 'base64'))),
    checkpoint: decorate(checkpoint.note),
  });
}

/** Does `statement` name exactly `record` (name@version) and its digest (the by-digest route looks versions up by it)? */
function attestsVersion(statement: Uint8Array, record: VersionRecord): boolean {
  type Subject = { name?: unknown; digest?: { sha256?: unknown } };
  let subject: Subject | undefined;
  try {
    subject = (JSON.parse(Buffer.from(statement).toString('utf8')) as { subject?: Subject[] }).subject?.[0];
  } catch {
    return false;
  }
  return subject?.name === `${record.name}@${record.version}` && `sha256:${subject.digest?.sha256}` === record.digest;
}

/**
 * The trusted root (`GET /v1/sigstore/trusted-root.json`) naming this log and the bundle keys by hint. NOT_FOUND when
 * the log's origin is not the host name of the registry's public URL (a log older than issue 26 keeps its origin:
 * Sigstore verifiers cannot check it; docs/sigstore.md says how to start one that they can).
 */
export async function readTrustMaterial(
  deps: ServedBundleDeps,
  publicUrl: string,
): Promise<{ trustedRoot: TrustedRootJson; keyring: Record<string, PublicKeyJson> }> {
  const signingKeys = await deps.store.listSigningKeys();
  const bundleKeys = readBundleKeyList(deps.keysDir) ?? [];
  // The log key signs from the registry's first start, when its first attestation key was registered.
  const logNotBefore = Math.min(...signingKeys.map((key) => key.notBefore), ...bundleKeys.map((k) => k.notBefore));
  try {
    return buildRegistryTrustMaterial({
      publicUrl,
      logOrigin: deps.log.origin,
      logPublicKey: deps.log.publicKey,
      logNotBefore: Number.isFinite(logNotBefore) ? logNotBefore : 0,
      bundleKeys,
    });
  } catch (error) {
    if (error instanceof ToolsealError && error.code === 'BAD_REQUEST') {
      throw new ToolsealError('NOT_FOUND', `no Sigstore trusted root: ${error.message}`);
    }
    throw error;
  }
}

/** The registry's JWK Set: the Ed25519 attestation keys, then the P-256 bundle keys. */
export interface RegistryJwks {
  keys: (JwksKey | BundleJwksKey)[];
}

/** The attestation keys' JWKS with the bundle keys (buildBundleJwksKeys: nbf, and exp once retired) after them. */
export function buildRegistryBundleJwks(jwks: Jwks, keysDir: string): RegistryJwks {
  return { keys: [...jwks.keys, ...buildBundleJwksKeys(readBundleKeyList(keysDir) ?? [])] };
}

/**
 * Rotate the bundle key (rotateBundleKey) as the attestation key is rotated: the retired key stays valid through the
 * current second (its window ends, and the new one starts, at the next), so nothing it signs in this second is orphaned.
 * A second rotation within that second starts the newest key one second later still (windows are whole seconds).
 */
export function rotateBundleKeyNow(keysDir: string, clock: () => Date): { retired: string; active: string } {
  const keys = readBundleKeyList(keysDir);
  const activeFrom = keys?.[keys.length - 1]?.notBefore ?? 0;
  return rotateBundleKey(keysDir, Math.max(seconds(clock()) + 1, activeFrom + 1));
}

/**
 * Give every version without a bundle one (issue 26: versions published before bundles existed), in one transaction:
 * its statement (the JWS payload) signed by the active bundle key now, new `bundle` leaves (nothing old rewritten)
 * integrated at this second, and a checkpoint over them. True when it signed one (the caller records it).
 */
export async function backfillBundles(deps: ServedBundleDeps, clock: () => Date): Promise<boolean> {
  const { store, log } = deps;
  return await store.transaction(async () => {
    const missing = await store.listVersionsWithoutBundle();
    if (missing.length === 0) return false;
    const integratedTime = seconds(clock());
    const key = new BundleKeySource(deps.keysDir).keyAt(integratedTime);
    const pending = await Promise.all(
      missing.map((record) =>
        signPendingBundle(record.id, readAttestedStatement(record.attestation), key, integratedTime),
      ),
    );
    await logPendingBundles(store, log, pending);
    await log.signLatestCheckpoint();
    return true;
  });
}

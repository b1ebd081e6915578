// The mirror's Sigstore bundles (issue 26 §1, docs/sigstore.md): for each `bundle` leaf (a hashedrekord v0.0.2 body)
// among a run's new entries, the version whose statement it logs (paired by SHA-256 of the statement's PAE, as the
// audit pairs them) gets GET …/{version}/bundle, verified as served (verifyBundle: the registry's bundle keys and log
// key), its inclusion proof and checkpoint then replaced by ones against the mirror's own verified tree and checkpoint,
// verified again, and written at …/{version}/bundle. Written once: a later run keeps it (its proof stays valid).

import { decodeBase64Strict, encodeBase64, encodeHex, equalBytes } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';
import type { RegistryClient } from '../client/registry-client.ts';
import { computeStatementPaeDigest, generateInclusionProof, hashLeaf, type MemoryNodeStore } from '../log/index.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { bundlePath, versionPath } from '../protocol/routes.ts';
import { verifyBundle } from '../verify/verify-bundle.ts';
import type { MirrorFolder } from './mirror-folder.ts';
import { mirrorFileOf } from './mirror-layout.ts';

/** What copying a bundle needs of a run (mirror-content.ts's MirrorContext has it all). */
export interface BundleMirrorContext {
  http: RegistryClient;
  folder: MirrorFolder;
  /** The verified tree of `size` leaves, its root hash and the checkpoint note the run mirrors. */
  nodes: MemoryNodeStore;
  size: number;
  rootHash: Uint8Array;
  note: string;
  /** The registry's JWKS as served (its P-256 bundle keys) and its log key. */
  bundleKeys: unknown;
  logKey: string;
}

/** name@version, split. */
export interface VersionKey {
  name: string;
  version: string;
}

/** What a run saw: the PAE digest (hex) of each attestation copied, and of each bundle leaf among the new entries. */
export interface BundleLeaves {
  attested: Map<string, VersionKey>;
  logged: Set<string>;
}

export function createBundleLeaves(): BundleLeaves {
  return { attested: new Map(), logged: new Set() };
}

/** The exact statement bytes of a flattened JWS attestation (its payload), or undefined. */
export function readStatementOf(attestation: Uint8Array): Uint8Array | undefined {
  try {
    const payload = (JSON.parse(Buffer.from(attestation).toString('utf8')) as { payload?: unknown }).payload;
    return typeof payload === 'string' ? new Uint8Array(Buffer.from(payload, 'base64url')) : undefined;
  } catch {
    return undefined;
  }
}

/** Remember an attestation copied in this run, by the PAE digest a bundle leaf of its statement would log. */
export function noteAttestedStatement(leaves: BundleLeaves, attestation: Uint8Array, key: VersionKey): void {
  const statement = readStatementOf(attestation);
  if (statement !== undefined) leaves.attested.set(computeStatementPaeDigest(statement), key);
}

/** Remember a bundle leaf among the new entries, by the digest it logs. */
export function noteBundleLeaf(leaves: BundleLeaves, digest: Uint8Array): void {
  leaves.logged.add(encodeHex(digest));
}

/**
 * The versions whose bundle leaf this run saw: those attested in this run, else (a bundle backfilled after its
 * version was mirrored) found among the attestations the mirror already holds. Sorted by name@version.
 */
export async function findBundledVersions(folder: MirrorFolder, leaves: BundleLeaves): Promise<VersionKey[]> {
  const found = new Map<string, VersionKey>();
  const unmatched = new Set<string>();
  for (const digest of leaves.logged) {
    const key = leaves.attested.get(digest);
    if (key === undefined) unmatched.add(digest);
    else found.set(`${key.name}@${key.version}`, key);
  }
  if (unmatched.size > 0) {
    for (const { file, key } of await folder.listAttestations()) {
      const statement = readStatementOf((await folder.read(file)) ?? new Uint8Array());
      if (statement !== undefined && unmatched.has(computeStatementPaeDigest(statement))) {
        found.set(`${key.name}@${key.version}`, key);
      }
    }
  }
  return [...found.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, key]) => key);
}

/**
 * Copy the bundle of `key` (see the module comment). False when the mirror keeps the one it has, or the registry has
 * none (NOT_FOUND). A bundle that does not verify, as served or against the mirror's tree, fails the run with its
 * verifyBundle code (SIGNATURE_INVALID, UNKNOWN_KEY, SUBJECT_MISMATCH, DIGEST_MISMATCH, NOT_IN_LOG), nothing written.
 */
export async function mirrorBundle(context: BundleMirrorContext, key: VersionKey): Promise<boolean> {
  const { name, version } = key;
  const file = mirrorFileOf(bundlePath(name, version));
  if ((await context.folder.read(file)) !== undefined) return false;
  const bytes = await context.folder.read(mirrorFileOf(versionPath(name, version)));
  if (bytes === undefined) return false; // its version was not mirrored (cannot be: it is attested below the tree)
  let served: Uint8Array;
  try {
    served = await context.http.getBytes(bundlePath(name, version));
  } catch (error) {
    if (error instanceof ToolsealError && error.code === 'NOT_FOUND') return false;
    throw error;
  }
  const check = (bundle: Uint8Array, logIndex?: number) =>
    refuseAs(`the bundle of ${name}@${version}`, () =>
      verifyBundle({
        bytes,
        bundle,
        bundleKeys: context.bundleKeys,
        logKey: context.logKey,
        expected: { name, version, ...(logIndex === undefined ? {} : { logIndex }) },
      }),
    );
  const { logIndex } = check(served);
  const rewritten = proveInMirror(context, served, logIndex, `${name}@${version}`);
  check(rewritten, logIndex);
  await context.folder.write(file, rewritten);
  return true;
}

/** `served` with its inclusion proof and checkpoint replaced by the mirror's (NOT_IN_LOG when its leaf is not there). */
function proveInMirror(context: BundleMirrorContext, served: Uint8Array, index: number, subject: string): Uint8Array {
  const notInMirror = (why: string): never => {
    throw new ToolsealError('NOT_IN_LOG', `the bundle of ${subject} ${why}`);
  };
  const bundle = parseStrict(served, { maxBytes: served.byteLength, maxDepth: 16 }).value;
  const entry = isJsonObject(bundle) ? readTlogEntry(bundle) : undefined;
  const proof = entry !== undefined && isJsonObject(entry['inclusionProof']) ? entry['inclusionProof'] : undefined;
  const body =
    typeof entry?.['canonicalizedBody'] === 'string' ? decodeBase64Strict(entry['canonicalizedBody']) : undefined;
  if (proof === undefined || body === undefined) return notInMirror('has no tlog entry with a body and a proof');
  if (index >= context.size) return notInMirror(`is at log index ${index}, beyond the mirrored size ${context.size}`);
  if (!equalBytes(hashLeaf(body), context.nodes.readNode(0, index))) {
    return notInMirror(`logs another leaf than the mirrored log's entry ${index}`);
  }
  proof['rootHash'] = encodeBase64(context.rootHash);
  proof['treeSize'] = String(context.size);
  proof['hashes'] = generateInclusionProof(context.nodes, index, context.size).map(encodeBase64);
  proof['checkpoint'] = { envelope: context.note };
  return new TextEncoder().encode(JSON.stringify(bundle));
}

function readTlogEntry(bundle: Record<string, unknown>): Record<string, unknown> | undefined {
  const material = bundle['verificationMaterial'];
  const entries = isJsonObject(material) ? material['tlogEntries'] : undefined;
  const entry = Array.isArray(entries) && entries.length === 1 ? entries[0] : undefined;
  return isJsonObject(entry) ? entry : undefined;
}

/** Run `verify`, prefixing a refusal's message with what was refused (its code kept). */
function refuseAs<T>(what: string, verify: () => T): T {
  try {
    return verify();
  } catch (error) {
    if (!(error instanceof ToolsealError)) throw error;
    throw new ToolsealError(error.code, `${what} is refused: ${error.message}`, { cause: error });
  }
}

// What the mirror copies beside the log, each checked against the verified tree before it is written: a version's
// exact bytes, its attestation (the logged leaf) and its blob; the version listings; the attestations-by-digest
// answers, their RFC 9162 inclusion proofs regenerated against the mirror's own checkpoint; the manifest index.
// (The versions' Sigstore bundles: mirror-bundles.ts.)

import { type Jwks, verifyAttestationSync } from '../attest/index.ts';
import type { RegistryClient } from '../client/registry-client.ts';
import { encodeBase64, equalBytes } from '../core/bytes.ts';
import { computeDigest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { formatTlogProof, generateInclusionProof, hashLeaf, type MemoryNodeStore } from '../log/index.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import {
  attestationPath,
  attestationsByDigestPath,
  blobPath,
  manifestPath,
  ROUTES,
  versionPath,
} from '../protocol/routes.ts';
import { type BundleLeaves, noteAttestedStatement } from './mirror-bundles.ts';
import type { MirrorFolder } from './mirror-folder.ts';
import { mirrorFileOf } from './mirror-layout.ts';

/** What one run has verified: the tree, the checkpoint it is mirroring and the registry's keys. */
export interface MirrorContext {
  http: RegistryClient;
  folder: MirrorFolder;
  nodes: MemoryNodeStore;
  jwks: Jwks;
  size: number;
  /** The verified checkpoint's root hash (of the tree of `size`) and note. */
  rootHash: Uint8Array;
  note: string;
  /** The registry's JWKS as served (its P-256 bundle keys verify bundles) and its log key (C2SP verifier string). */
  bundleKeys: unknown;
  logKey: string;
  /** Names whose listing, and digests whose bindings, this run must refresh. */
  dirtyNames: Set<string>;
  dirtyDigests: Set<string>;
  /** The attestations copied and the bundle leaves seen in this run (mirror-bundles.ts pairs them). */
  bundleLeaves: BundleLeaves;
}

const encoder = new TextEncoder();

function jsonBytes(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

function splitSubject(subject: string): { name: string; version: string } {
  const at = subject.indexOf('@');
  return { name: subject.slice(0, at), version: subject.slice(at + 1) };
}

/** The bytes of `file` when they are `digest` (a file the mirror wrote and verified before), else undefined. */
async function readVerified(folder: MirrorFolder, file: string, digest: string): Promise<Uint8Array | undefined> {
  const bytes = await folder.read(file);
  return bytes !== undefined && computeDigest(bytes) === digest ? bytes : undefined;
}

/**
 * An attestation entry: its signature (the registry's JWKS), then the manifest bytes it attests (fetched unless
 * already mirrored; DIGEST_MISMATCH when they are other bytes), written as the version, its blob and, as the
 * attestation, the logged leaf itself.
 */
export async function mirrorAttestationEntry(context: MirrorContext, data: Uint8Array): Promise<void> {
  const verified = verifyAttestationSync(data, context.jwks);
  const { name, version } = splitSubject(verified.subjectName);
  const file = mirrorFileOf(versionPath(name, version));
  let bytes = await readVerified(context.folder, file, verified.digest);
  if (bytes === undefined) {
    bytes = await context.http.getBytes(versionPath(name, version));
    const actual = computeDigest(bytes);
    if (actual !== verified.digest) {
      throw new ToolsealError(
        'DIGEST_MISMATCH',
        `the registry served ${actual} for ${verified.subjectName}, attested ${verified.digest}`,
      );
    }
  }
  await context.folder.write(file, bytes);
  await context.folder.write(mirrorFileOf(blobPath(verified.digest)), bytes);
  await context.folder.write(mirrorFileOf(attestationPath(name, version)), data);
  noteAttestedStatement(context.bundleLeaves, data, { name, version });
  context.dirtyNames.add(name);
  context.dirtyDigests.add(verified.digest);
}

/** A yank entry: the listing and the bindings of what it yanks change. */
export function noteYankEntry(context: MirrorContext, subject: string, digest: string): void {
  context.dirtyNames.add(splitSubject(subject).name);
  context.dirtyDigests.add(digest);
}

/**
 * GET /v1/manifests/{name}: the versions the mirror holds (one the registry lists with other bytes than it
 * attested is DIGEST_MISMATCH; one published after the mirrored checkpoint is left out until the next run).
 */
export async function mirrorVersionListing(context: MirrorContext, name: string): Promise<void> {
  const listing = await context.http.getJson(manifestPath(name));
  const versions = isJsonObject(listing) && Array.isArray(listing['versions']) ? listing['versions'] : undefined;
  if (!isJsonObject(listing) || listing['name'] !== name || versions === undefined) {
    throw new ToolsealError('FETCH_FAILED', `${manifestPath(name)} is not the version listing of ${name}`);
  }
  const kept: JsonValue[] = [];
  for (const item of versions) {
    if (!isJsonObject(item) || typeof item['version'] !== 'string' || typeof item['digest'] !== 'string') continue;
    const bytes = await context.folder.read(mirrorFileOf(versionPath(name, item['version'])));
    if (bytes === undefined) continue;
    if (computeDigest(bytes) !== item['digest']) {
      throw new ToolsealError('DIGEST_MISMATCH', `${name}@${item['version']} is listed with another digest`);
    }
    kept.push(item);
  }
  await context.folder.write(mirrorFileOf(manifestPath(name)), jsonBytes({ ...listing, versions: kept }));
}

/**
 * GET /v1/attestations/{digest}: each binding must be a leaf of the verified tree whose attestation signs that
 * digest for that name@version; its inclusion proof is regenerated against the mirror's checkpoint (so one
 * checkpoint, served beside it, covers everything the mirror wrote in this run).
 */
export async function mirrorBindings(context: MirrorContext, digest: string): Promise<void> {
  const answer = await context.http.getJson(attestationsByDigestPath(digest));
  const items = isJsonObject(answer) && Array.isArray(answer['bindings']) ? answer['bindings'] : undefined;
  if (items === undefined) throw new ToolsealError('FETCH_FAILED', `${attestationsByDigestPath(digest)} is malformed`);
  const bindings: JsonObject[] = [];
  for (const item of items) {
    if (!isJsonObject(item) || typeof item['logIndex'] !== 'number' || !isJsonObject(item['attestation'])) continue;
    const index = item['logIndex'];
    if (!Number.isSafeInteger(index) || index < 0 || index >= context.size) continue; // after the mirrored checkpoint
    const attestation = canonicalizeToBytes(item['attestation']);
    if (!equalBytes(hashLeaf(attestation), context.nodes.readNode(0, index))) {
      throw new ToolsealError('NOT_IN_LOG', `a binding of ${digest} is not log entry ${index}`);
    }
    const verified = verifyAttestationSync(attestation, context.jwks);
    const { name, version } = splitSubject(verified.subjectName);
    if (verified.digest !== digest || item['name'] !== name || item['version'] !== version) {
      throw new ToolsealError('SUBJECT_MISMATCH', `a binding of ${digest} names another subject than it attests`);
    }
    const hashes = generateInclusionProof(context.nodes, index, context.size);
    const inclusionProof = { index, size: context.size, hashes: hashes.map(encodeBase64), checkpoint: context.note };
    const tlogProof = formatTlogProof({ index, proof: hashes, checkpoint: context.note });
    bindings.push({ ...item, inclusionProof, tlogProof });
  }
  await context.folder.write(mirrorFileOf(attestationsByDigestPath(digest)), jsonBytes({ digest, bindings }));
}

/**
 * GET /v1/manifests without a query: every manifest the mirror holds, in one page (`nextCursor` null; the
 * registry's search and paging are query-string routes a static server does not answer).
 */
export async function mirrorManifestIndex(context: MirrorContext): Promise<void> {
  const items: JsonValue[] = [];
  let cursor: string | null = null;
  do {
    const page = await context.http.getJson(
      `${ROUTES.manifests}?limit=200${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
    );
    if (!isJsonObject(page) || !Array.isArray(page['items'])) {
      throw new ToolsealError('FETCH_FAILED', `${ROUTES.manifests} is not a manifest listing`);
    }
    for (const item of page['items']) {
      if (!isJsonObject(item) || typeof item['name'] !== 'string' || typeof item['latestVersion'] !== 'string')
        continue;
      const latest = await context.folder.read(mirrorFileOf(versionPath(item['name'], item['latestVersion'])));
      if (latest !== undefined && computeDigest(latest) === item['digest']) items.push(item);
    }
    cursor = typeof page['nextCursor'] === 'string' ? page['nextCursor'] : null;
  } while (cursor !== null);
  await context.folder.write(mirrorFileOf(ROUTES.manifests), jsonBytes({ items, nextCursor: null }));
}

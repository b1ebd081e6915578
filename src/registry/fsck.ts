// fsck: re-verify everything the store holds — the storage's own structure, bytes against digests, attestations,
// the log and its checkpoints, approvals (fsck-approvals.ts), Sigstore bundles (fsck-bundles.ts) — on one consistent snapshot, so a server publishing meanwhile causes no false alarm.

import { describeError, isToolsealError } from '../core/errors.ts';
import { computeDigest, type Sha256Digest } from '../core/digest.ts';
import { buildJwks, verifyAttestation, type PublicJwk } from '../attest/index.ts';
import {
  computeRootHash,
  createMemoryNodeStore,
  hashLeaf,
  type MemoryNodeStore,
  parseCheckpoint,
  verifyNote,
} from '../log/index.ts';
import type {
  ApprovalRecord,
  BlobRecord,
  BundleRecord,
  CheckpointRecord,
  LogEntryRecord,
  SigningKeyRecord,
  Store,
  VersionRecord,
} from '../store/index.ts';
import { checkApprovals } from './fsck-approvals.ts';
import { checkBundles } from './fsck-bundles.ts';
import type { BundleKeyValidity } from '../attest/index.ts';
import { bodyOf } from './transparency-log.ts';

export interface FsckProblem {
  code: 'INTEGRITY_ERROR' | 'SIGNATURE_INVALID' | 'LOG_INCONSISTENT' | 'LOG_ROLLBACK' | 'NOT_IN_LOG';
  where: string;
  message: string;
}

export interface FsckReport {
  ok: boolean;
  checked: {
    blobs: number;
    versions: number;
    logEntries: number;
    logNodes: number;
    checkpoints: number;
    checkpointSignatures: number;
    approvals: number;
    /** Sigstore bundles (issue 26). */
    bundles: number;
  };
  problems: FsckProblem[];
}

/** Every row fsck checks, read in one snapshot. */
interface StoredRows {
  blobs: BlobRecord[];
  entries: LogEntryRecord[];
  keys: SigningKeyRecord[];
  versions: VersionRecord[];
  nodes: { level: number; index: number; hash: Buffer }[];
  checkpoints: CheckpointRecord[];
  approvals: ApprovalRecord[];
  bundles: BundleRecord[];
}

/**
 * Check the storage's structure and every stored row. `logVerifier` (a note verifier string) enables checkpoint
 * signature checks. Never throws for a data problem: every problem found is reported, a database too damaged to
 * read as INTEGRITY_ERROR "the database is corrupt: …". `bundleKeys` (the keys folder's bundle key list) enables the
 * bundles' key and signature checks.
 */
export async function runFsck(
  store: Store,
  logVerifier?: string,
  bundleKeys?: readonly BundleKeyValidity[],
): Promise<FsckReport> {
  const problems: FsckProblem[] = [];
  const report: Report = (code, where, message) => {
    problems.push({ code, where, message });
  };
  const rows = await readCheckedRows(store, report);
  const blobs = checkBlobs(rows.blobs, report);
  const versions = await checkVersions(rows, blobs.digests, report);
  const tree = checkTree(rows, report);
  const checkpoints = checkCheckpoints(rows.checkpoints, tree.memory, rows.entries.length, logVerifier, report);
  const approvals = checkApprovals(rows, report);
  const bundles = checkBundles(rows, bundleKeys, report);
  return {
    ok: problems.length === 0,
    checked: {
      blobs: blobs.count,
      versions,
      logEntries: rows.entries.length,
      logNodes: tree.nodes,
      checkpoints: checkpoints.count,
      checkpointSignatures: checkpoints.signatures,
      approvals,
      bundles,
    },
    problems,
  };
}

type Report = (code: FsckProblem['code'], where: string, message: string) => void;

/** The storage's own check, then every row in one snapshot; a damaged database is reported, with no rows. */
async function readCheckedRows(store: Store, report: Report): Promise<StoredRows> {
  const empty: StoredRows = {
    blobs: [],
    entries: [],
    keys: [],
    versions: [],
    nodes: [],
    checkpoints: [],
    approvals: [],
    bundles: [],
  };
  const damage = (await store.checkStructure()).map((line) => `the database is corrupt: ${line}`);
  for (const message of damage) report('INTEGRITY_ERROR', 'database', message);
  try {
    return await store.read(async () => ({
      blobs: await store.listAllBlobs(),
      entries: await store.readLogEntries(0, await store.getLogSize()),
      keys: await store.listSigningKeys(),
      versions: await store.listAllVersions(),
      nodes: await store.listAllLogNodes(),
      checkpoints: await store.listCheckpoints(),
      approvals: await store.listAllApprovals(),
      bundles: await store.listAllBundles(),
    }));
  } catch (error) {
    if (!isToolsealError(error) || error.code !== 'INTEGRITY_ERROR') throw error;
    if (!damage.includes(error.message)) report('INTEGRITY_ERROR', 'database', error.message);
    return empty;
  }
}

/** Every blob's bytes against its digest and size. */
function checkBlobs(blobs: BlobRecord[], report: Report): { count: number; digests: Set<string> } {
  const digests = new Set<string>();
  for (const blob of blobs) {
    digests.add(blob.digest);
    const actual = computeDigest(blob.bytes);
    if (actual !== blob.digest) report('INTEGRITY_ERROR', `blob ${blob.digest}`, `bytes hash to ${actual}`);
    if (blob.size !== blob.bytes.byteLength) {
      report('INTEGRITY_ERROR', `blob ${blob.digest}`, `size column ${blob.size} but ${blob.bytes.byteLength} bytes`);
    }
  }
  return { count: blobs.length, digests };
}

/** Every version: its bytes exist, its attestation verifies and matches the row, it and its yank are logged. */
async function checkVersions(
  { keys, versions, entries }: StoredRows,
  blobDigests: Set<string>,
  report: Report,
): Promise<number> {
  const jwks = buildJwks(
    keys.map((key) => ({
      kid: key.kid,
      publicJwk: JSON.parse(key.publicJwk) as PublicJwk,
      notBefore: key.notBefore,
      notAfter: key.notAfter,
    })),
  );
  for (const version of versions) {
    const where = `${version.name}@${version.version}`;
    if (!blobDigests.has(version.digest)) report('INTEGRITY_ERROR', where, `no stored bytes for ${version.digest}`);
    try {
      const verified = await verifyAttestation(version.attestation, jwks, {
        name: version.name,
        version: version.version,
        digest: version.digest as Sha256Digest,
      });
      if (verified.kid !== version.kid) {
        report('SIGNATURE_INVALID', where, `attestation kid ${verified.kid} but the row says ${version.kid}`);
      }
      if (verified.statement.predicate.storedAt !== version.storedAt) {
        report('SIGNATURE_INVALID', where, 'attestation storedAt differs from the row');
      }
    } catch (error) {
      report('SIGNATURE_INVALID', where, describeError(error));
    }
    const entry = entries[version.logIndex];
    if (entry?.kind !== 'attestation' || !entry.data.equals(version.attestation)) {
      report('NOT_IN_LOG', where, `log entry ${version.logIndex} is not this attestation`);
    }
    if (version.status === 'yanked') {
      const yank = version.yankLogIndex === null ? undefined : entries[version.yankLogIndex];
      if (yank?.kind !== 'yank') report('NOT_IN_LOG', where, 'the yank is not in the log');
    }
  }
  return versions.length;
}

/** Rebuild the tree from the leaves and compare every stored node with it. */
function checkTree({ entries, nodes }: StoredRows, report: Report): { memory: MemoryNodeStore; nodes: number } {
  const memory = createMemoryNodeStore();
  entries.forEach((entry, position) => {
    if (entry.index !== position)
      report('LOG_INCONSISTENT', `log entry ${position}`, `a gap: found index ${entry.index}`);
    const leafHash = hashLeaf(entry.data);
    if (!entry.leafHash.equals(leafHash)) {
      report('LOG_INCONSISTENT', `log entry ${entry.index}`, 'stored leaf hash does not match its data');
    }
    memory.append(leafHash);
  });
  for (const node of nodes) {
    let expected: Uint8Array | undefined;
    try {
      expected = memory.readNode(node.level, node.index);
    } catch {
      expected = undefined;
    }
    if (!expected || !node.hash.equals(expected)) {
      report(
        'LOG_INCONSISTENT',
        `log node ${node.level}/${node.index}`,
        'does not match the tree rebuilt from the leaves',
      );
    }
  }
  return { memory, nodes: nodes.length };
}

/** Every checkpoint against the rebuilt tree, and its signature when the log verifier is known. */
function checkCheckpoints(
  checkpoints: CheckpointRecord[],
  memory: MemoryNodeStore,
  entryCount: number,
  logVerifier: string | undefined,
  report: Report,
): { count: number; signatures: number } {
  let signatures = 0;
  for (const checkpoint of checkpoints) {
    const where = `checkpoint ${checkpoint.size}`;
    if (checkpoint.size > entryCount) {
      report('LOG_INCONSISTENT', where, `covers ${checkpoint.size} entries but the log holds ${entryCount}`);
      continue;
    }
    const root = Buffer.from(computeRootHash(memory, checkpoint.size));
    if (!root.equals(checkpoint.rootHash))
      report('LOG_INCONSISTENT', where, 'root hash differs from the tree rebuilt from the leaves');
    try {
      const parsed = parseCheckpoint(bodyOf(checkpoint.note));
      if (parsed.size !== checkpoint.size || !root.equals(Buffer.from(parsed.rootHash))) {
        report('LOG_INCONSISTENT', where, 'signed note disagrees with the tree');
      }
      if (logVerifier !== undefined) {
        verifyNote(checkpoint.note, logVerifier);
        signatures++;
      }
    } catch (error) {
      report('LOG_INCONSISTENT', where, describeError(error));
    }
  }
  return { count: checkpoints.length, signatures };
}

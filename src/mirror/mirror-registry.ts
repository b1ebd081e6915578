// `toolseal mirror` (issue 16 §3): the read side of a registry as static files, incrementally. Each run verifies the
// registry's signed checkpoint (C2SP tlog-checkpoint), walks only the log entries after the last mirrored size
// (C2SP tlog-tiles entry bundles), refreshes what they change, and writes the checkpoint and its state last.
// Hosts need no trust in the mirror: it serves the registry's signed bytes and proofs they check themselves. The
// checkpoint is served as the registry serves it, with its witnesses' cosignatures (C2SP tlog-cosignature, issue 25
// §2); with a witness policy (C2SP tlog-policy) a checkpoint without the quorum is refused before anything is written.
// Each version whose Sigstore bundle leaf is new gets its bundle, verified and proven against the mirror's checkpoint
// (issue 26 §1; mirror-bundles.ts).

import { mkdir } from 'node:fs/promises';
import { type Jwks, selectUsableKeys } from '../attest/index.ts';
import { normaliseRegistryUrl, RegistryClient } from '../client/registry-client.ts';
import { decodeBase64Strict, encodeBase64, equalBytes } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';
import { parseLogEntry } from '../log/entries.ts';
import {
  type Checkpoint,
  checkWitnessQuorum,
  parseNote,
  parseVerifierString,
  verifyCheckpoint,
  type WitnessPolicy,
} from '../log/index.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { problemTypeOf } from '../protocol/problem.ts';
import { ROUTES } from '../protocol/routes.ts';
import { fetchRegistryLogKey } from '../verify/fetch-verified.ts';
import {
  type MirrorContext,
  mirrorAttestationEntry,
  mirrorBindings,
  mirrorManifestIndex,
  mirrorVersionListing,
  noteYankEntry,
} from './mirror-content.ts';
import { createBundleLeaves, findBundledVersions, mirrorBundle, noteBundleLeaf } from './mirror-bundles.ts';
import { MirrorFolder } from './mirror-folder.ts';
import { MIRROR_STATE_FILE, mirrorFileOf, NOT_FOUND_PAGE } from './mirror-layout.ts';
import {
  checkRecomputedRoot,
  loadMirroredTree,
  mirrorHashTiles,
  placeStagedEntries,
  stageNewEntries,
} from './mirror-log.ts';

export interface MirrorOptions {
  /** The registry's base URL. */
  registry: string;
  /** The mirror folder (created if needed). */
  out: string;
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** Per-request timeout in milliseconds (default 30 s). */
  timeoutMs?: number;
  clock?: () => Date;
  /** A C2SP tlog-policy: the registry's checkpoint must carry its witness quorum (WITNESS_QUORUM, nothing written). */
  witnessPolicy?: WitnessPolicy;
}

export interface MirrorReport {
  registry: string;
  /** The log size mirrored before this run (0 for a new mirror) and now. */
  previousSize: number;
  size: number;
  /** Signature lines on the mirrored checkpoint besides the log's own (witness cosignatures, served as they are). */
  cosignatures: number;
  /** With a witness policy: the policy's witnesses whose cosignatures were verified (enough for its quorum). */
  witnesses?: string[];
  /** The new log entries this run copied, by kind (`bundle`: Sigstore bundle leaves). */
  entries: { attestation: number; yank: number; bundle: number; other: number };
  /** The Sigstore bundles this run verified and wrote (at …/{version}/bundle). */
  bundles: number;
  /** The served files this run created or changed, relative to the mirror folder. */
  written: string[];
}

export const MIRROR_STATE_TYPE = 'toolseal.mirror-state/v1';

interface MirrorState {
  type: typeof MIRROR_STATE_TYPE;
  registry: string;
  logKey: string;
  size: number;
  rootHash: string;
  checkpoint: string;
  mirroredAt: string;
}

/** Manifests are served with their $refs inlined: allow what the auditor allows. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** Mirror (or bring up to date) the registry at `options.registry` into `options.out`; see the module comment. */
export async function mirrorRegistry(options: MirrorOptions): Promise<MirrorReport> {
  const base = normaliseRegistryUrl(options.registry);
  const clock = options.clock ?? (() => new Date());
  const http = new RegistryClient(base, {
    timeoutMs: options.timeoutMs ?? 30_000,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  await mkdir(options.out, { recursive: true });
  const folder = new MirrorFolder(options.out);
  const state = await readMirrorState(folder, base);
  const logKey = await fetchRegistryLogKey(http);
  if (state !== undefined && state.logKey !== logKey) {
    throw new ToolsealError('LOG_INCONSISTENT', 'the registry serves another log key than the one mirrored');
  }
  const note = await http.getText(ROUTES.logCheckpoint);
  const verifier = parseVerifierString(logKey);
  const checkpoint = verifyCheckpoint(note, verifier, { origin: verifier.name });
  const cosignatures = parseNote(note).signatures.filter(
    (line) => line.name !== verifier.name || line.keyId !== verifier.keyId,
  ).length;
  const witnesses =
    options.witnessPolicy === undefined
      ? undefined
      : checkWitnessQuorum(note, options.witnessPolicy, verifier.publicKey, clock().getTime() / 1000);
  const from = state?.size ?? 0;
  checkAgainstState(state, checkpoint);
  const jwksBytes = await http.getBytes(ROUTES.jwks);
  const jwks = readJwks(jwksBytes);
  await folder.resetStaging();
  const nodes = await loadMirroredTree(folder, from, state === undefined ? undefined : decodeRoot(state.rootHash));
  const staged = await stageNewEntries(http, folder, nodes, from, checkpoint.size);
  checkRecomputedRoot(nodes, checkpoint.size, checkpoint.rootHash);
  const context: MirrorContext = {
    http,
    folder,
    nodes,
    jwks,
    size: checkpoint.size,
    rootHash: checkpoint.rootHash,
    note,
    bundleKeys: parseStrict(jwksBytes, { maxBytes: 16 * 1024 * 1024, maxDepth: 16 }).value,
    logKey,
    dirtyNames: new Set(),
    dirtyDigests: new Set(),
    bundleLeaves: createBundleLeaves(),
  };
  const entries = await copyNewEntries(context, staged, from);
  await mirrorHashTiles(http, folder, nodes, from, checkpoint.size);
  await forEachLimited([...context.dirtyNames].sort(), CONCURRENCY, (name) => mirrorVersionListing(context, name));
  await forEachLimited([...context.dirtyDigests].sort(), CONCURRENCY, (digest) => mirrorBindings(context, digest));
  let bundles = 0;
  await forEachLimited(await findBundledVersions(folder, context.bundleLeaves), CONCURRENCY, async (version) => {
    if (await mirrorBundle(context, version)) bundles++;
  });
  if (state === undefined || context.dirtyNames.size > 0) await mirrorManifestIndex(context);
  await folder.write(mirrorFileOf(ROUTES.jwks), jwksBytes);
  await folder.write(mirrorFileOf(ROUTES.logKey), new TextEncoder().encode(`${logKey}\n`));
  await folder.write(NOT_FOUND_PAGE.slice(1), NOT_FOUND_BODY);
  // Last: the checkpoint every proof above is against, then the state that lets the next run start from it.
  await folder.write(mirrorFileOf(ROUTES.logCheckpoint), new TextEncoder().encode(note));
  await writeMirrorState(folder, {
    type: MIRROR_STATE_TYPE,
    registry: base,
    logKey,
    size: checkpoint.size,
    rootHash: encodeBase64(checkpoint.rootHash),
    checkpoint: note,
    mirroredAt: clock().toISOString(),
  });
  await folder.removeStaging();
  return {
    registry: base,
    previousSize: from,
    size: checkpoint.size,
    cosignatures,
    ...(witnesses === undefined ? {} : { witnesses }),
    entries,
    bundles,
    written: folder.written,
  };
}

/**
 * Each new entry, in log order: an attestation is copied, a yank refreshes its listing and bindings, a bundle leaf
 * has its version's bundle copied after (mirror-bundles.ts).
 */
async function copyNewEntries(
  context: MirrorContext,
  staged: readonly number[],
  from: number,
): Promise<MirrorReport['entries']> {
  const counts = { attestation: 0, yank: 0, bundle: 0, other: 0 };
  await placeStagedEntries(context.folder, staged, from, context.size, (entries) =>
    forEachLimited(entries, CONCURRENCY, async (data) => {
      const parsed = parseLogEntry(data);
      if (parsed.ok && parsed.kind === 'attestation') {
        await mirrorAttestationEntry(context, data);
        counts.attestation++;
      } else if (parsed.ok && parsed.kind === 'yank') {
        noteYankEntry(context, parsed.entry.subject, parsed.entry.digest);
        counts.yank++;
      } else if (parsed.ok && parsed.kind === 'bundle') {
        noteBundleLeaf(context.bundleLeaves, parsed.entry.digest);
        counts.bundle++;
      } else {
        counts.other++; // key entries change the JWKS, fetched on every run; what an audit checks, not a mirror
      }
    }),
  );
  return counts;
}

/** Requests (and atomic, fsynced writes) in flight at once. */
const CONCURRENCY = 8;

/** `work` on every item, at most `limit` at a time; after a failure nothing more starts, and it is thrown once the
 * work already started has settled. */
async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      try {
        await work(items[next++] as T);
      } catch (error) {
        next = items.length; // start nothing more
        throw error;
      }
    }
  });
  const results = await Promise.allSettled(lanes);
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/** The signed checkpoint must extend what was mirrored: never smaller, never another root for the same size. */
function checkAgainstState(state: MirrorState | undefined, checkpoint: Checkpoint): void {
  if (state === undefined) return;
  if (checkpoint.size < state.size) {
    throw new ToolsealError(
      'LOG_INCONSISTENT',
      `the registry's log is at size ${checkpoint.size}, the mirror already holds ${state.size}: a rollback`,
    );
  }
  if (checkpoint.size === state.size && !equalBytes(checkpoint.rootHash, decodeRoot(state.rootHash))) {
    throw new ToolsealError('LOG_INCONSISTENT', `two different roots for tree size ${state.size}: the log forked`);
  }
}

function decodeRoot(text: string): Uint8Array {
  const root = decodeBase64Strict(text);
  if (root === undefined || root.byteLength !== 32) {
    throw new ToolsealError('INTEGRITY_ERROR', 'the mirror state file holds no valid root hash');
  }
  return root;
}

function readJwks(bytes: Uint8Array): Jwks {
  const value = parseStrict(bytes, { maxBytes: 16 * 1024 * 1024, maxDepth: 16 }).value;
  if (!isJsonObject(value) || !Array.isArray(value['keys'])) {
    throw new ToolsealError('FETCH_FAILED', 'the registry JWKS is not {"keys": [...]}');
  }
  return selectUsableKeys(value).jwks;
}

const NOT_FOUND_BODY = new TextEncoder().encode(
  `${JSON.stringify({
    type: problemTypeOf('NOT_FOUND'),
    title: 'NOT_FOUND',
    status: 404,
    detail: 'not in this mirror',
    code: 'NOT_FOUND',
  })}\n`,
);

async function readMirrorState(folder: MirrorFolder, registry: string): Promise<MirrorState | undefined> {
  const bytes = await folder.read(MIRROR_STATE_FILE);
  if (bytes === undefined) return undefined;
  const value = parseStrict(bytes, { maxBytes: 1024 * 1024, maxDepth: 4 }).value;
  if (
    !isJsonObject(value) ||
    value['type'] !== MIRROR_STATE_TYPE ||
    typeof value['registry'] !== 'string' ||
    typeof value['logKey'] !== 'string' ||
    typeof value['size'] !== 'number' ||
    !Number.isSafeInteger(value['size']) ||
    typeof value['rootHash'] !== 'string'
  ) {
    throw new ToolsealError('INTEGRITY_ERROR', `${MIRROR_STATE_FILE} is not a mirror state file`);
  }
  if (value['registry'] !== registry) {
    throw new ToolsealError('BAD_REQUEST', `the folder mirrors ${value['registry']}, not ${registry}`);
  }
  return value as unknown as MirrorState;
}

async function writeMirrorState(folder: MirrorFolder, state: MirrorState): Promise<void> {
  await folder.write(MIRROR_STATE_FILE, new TextEncoder().encode(`${JSON.stringify(state, null, 2)}\n`));
  folder.written.pop(); // the state is not a served file
}

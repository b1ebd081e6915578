// Steps 4-5 of an audit: walk the new entries from the C2SP tlog-tiles entry bundles (full or partial), fold each
// RFC 6962 §2.1 leaf hash into the frontier, check every entry, and recompute the checkpoint's root from them.

import type { Jwks } from '../attest/jwk.ts';
import { describeError } from '../core/errors.ts';
import { selectUsableKeys } from '../attest/jwks.ts';
import { encodeBase64, equalBytes } from '../core/bytes.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import type { Checkpoint } from '../log/checkpoint.ts';
import { hashLeaf } from '../log/merkle.ts';
import { computeEntryBundleWidth, parseEntryBundle, TILE_WIDTH } from '../log/tiles.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { entryBundlePath, ROUTES } from '../protocol/routes.ts';
import { createManifestChecker } from './blobs.ts';
import { checkEntry, createEntryContext } from './entries.ts';
import { appendToFrontier, frontierRoot } from './frontier.ts';
import { type AuditRun, addProblem, describeFetchFailure } from './report.ts';
import { decodeFrontier } from './state.ts';

/** Where the walk ended: the new frontier and every key id logged up to the checkpoint. */
export interface WalkResult {
  frontier: Uint8Array[];
  loggedKids: string[];
}

const JWKS_PARSE_LIMITS = { maxBytes: 16 * 1024 * 1024, maxDepth: 16 };
const NOT_CHECKED = 'attestation signatures and key entries were not checked';

/**
 * Walk entries [state size, checkpoint size), checking each, and require that they fold to the checkpoint root.
 * Every problem goes into the run's report.
 */
export async function walkNewEntries(run: AuditRun, checkpoint: Checkpoint, concurrency: number): Promise<WalkResult> {
  const { report, state } = run;
  const start = state?.size ?? 0;
  const frontier = state ? decodeFrontier(state) : [];
  report.entries.from = start;
  report.entries.to = checkpoint.size;
  const served = checkpoint.size > start ? await fetchJwks(run) : undefined;
  const jwks = served?.jwks;
  const context = createEntryContext(state?.loggedKids ?? [], jwks, start === 0, served?.value);
  const manifests = createManifestChecker(run.client, report, concurrency);
  const walked = await visitEntries(run, start, checkpoint.size, async (index, data) => {
    appendToFrontier(frontier, index, hashLeaf(data));
    run.onEntry?.(index, data);
    report.entries.checked++;
    const kind = await checkEntry(
      index,
      data,
      context,
      (code, message) => addProblem(report, code, message, index),
      (attestation) => manifests.checkManifest(attestation, index),
    );
    report.entries[kind]++;
  });
  await manifests.settle();
  if (walked) {
    checkRecomputedRoot(run, checkpoint, start, frontier);
    if (jwks !== undefined) {
      for (const key of jwks.keys) {
        if (!context.loggedKids.has(key.kid))
          report.warnings.push(`JWKS key ${key.kid} is not (yet) in the log up to size ${checkpoint.size}`);
      }
    }
  }
  return { frontier, loggedKids: [...context.loggedKids] };
}

/**
 * The registry's usable Ed25519 keys (each left-out key is a JWKS_INVALID problem) and the JWKS as served (its P-256
 * bundle keys); undefined when it cannot be read.
 */
async function fetchJwks(run: AuditRun): Promise<{ jwks: Jwks; value: JsonValue } | undefined> {
  let body: Uint8Array;
  try {
    body = await run.client.getBytes(ROUTES.jwks);
  } catch (error) {
    addProblem(run.report, 'FETCH_FAILED', `${describeFetchFailure(error)}; ${NOT_CHECKED}`);
    return undefined;
  }
  let value: JsonValue;
  try {
    value = parseStrict(body, JWKS_PARSE_LIMITS).value;
  } catch (error) {
    addProblem(run.report, 'JWKS_INVALID', `${describeError(error)}; ${NOT_CHECKED}`);
    return undefined;
  }
  if (!isJsonObject(value) || !Array.isArray(value['keys'])) {
    addProblem(run.report, 'JWKS_INVALID', `the JWKS is not {"keys": [...]}; ${NOT_CHECKED}`);
    return undefined;
  }
  const { jwks, problems } = selectUsableKeys(value);
  for (const problem of problems) addProblem(run.report, 'JWKS_INVALID', problem);
  return { jwks, value };
}

/**
 * Call `visit` for each entry in [start, size), in order, reading the entry bundles that hold them. False when a
 * bundle could not be fetched or parsed (the walk stopped there).
 */
async function visitEntries(
  run: AuditRun,
  start: number,
  size: number,
  visit: (index: number, data: Uint8Array) => Promise<void>,
): Promise<boolean> {
  const firstBundle = Math.floor(start / TILE_WIDTH);
  const lastBundle = size === 0 ? -1 : Math.floor((size - 1) / TILE_WIDTH);
  for (let bundle = firstBundle; bundle <= lastBundle; bundle++) {
    const width = computeEntryBundleWidth(bundle, size);
    const entries = await fetchEntryBundle(run, bundle, width);
    if (entries === undefined) return false;
    for (let offset = Math.max(0, start - bundle * TILE_WIDTH); offset < width; offset++) {
      await visit(bundle * TILE_WIDTH + offset, entries[offset]!);
    }
  }
  return true;
}

/** The `width` entries of bundle `bundle`, or undefined (and a problem) when it cannot be had. */
async function fetchEntryBundle(run: AuditRun, bundle: number, width: number): Promise<Uint8Array[] | undefined> {
  const path = entryBundlePath(bundle, width);
  let body: Uint8Array;
  try {
    body = await run.client.getBytes(path);
  } catch (error) {
    addProblem(run.report, 'FETCH_FAILED', describeFetchFailure(error));
    return undefined;
  }
  let entries: Uint8Array[];
  try {
    entries = parseEntryBundle(body);
  } catch (error) {
    addProblem(run.report, 'ENTRY_MALFORMED', `GET ${path}: ${describeError(error)}`);
    return undefined;
  }
  if (entries.length !== width) {
    addProblem(run.report, 'ENTRY_MALFORMED', `GET ${path} returned ${entries.length} entries, expected ${width}`);
    return undefined;
  }
  return entries;
}

/** The root recomputed from the remembered frontier and the new entries must be the checkpoint's. */
function checkRecomputedRoot(run: AuditRun, checkpoint: Checkpoint, start: number, frontier: Uint8Array[]): void {
  const root = frontierRoot(frontier);
  if (equalBytes(root, checkpoint.rootHash)) return;
  addProblem(
    run.report,
    'ROOT_MISMATCH',
    `entries ${start}..${checkpoint.size - 1} do not hash to the checkpoint root (computed ${encodeBase64(root)}, signed ${encodeBase64(checkpoint.rootHash)})`,
  );
}

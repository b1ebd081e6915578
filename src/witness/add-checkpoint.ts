// The witness's answer to C2SP tlog-witness "add-checkpoint", transport-free: bytes in, status and body out.
// 404 unknown origin, 403 no valid log signature, 400 malformed or old > size, 409 (text/x.tlog.size) old size is not
// the latest cosigned one or same size with another root, 422 bad consistency proof, 200 cosignature lines.
// Checking the old size and persisting the new head happen under one queue: two requests never interleave there.

import { ToolsealError } from '../core/errors.ts';
import { equalBytes } from '../core/bytes.ts';
import { parseCheckpoint, type TreeHead } from '../log/checkpoint.ts';
import { signCosignature } from '../log/cosignature.ts';
import { isConsistencyProofValid } from '../log/merkle-verify.ts';
import { hashEmpty } from '../log/merkle.ts';
import { parseNote, verifyNote, type NoteSigner, type NoteVerifier } from '../log/note.ts';
import { formatTlogSize, parseAddCheckpointRequest, TLOG_SIZE_CONTENT_TYPE } from '../log/witness-protocol.ts';
import type { WitnessState } from './witness-files.ts';

export interface WitnessAnswer {
  status: 200 | 400 | 403 | 404 | 409 | 422;
  contentType: string;
  body: string;
}

export interface WitnessCoreOptions {
  signer: NoteSigner;
  /** Trusted log keys (type 0x01 Ed25519 note keys); each key's name is the origin it signs for. */
  logs: readonly NoteVerifier[];
  /** The state as last persisted. */
  state: WitnessState;
  /** Persist the whole state; resolves once it is durable. */
  persist: (state: WitnessState) => Promise<void>;
  /** POSIX seconds for cosignature timestamps. */
  nowSeconds?: () => number;
}

const TEXT = 'text/plain; charset=utf-8';

function answer(status: WitnessAnswer['status'], body: string, contentType = TEXT): WitnessAnswer {
  return { status, contentType, body: body.endsWith('\n') ? body : `${body}\n` };
}

export interface WitnessCore {
  addCheckpoint(body: Uint8Array): Promise<WitnessAnswer>;
  /** The latest cosigned size for an origin (0 if none). */
  latestSize(origin: string): number;
}

export function createWitnessCore(options: WitnessCoreOptions): WitnessCore {
  const state: WitnessState = new Map(options.state);
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  let queue: Promise<unknown> = Promise.resolve();

  const check = (
    body: Uint8Array,
  ): { origin: string; oldSize: number; proof: Uint8Array[]; head: TreeHead; note: string } | WitnessAnswer => {
    let request: ReturnType<typeof parseAddCheckpointRequest>;
    let noteBody: string;
    try {
      request = parseAddCheckpointRequest(body);
      noteBody = parseNote(request.checkpoint).body;
    } catch (error) {
      return answer(400, error instanceof ToolsealError ? error.message : 'malformed request');
    }
    let checkpoint: ReturnType<typeof parseCheckpoint>;
    try {
      checkpoint = parseCheckpoint(noteBody);
    } catch {
      return answer(400, 'malformed checkpoint');
    }
    const trusted = options.logs.filter((log) => log.name === checkpoint.origin);
    if (trusted.length === 0) return answer(404, 'unknown log origin');
    try {
      verifyNote(request.checkpoint, trusted);
    } catch {
      return answer(403, 'no valid signature by a trusted key of this log');
    }
    if (request.oldSize > checkpoint.size) return answer(400, 'the old size is larger than the checkpoint size');
    return {
      origin: checkpoint.origin,
      oldSize: request.oldSize,
      proof: request.proof,
      head: { size: checkpoint.size, rootHash: checkpoint.rootHash },
      note: noteBody,
    };
  };

  const commit = async (checked: Exclude<ReturnType<typeof check>, WitnessAnswer>): Promise<WitnessAnswer> => {
    const latest = state.get(checked.origin) ?? { size: 0, rootHash: hashEmpty() };
    const conflict = (): WitnessAnswer => answer(409, formatTlogSize(latest.size), TLOG_SIZE_CONTENT_TYPE);
    if (checked.oldSize !== latest.size) return conflict();
    if (checked.oldSize === checked.head.size) {
      if (!equalBytes(checked.head.rootHash, latest.rootHash)) return conflict();
      if (checked.proof.length !== 0) return answer(422, 'trees of equal size need an empty proof');
    } else if (checked.oldSize === 0) {
      if (checked.proof.length !== 0) return answer(422, 'the proof from size 0 must be empty');
    } else if (
      !isConsistencyProofValid(latest.size, checked.head.size, latest.rootHash, checked.head.rootHash, checked.proof)
    ) {
      return answer(422, 'the consistency proof does not verify');
    }
    const next: WitnessState = new Map(state);
    next.set(checked.origin, checked.head);
    await options.persist(next);
    state.set(checked.origin, checked.head);
    return answer(200, signCosignature(checked.note, options.signer, nowSeconds()));
  };

  return {
    addCheckpoint(body) {
      const checked = check(body);
      if ('status' in checked) return Promise.resolve(checked);
      const result = queue.then(() => commit(checked));
      queue = result.catch(() => undefined);
      return result;
    },
    latestSize: (origin) => state.get(origin)?.size ?? 0,
  };
}

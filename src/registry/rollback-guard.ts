// Never serve a log shorter than, or different from, one the registry signed (issue 25 §1): the latest signed
// checkpoint is kept outside the database (src/keys/checkpoint-file.ts) and the database's tree is compared with it
// on start and in fsck (RFC 9162 §2.1.1: the root at that size must be the same). Nothing here repairs anything.

import { isMainThread } from 'node:worker_threads';
import { ToolsealError } from '../core/errors.ts';
import {
  readCheckpointFile,
  readCheckpointFileAsync,
  withCheckpointFileLock,
  withCheckpointFileLockAsync,
  writeCheckpointFile,
  writeCheckpointFileAsync,
} from '../keys/checkpoint-file.ts';
import { computeRootHash, parseCheckpoint, verifyCheckpoint } from '../log/index.ts';
import type { CheckpointRecord, Store } from '../store/index.ts';
import { computeWithStoredNodes } from './log-node-prefetch.ts';
import { bodyOf, type CheckpointRecorder } from './transparency-log.ts';

/** What the comparison found: nothing (undefined), or a rollback naming both sizes. */
export interface LogRollback {
  signedSize: number;
  logSize: number;
  message: string;
}

/**
 * Compare the database's log with the checkpoint file in `keysDir`: a rollback when the log is smaller than the
 * signed checkpoint, or its root at that size differs. Undefined when they agree or there is no file. `verifier`
 * (the log's note verifier) also checks the file's signature (a file that does not verify is refused).
 */
export async function findLogRollback(
  store: Store,
  keysDir: string,
  verifier?: string,
): Promise<LogRollback | undefined> {
  const note = readCheckpointFile(keysDir);
  if (note === undefined) return undefined;
  let signed: { size: number; rootHash: Uint8Array };
  try {
    if (verifier !== undefined) verifyCheckpoint(note, verifier);
    signed = parseCheckpoint(bodyOf(note));
  } catch {
    throw new ToolsealError(
      'LOG_ROLLBACK',
      'the log checkpoint file in the keys folder is not a checkpoint signed by this log key',
    );
  }
  const logSize = await store.getLogSize();
  if (logSize < signed.size) {
    return {
      signedSize: signed.size,
      logSize,
      message: `the database's log has ${logSize} entries, but this registry signed a checkpoint of size ${signed.size}: the database lost its tail or was replaced by an older copy (docs/deploy.md, restoring from a backup)`,
    };
  }
  let root: Uint8Array | undefined;
  try {
    root = await computeWithStoredNodes(store, (reader) => computeRootHash(reader, signed.size));
  } catch {
    root = undefined;
  }
  if (!root || Buffer.compare(Buffer.from(root), Buffer.from(signed.rootHash)) !== 0) {
    return {
      signedSize: signed.size,
      logSize,
      message: `the database's log (size ${logSize}) has another root at size ${signed.size} than the checkpoint of size ${signed.size} this registry signed: it is not the log the registry signed (docs/deploy.md)`,
    };
  }
  return undefined;
}

/**
 * On start: LOG_ROLLBACK when the database's log is behind or off the signed checkpoint file; when there is no file
 * and the log has a checkpoint (first start after the upgrade that added it), the file is written from it.
 */
export async function assertNoLogRollback(store: Store, keysDir: string, verifier: string): Promise<void> {
  const rollback = await findLogRollback(store, keysDir, verifier);
  if (rollback) throw new ToolsealError('LOG_ROLLBACK', rollback.message);
  if (readCheckpointFile(keysDir) === undefined) {
    const latest = await store.latestCheckpoint();
    // Under the lock: a writer that signed a larger checkpoint meanwhile is never overwritten.
    if (latest)
      withCheckpointFileLock(keysDir, () => {
        if (readCheckpointFile(keysDir) === undefined) writeCheckpointFile(keysDir, latest.note);
      });
  }
}

/**
 * Keeps the checkpoint file at the latest checkpoint this process signed: `record` writes it durably (call it after
 * the commit, before the answer). Only ever moves the file forward. On a thread that serves requests (the main
 * thread) with asynchronous file calls, so reads keep moving while it writes (issue 24 §4); on the publish writer
 * thread, which serves nothing, with synchronous ones: a third of the wall time (no hops through libuv's thread pool,
 * which the batch's signatures share), and the writer answers its batch sooner.
 */
export class CheckpointFileRecorder implements CheckpointRecorder {
  private writtenSize = -1;

  constructor(
    private readonly keysDir: string,
    private readonly blocking: boolean = !isMainThread,
  ) {}

  async record(checkpoint: CheckpointRecord): Promise<void> {
    if (checkpoint.size <= this.writtenSize) return;
    // Another thread or process (the writer thread, `keys rotate`) may write a larger one: read, compare and write
    // under the folder's checkpoint lock, so the smaller one never lands after it.
    const written = this.blocking
      ? withCheckpointFileLock(this.keysDir, () => {
          const onFile = sizeOnFile(readCheckpointFile(this.keysDir));
          if (onFile >= checkpoint.size) return onFile;
          writeCheckpointFile(this.keysDir, checkpoint.note);
          return checkpoint.size;
        })
      : await withCheckpointFileLockAsync(this.keysDir, async () => {
          const onFile = sizeOnFile(await readCheckpointFileAsync(this.keysDir));
          if (onFile >= checkpoint.size) return onFile;
          await writeCheckpointFileAsync(this.keysDir, checkpoint.note);
          return checkpoint.size;
        });
    this.writtenSize = Math.max(this.writtenSize, written);
  }
}

/** The size of the checkpoint `note` on file; -1 for none, or an unreadable one (replaced by the one just signed). */
function sizeOnFile(note: string | undefined): number {
  if (note === undefined) return -1;
  try {
    return parseCheckpoint(bodyOf(note)).size;
  } catch {
    return -1;
  }
}

// Publishes signed and committed on a writer thread with its own SQLite connection, so the event loop never waits
// on a commit or an fsync: it keeps serving reads and HTTP while the writer group-commits (group-commit.ts).

import { ToolsealError } from '../core/errors.ts';
import type { PublisherRecord } from '../store/index.ts';
import type { CommitOutcome, PublishCommitter } from '../registry/group-commit.ts';
import type { PipelineOutput } from '../registry/pipeline-runner.ts';
import { workerModuleUrl } from '../core/worker-source.ts';
import { startWorkerPool, transferableBuffers } from './worker-thread.ts';

export interface PublishWriterOptions {
  /** The registry's data folder (the writer opens its own connection to the same database). */
  dataDir: string;
  /** The registry's keys folder: the writer loads the active signing key and the log key from it. */
  keysDir: string;
  /** Origin recorded in attestations. */
  origin: string;
  /** The log's origin line, as the registry's (undefined: derived from the log key, as the registry does). */
  logOrigin?: string;
  /** Heap limit of the writer in MiB (default 512). */
  maxHeapMb?: number;
}

/** What publish-writer-worker.ts gets as workerData. */
export interface PublishWriterSetup {
  dataDir: string;
  keysDir: string;
  origin: string;
  logOrigin: string | undefined;
}

/** A job for the writer. */
export interface PublishWriterInput {
  result: PipelineOutput;
  publisher: PublisherRecord;
}

/**
 * Start the writer thread. It opens the store at once (whenReady rejects if it cannot) and loads the keys at its
 * first publish, so it may be started before openRegistry creates them. Its keys, origin and log origin must be the
 * registry's. A writer that dies fails the publishes it held with INTERNAL (a commit in progress is rolled back, so a
 * retry is safe: it stores the publish, or finds it stored and answers idempotently) and is restarted.
 */
export function startPublishWriter(options: PublishWriterOptions): PublishCommitter {
  if (options.dataDir === ':memory:')
    throw new ToolsealError('BAD_REQUEST', 'a publish writer needs a database on disk, not :memory:');
  const setup: PublishWriterSetup = {
    dataDir: options.dataDir,
    keysDir: options.keysDir,
    origin: options.origin,
    logOrigin: options.logOrigin,
  };
  const pool = startWorkerPool<PublishWriterInput, CommitOutcome>({
    moduleUrl: workerModuleUrl('./publish-writer-worker', import.meta.url),
    size: 1,
    role: 'publish writer',
    maxHeapMb: options.maxHeapMb ?? 512,
    workerData: setup,
    // The canonical bytes are moved, not copied, when they own their buffer (the pipeline pool's always do).
    transferOf: ({ result }) => transferableBuffers(result.canonicalBytes),
  });
  return {
    async commit(result, publisher) {
      const outcome = await pool.run({ result, publisher });
      // Structured cloning turns a Buffer into a plain Uint8Array.
      const { buffer, byteOffset, byteLength } = outcome.record.attestation;
      return { ...outcome, record: { ...outcome.record, attestation: Buffer.from(buffer, byteOffset, byteLength) } };
    },
    whenReady: () => pool.whenReady(),
    close: () => pool.close(),
  };
}

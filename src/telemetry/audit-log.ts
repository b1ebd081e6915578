// Guard's decision audit log (issue 29 §3): JSON lines (RFC 8259, one record a line), appended and fsynced in
// batches, rotated by size keeping N files. Crash safety: a batch is one write; a torn tail (a line without its
// newline) is cut off when the log is opened again, and the reader only ever returns whole, valid lines.

import { open, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ToolsealError } from '../core/errors.ts';
import { parseStrict } from '../pipeline/parse.ts';
import {
  type AuditDecision,
  type AuditRecord,
  createAuditRecord,
  findAuditRecordProblem,
  readAuditRecord,
} from './audit-record.ts';

export interface AuditLogOptions {
  /** The live file; rotated files are `FILE.1` (newest) … `FILE.keep`. Its folder must exist. */
  file: string;
  /** Rotate before a batch would take the live file past this many bytes (default 10 MiB). */
  maxBytes?: number;
  /** Rotated files kept (default 5); older ones are deleted. */
  keep?: number;
  /** Records per fsynced write (default 64): a full batch is written at once. */
  batchSize?: number;
  /** A partial batch is written this long after its first record (default 1000 ms; 0: only on flush). */
  flushIntervalMs?: number;
  /** Clock for record times (tests). */
  now?: () => Date;
}

export interface AuditLog {
  /** Queues one decision. Throws BAD_REQUEST if a field is not what the record allows, or the log's write error. */
  record(decision: AuditDecision): void;
  /** Resolves once every record queued so far is written and fsynced. */
  flush(): Promise<void>;
  /** Flushes and closes the file. */
  close(): Promise<void>;
}

const NEWLINE = 0x0a;

/** Cuts a torn tail: the file ends after its last newline (or is empty). */
async function repairTail(file: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    let end = size;
    const chunk = Buffer.alloc(64 * 1024);
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const { bytesRead } = await handle.read(chunk, 0, end - start, start);
      const last = chunk.subarray(0, bytesRead).lastIndexOf(NEWLINE);
      if (last !== -1) {
        end = start + last + 1;
        break;
      }
      end = start;
    }
    if (end !== size) {
      await handle.truncate(end);
      await handle.sync();
    }
  } finally {
    await handle.close();
  }
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** FILE → FILE.1 → … → FILE.keep; what was FILE.keep is deleted. */
async function rotateFiles(file: string, keep: number): Promise<void> {
  await rm(`${file}.${keep}`, { force: true });
  for (let index = keep - 1; index >= 1; index--) {
    await rename(`${file}.${index}`, `${file}.${index + 1}`).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  if (keep >= 1) await rename(file, `${file}.1`);
  else await rm(file, { force: true });
  await syncFolder(dirname(file));
}

async function writeAll(handle: FileHandle, bytes: Buffer): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}

function refuseRecord(field: string): never {
  throw new ToolsealError('BAD_REQUEST', `audit record field ${field} is not an identifier, digest or approval id`);
}

/** Opens (creating) the audit log at `options.file`, first cutting any torn tail a crash left. */
export async function openAuditLog(options: AuditLogOptions): Promise<AuditLog> {
  const { file } = options;
  const maxBytes = options.maxBytes ?? 10 * 1024 * 1024;
  const keep = options.keep ?? 5;
  const batchSize = options.batchSize ?? 64;
  const flushIntervalMs = options.flushIntervalMs ?? 1000;
  const now = options.now ?? (() => new Date());
  await repairTail(file);
  let handle = await open(file, 'a', 0o600);
  let size = (await stat(file)).size;
  let pending: string[] = [];
  let chain: Promise<void> = Promise.resolve();
  let failure: unknown;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const writeBatch = async (lines: string[]): Promise<void> => {
    const bytes = Buffer.from(lines.join(''), 'utf8');
    if (size > 0 && size + bytes.length > maxBytes) {
      await handle.close();
      await rotateFiles(file, keep);
      handle = await open(file, 'a', 0o600);
      size = 0;
    }
    await writeAll(handle, bytes);
    await handle.sync();
    size += bytes.length;
  };

  const schedule = (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const lines = pending;
    pending = [];
    if (lines.length > 0) {
      chain = chain
        .then(() => (failure === undefined ? writeBatch(lines) : undefined))
        .catch((error: unknown) => {
          failure ??= error;
        });
    }
    return chain.then(() => {
      if (failure !== undefined) throw failure;
    });
  };

  return {
    record(decision) {
      if (closed) throw new ToolsealError('INTERNAL', 'the audit log is closed');
      if (failure !== undefined) throw failure;
      const record: AuditRecord = createAuditRecord(decision, now());
      const problem = findAuditRecordProblem(record as unknown as Record<string, unknown>);
      if (problem !== undefined) refuseRecord(problem);
      pending.push(`${JSON.stringify(record)}\n`);
      if (pending.length >= batchSize) void schedule().catch(() => {});
      else if (timer === undefined && flushIntervalMs > 0) {
        timer = setTimeout(() => void schedule().catch(() => {}), flushIntervalMs);
        timer.unref();
      }
    },
    flush: schedule,
    async close() {
      if (closed) return;
      closed = true;
      try {
        await schedule();
      } finally {
        await handle.close();
      }
    },
  };
}

export interface AuditLogContents {
  records: AuditRecord[];
  /** Lines that are not audit records (never returned as one): corrupt lines, and a torn tail without its newline. */
  skipped: number;
}

/** Reads one audit log file: only newline-terminated lines that parse strictly and have the record's exact shape. */
export async function readAuditLog(file: string): Promise<AuditLogContents> {
  const bytes = await readFile(file);
  const records: AuditRecord[] = [];
  let skipped = 0;
  let start = 0;
  for (let end = bytes.indexOf(NEWLINE, start); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
    const record = readLine(bytes.subarray(start, end));
    if (record === undefined) skipped++;
    else records.push(record);
    start = end + 1;
  }
  if (start < bytes.length) skipped++;
  return { records, skipped };
}

function readLine(line: Uint8Array): AuditRecord | undefined {
  try {
    return readAuditRecord(parseStrict(line, { maxBytes: 64 * 1024, maxDepth: 2 }).value);
  } catch {
    return undefined;
  }
}

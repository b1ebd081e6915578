// The work one registry process hands to the sequencer through the database, and the outcome it gets back (issue 16
// §2): a job is a frame — a 4-byte big-endian length, that many bytes of JSON (what the work needs), then the raw
// bytes it carries (a publish's canonical manifest, an approval request's body, exactly as received).

import { ToolsealError, isErrorCode, isToolsealError, type ErrorCode } from '../core/errors.ts';
import { computeSha256Hex, type Sha256Digest } from '../pipeline/index.ts';
import type { ApprovalTransitionResponse } from '../protocol/wire.ts';
import type { LogJobKind, PrincipalRecord, PublisherRecord } from '../store/index.ts';
import type { PipelineOutput } from './pipeline-runner.ts';
import type { InclusionProof } from './transparency-log.ts';

export interface PublishJob {
  kind: 'publish';
  publisher: PublisherRecord;
  /** The pipeline's output, less what the sequencer recomputes (digest and size come from the bytes). */
  result: PipelineOutput;
}

export interface YankJob {
  kind: 'yank';
  publisher: PublisherRecord;
  name: string;
  version: string;
  reason: string;
}

export interface ApprovalJob {
  kind: 'approval-decision' | 'approval-consumption';
  principal: PrincipalRecord;
  id: string;
  /** The decision body, or the consuming host's request envelope, as received. */
  body: Uint8Array;
}

export type LogJob = PublishJob | YankJob | ApprovalJob;

/** What a finished job answers: its value, or the refusal the work threw. */
export type LogJobResult =
  | { ok: true; value: PublishJobValue | YankJobValue | ApprovalTransitionResponse }
  | { ok: false; code: ErrorCode; message: string; pointer?: string };

export interface PublishJobValue {
  created: boolean;
  name: string;
  version: string;
  /** The leaf's inclusion proof in the checkpoint the sequencer signed (or found) for it. */
  inclusion: InclusionProof;
}

export interface YankJobValue {
  alreadyYanked: boolean;
}

const MAX_HEADER_BYTES = 64 * 1024;

/** The frame stored in log_jobs.payload. */
export function encodeLogJob(job: LogJob): { kind: LogJobKind; payload: Uint8Array } {
  let header: unknown;
  let body: Uint8Array;
  switch (job.kind) {
    case 'publish': {
      const { canonicalBytes, ...rest } = job.result;
      header = { publisher: job.publisher, result: rest };
      body = canonicalBytes;
      break;
    }
    case 'yank':
      header = { publisher: job.publisher, name: job.name, version: job.version, reason: job.reason };
      body = new Uint8Array(0);
      break;
    default:
      header = { principal: job.principal, id: job.id };
      body = job.body;
  }
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const frame = Buffer.allocUnsafe(4 + json.byteLength + body.byteLength);
  frame.writeUInt32BE(json.byteLength, 0);
  json.copy(frame, 4);
  frame.set(body, 4 + json.byteLength);
  return { kind: job.kind, payload: frame };
}

/**
 * A stored frame back as a job. The bytes' digest and size are recomputed here: the sequencer never takes them from the
 * row (a row is the database's, and the database is not where trust in a digest comes from).
 */
export function decodeLogJob(kind: LogJobKind, payload: Uint8Array): LogJob {
  const view = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const length = view.byteLength >= 4 ? view.readUInt32BE(0) : -1;
  if (length < 0 || length > MAX_HEADER_BYTES || 4 + length > view.byteLength) {
    throw new ToolsealError('INTERNAL', 'a queued log job is malformed');
  }
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(view.subarray(4, 4 + length).toString('utf8')) as Record<string, unknown>;
  } catch {
    throw new ToolsealError('INTERNAL', 'a queued log job is malformed');
  }
  const body = new Uint8Array(view.subarray(4 + length));
  switch (kind) {
    case 'publish': {
      const result = header.result as Omit<PipelineOutput, 'canonicalBytes'>;
      const digest = `sha256:${computeSha256Hex(body)}` as Sha256Digest;
      if (digest !== result.digest) throw new ToolsealError('INTERNAL', 'a queued publish fails its digest');
      // Name and version are what the bytes declare (the pipeline wrote them canonically), never the row's word alone.
      const declared = readDeclaredRef(body);
      if (declared.name !== result.name || declared.version !== result.version) {
        throw new ToolsealError('INTERNAL', 'a queued publish names another manifest than its bytes');
      }
      return {
        kind,
        publisher: header.publisher as PublisherRecord,
        result: { ...result, digest, size: body.byteLength, canonicalBytes: body },
      };
    }
    case 'yank':
      return {
        kind,
        publisher: header.publisher as PublisherRecord,
        name: String(header.name),
        version: String(header.version),
        reason: String(header.reason),
      };
    default:
      return { kind, principal: header.principal as PrincipalRecord, id: String(header.id), body };
  }
}

function readDeclaredRef(bytes: Uint8Array): { name: unknown; version: unknown } {
  try {
    const manifest = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as {
      name?: unknown;
      version?: unknown;
    };
    return { name: manifest?.name, version: manifest?.version };
  } catch {
    throw new ToolsealError('INTERNAL', 'a queued publish carries bytes that are not JSON');
  }
}

/** The outcome stored with a finished job: a refusal keeps its code, message and pointer; anything else is INTERNAL. */
export function encodeLogJobResult(result: LogJobResult): Uint8Array {
  return Buffer.from(JSON.stringify(result), 'utf8');
}

/** A thrown error as a job result (an unexpected one's text stays in the sequencer's log, not in the answer). */
export function describeJobFailure(error: unknown): LogJobResult & { ok: false } {
  if (isToolsealError(error)) {
    return {
      ok: false,
      code: error.code,
      message: error.message,
      ...(error.pointer === undefined ? {} : { pointer: error.pointer }),
    };
  }
  return { ok: false, code: 'INTERNAL', message: 'the sequencer failed on this write' };
}

/** A stored outcome back; its refusal is thrown as the ToolsealError the work threw in the sequencer. */
export function decodeLogJobResult(bytes: Uint8Array): LogJobResult {
  const result = JSON.parse(
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'),
  ) as LogJobResult;
  if (!result.ok && !isErrorCode(result.code)) return { ok: false, code: 'INTERNAL', message: result.message };
  return result;
}

/** The value of a finished job, or its refusal thrown. */
export function unwrapLogJobResult<T>(result: LogJobResult): T {
  if (result.ok) return result.value as T;
  throw new ToolsealError(
    result.code,
    result.message,
    result.pointer === undefined ? undefined : { pointer: result.pointer },
  );
}

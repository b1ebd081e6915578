// C2SP tlog-witness (https://c2sp.org/tlog-witness) "add-checkpoint": the request body (old size line, consistency
// proof lines, blank line, signed checkpoint), the 409 body (text/x.tlog.size) and the 200 body (cosignature lines).

// Errors: a malformed request or answer is 'BAD_REQUEST'.

import { ToolsealError } from '../core/errors.ts';
import { decodeUtf8Strict, encodeBase64 } from '../core/bytes.ts';
import { HASH_SIZE, decodeHashText } from './merkle.ts';

export const ADD_CHECKPOINT_PATH = '/add-checkpoint';
/** tlog-witness: the 409 answer's content type. */
export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size';
/** tlog-witness: a client MUST NOT send more than 63 consistency proof lines. */
export const MAX_PROOF_LINES = 63;
/** A request is an old size, at most 63 hashes and a checkpoint: far below this. */
export const MAX_ADD_CHECKPOINT_BYTES = 64 * 1024;

const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

export interface AddCheckpointRequest {
  oldSize: number;
  proof: Uint8Array[];
  /** The signed checkpoint note, as sent. */
  checkpoint: string;
}

function bad(why: string): never {
  throw new ToolsealError('BAD_REQUEST', `malformed add-checkpoint request: ${why}`);
}

function parseDecimal(text: string): number | undefined {
  if (!DECIMAL.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** The request body a log sends: "old N\n", one base64 hash per line, "\n", then the signed checkpoint. */
export function formatAddCheckpointRequest(request: AddCheckpointRequest): string {
  if (!Number.isSafeInteger(request.oldSize) || request.oldSize < 0) bad('the old size is not a count');
  if (request.proof.length > MAX_PROOF_LINES) bad(`more than ${MAX_PROOF_LINES} proof lines`);
  const proof = request.proof.map((hash) => `${encodeBase64(hash)}\n`).join('');
  return `old ${request.oldSize}\n${proof}\n${request.checkpoint}`;
}

/** Parse an add-checkpoint body (bytes as received). */
export function parseAddCheckpointRequest(body: Uint8Array | string): AddCheckpointRequest {
  let text: string;
  if (typeof body === 'string') text = body;
  else {
    if (body.byteLength > MAX_ADD_CHECKPOINT_BYTES) bad('too large');
    const decoded = decodeUtf8Strict(body);
    if (decoded === undefined) bad('not valid UTF-8');
    text = decoded;
  }
  const blank = text.indexOf('\n\n');
  if (blank < 0) bad('no blank line before the checkpoint');
  const head = text.slice(0, blank).split('\n');
  const checkpoint = text.slice(blank + 2);
  const oldLine = head[0] as string;
  if (!oldLine.startsWith('old ')) bad('the first line must be "old <size>"');
  const oldSize = parseDecimal(oldLine.slice(4));
  if (oldSize === undefined) bad('the old size must be decimal with no leading zeroes');
  const proofLines = head.slice(1);
  if (proofLines.length > MAX_PROOF_LINES) bad(`more than ${MAX_PROOF_LINES} proof lines`);
  const proof = proofLines.map((line) => {
    const hash = decodeHashText(line);
    if (hash === undefined || hash.byteLength !== HASH_SIZE) bad(`a proof line is not base64 of ${HASH_SIZE} bytes`);
    return hash;
  });
  if (checkpoint.length === 0) bad('no checkpoint');
  return { oldSize, proof, checkpoint };
}

/** The 409 body: the latest cosigned size in decimal and a newline. */
export function formatTlogSize(size: number): string {
  return `${size}\n`;
}

/** Parse a 409 body; undefined when it is not "<decimal>\n". */
export function parseTlogSize(text: string): number | undefined {
  if (!text.endsWith('\n')) return undefined;
  return parseDecimal(text.slice(0, -1));
}

/** The signature lines of a 200 answer ("— name base64\n" each, at least one); undefined when malformed. */
export function parseCosignatureLines(text: string): string[] | undefined {
  if (text.length === 0 || !text.endsWith('\n')) return undefined;
  const lines = text.slice(0, -1).split('\n');
  if (lines.length > 100 || lines.some((line) => !/^\u2014 [^ \n]+ [A-Za-z0-9+/]+={0,2}$/.test(line))) return undefined;
  return lines.map((line) => `${line}\n`);
}

// Newline-delimited JSON-RPC framing (MCP 2025-06-18 "Transports" §stdio: one message per line, no embedded newlines).

import { toError } from '../../core/errors.ts';

/** Splits a byte stream into lines, each returned with its `\n`; no copy of a line that arrives in one chunk. */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingLength = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** The complete lines in `chunk` (with what came before it); throws RangeError once a partial line is too long. */
  push(chunk: Buffer): Buffer[] {
    const lines: Buffer[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline + 1);
      if (this.pendingLength > 0) {
        lines.push(Buffer.concat([...this.pending, piece]));
        this.pending = [];
        this.pendingLength = 0;
      } else {
        lines.push(piece);
      }
      start = newline + 1;
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingLength += chunk.length - start;
      if (this.pendingLength > this.maxLineBytes)
        throw new RangeError(`a message longer than ${this.maxLineBytes} bytes`);
    }
    return lines;
  }
}

/** The text of one line (UTF-8), without the `\n` that ends it. */
export function decodeLine(line: Buffer): string {
  return line.toString('utf8', 0, line.at(-1) === 0x0a ? line.length - 1 : line.length);
}

/** Decode one line (its bytes, or its text from decodeLine); undefined for a blank line, an Error for one that is not JSON. */
export function parseLine(line: Buffer | string): unknown {
  const text = (typeof line === 'string' ? line : line.toString('utf8')).trim();
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    return toError(error);
  }
}

/** The line as it goes on the wire: ending in exactly the `\n` it arrived with, or one added. */
export function terminateLine(line: Buffer): Buffer {
  return line.at(-1) === 0x0a ? line : Buffer.concat([line, Buffer.from('\n')]);
}

// Read a request body as bytes within a size limit, streaming (never trusting Content-Length alone).

import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { ToolsealError } from '../core/errors.ts';

/**
 * The body's exact bytes, refused with TOO_LARGE as soon as it passes `maxBytes`. On @hono/node-server the
 * Node request stream is read directly (web streams cost several times more per request); elsewhere (tests
 * through `app.request()`) the web stream is read chunk by chunk with the same limit.
 */
export async function readBodyWithin(c: Context, maxBytes: number, what: string): Promise<Uint8Array> {
  const declared = c.req.header('Content-Length');
  if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > maxBytes)
    throw tooLarge(what, maxBytes);
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  const chunks: Uint8Array[] = [];
  let total = 0;
  const take = (chunk: Uint8Array): void => {
    total += chunk.byteLength;
    if (total > maxBytes) throw tooLarge(what, maxBytes);
    chunks.push(chunk);
  };
  if (incoming !== undefined && typeof incoming.on === 'function' && !incoming.readableDidRead) {
    for await (const chunk of incoming) take(chunk as Buffer);
  } else {
    const reader = c.req.raw.body?.getReader();
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        try {
          take(value);
        } catch (error) {
          await reader.cancel().catch(() => undefined);
          throw error;
        }
      }
    }
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

function tooLarge(what: string, maxBytes: number): ToolsealError {
  return new ToolsealError('TOO_LARGE', `${what} exceeds ${maxBytes} bytes`);
}

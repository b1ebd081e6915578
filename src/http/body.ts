// Read a request body as bytes within a size limit, streaming (never trusting Content-Length alone). A body over the
// limit is answered 413 and the connection closed only once the rest has been drained (src/http/lingering-close.ts);
// a client that goes away mid-body is a RequestAbortedError, which is not answered (nobody is left to read it).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { ToolsealError } from '../core/errors.ts';
import { closeAfterDrainingBody } from './lingering-close.ts';
import { readStreamWithin } from '../core/stream.ts';

/** The client closed the connection before its request body had all arrived. */
export class RequestAbortedError extends Error {
  override readonly name = 'RequestAbortedError';
}

interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

/**
 * The body's exact bytes, refused with TOO_LARGE as soon as it passes `maxBytes`. On @hono/node-server the
 * Node request stream is read directly (web streams cost several times more per request); elsewhere (tests
 * through `app.request()`) the web stream is read chunk by chunk with the same limit.
 */
export async function readBodyWithin(c: Context, maxBytes: number, what: string): Promise<Uint8Array> {
  const bindings = c.env as NodeBindings | undefined;
  const incoming = bindings?.incoming;
  const onNode = incoming !== undefined && typeof incoming.on === 'function' && !incoming.readableDidRead;
  const declared = c.req.header('Content-Length');
  if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > maxBytes) {
    if (onNode) closeAfterDrainingBody(incoming, bindings?.outgoing);
    throw tooLarge(what, maxBytes);
  }
  if (onNode) return readIncomingWithin(incoming, bindings?.outgoing, maxBytes, what);
  return readWebBodyWithin(c, maxBytes, what);
}

async function readIncomingWithin(
  incoming: IncomingMessage,
  outgoing: ServerResponse | undefined,
  maxBytes: number,
  what: string,
): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    // destroyOnReturn: false, so that leaving the loop early does not destroy the request (and with it the socket).
    for await (const chunk of incoming.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > maxBytes) break;
      chunks.push(chunk);
    }
  } catch (error) {
    if (incoming.destroyed && !incoming.complete) throw new RequestAbortedError('the client closed the connection');
    throw error;
  }
  if (total > maxBytes) {
    closeAfterDrainingBody(incoming, outgoing);
    throw tooLarge(what, maxBytes);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

function readWebBodyWithin(c: Context, maxBytes: number, what: string): Promise<Uint8Array> {
  return readStreamWithin(c.req.raw.body, maxBytes, () => tooLarge(what, maxBytes));
}

function tooLarge(what: string, maxBytes: number): ToolsealError {
  return new ToolsealError('TOO_LARGE', `${what} exceeds ${maxBytes} bytes`);
}

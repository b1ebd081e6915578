// Lingering close (RFC 9112 §9.6; what nginx's lingering_close does): a server that answers before it has read the
// whole request must not close the connection while the request is still arriving, or its TCP stack answers the
// unread bytes with a reset that can discard the answer before the client reads it. So after the answer the server
// half-closes (FIN), keeps reading and discarding, and closes once the client is done, within a byte and time bound.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** At most this many more bytes are read and discarded before the connection is cut. */
export const LINGER_MAX_BYTES = 16 * 1024 * 1024;
/** And for at most this long. */
export const LINGER_MAX_MS = 5_000;

/** Sockets in a lingering close, with what `socket.bytesRead` was when it began. */
const lingering = new WeakMap<Socket, number>();

/** Whether the socket is already in a lingering close (its closing is taken care of). */
export function isLingering(socket: Socket): boolean {
  return lingering.has(socket);
}

/**
 * Answer this request with `Connection: close` and, once the answer is written, discard the rest of its body before
 * closing: when the body has all arrived, or after LINGER_MAX_BYTES more body bytes or LINGER_MAX_MS, whichever is
 * first. Node closes a `Connection: close` exchange with `socket.destroySoon()` once the response is finished; that
 * call is what is replaced here, on this one socket.
 */
export function closeAfterDrainingBody(incoming: IncomingMessage, outgoing: ServerResponse | undefined): void {
  const socket = incoming.socket;
  if (!socket || socket.destroyed || lingering.has(socket)) return;
  if (outgoing !== undefined && !outgoing.headersSent) outgoing.setHeader('Connection', 'close');
  const cut = startLingering(socket);
  let discarded = 0;
  incoming.on('data', (chunk: Buffer) => {
    discarded += chunk.byteLength;
    if (discarded > LINGER_MAX_BYTES) cut();
  });
  incoming.on('error', cut);
  // Flowing with no consumer but the counter above: the parser goes on reading and the bytes are dropped.
  incoming.resume();
  const bodyDone = incoming.complete
    ? Promise.resolve()
    : new Promise<void>((resolve) => {
        incoming.once('end', resolve);
        socket.once('end', resolve);
      });
  let closing = false;
  socket.destroySoon = () => {
    if (closing) return;
    closing = true;
    closeWhenBothDone(socket, bodyDone);
  };
}

/**
 * Write a last answer on a connection whose request cannot be read further (the parser refused it), half-close, and
 * go on reading (the parser drops what it reads) until the client closes its side, within the same bounds; the
 * parser's further refusals on it come to enforceLingerBytes.
 */
export function endAfterDraining(socket: Socket, answer: string): void {
  if (socket.destroyed || lingering.has(socket)) return;
  startLingering(socket);
  socket.end(answer);
  if (socket.readableEnded) closeWhenBothDone(socket, Promise.resolve());
  else socket.once('end', () => closeWhenBothDone(socket, Promise.resolve()));
}

/** Cut a lingering socket that has read more than LINGER_MAX_BYTES since its lingering close began. */
export function enforceLingerBytes(socket: Socket): void {
  const start = lingering.get(socket);
  if (start !== undefined && socket.bytesRead - start > LINGER_MAX_BYTES) socket.destroy();
}

/** Mark the socket as lingering and cut it (destroy) after LINGER_MAX_MS; returns the cut. */
function startLingering(socket: Socket): () => void {
  lingering.set(socket, socket.bytesRead);
  const cut = (): void => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(cut, LINGER_MAX_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  return cut;
}

/** Half-close once the answer is flushed (FIN), and destroy once the client's side is done too. */
function closeWhenBothDone(socket: Socket, bodyDone: Promise<void>): void {
  if (socket.destroyed) return;
  if (socket.writable) socket.end();
  const written = socket.writableFinished
    ? Promise.resolve()
    : new Promise<void>((resolve) => socket.once('finish', () => resolve()));
  void Promise.all([written, bodyDone]).then(() => socket.destroy());
}

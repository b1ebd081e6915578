// Raw HTTP/1.1 over node:net for the socket-level tests (RFC 9112): send exact bytes, read the answer as the peer sees
// it, and parse the responses on a connection (status line, header fields, Content-Length framed bodies).

import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface RawExchange {
  /** Every byte the server sent, in order. */
  received: Buffer;
  /** The socket error the client saw (ECONNRESET, EPIPE…), if any. */
  error: NodeJS.ErrnoException | undefined;
  /** True when the server ended the connection cleanly (FIN), before any error. */
  ended: boolean;
}

/** Connect to 127.0.0.1:port; with `allowHalfOpen` the client may go on sending after the server's FIN. */
export function connect(port: number, allowHalfOpen = false): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen }, () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * Write every chunk (waiting until the kernel took each), and only then start reading, until the server closes.
 * This is the client that sees a reset when a server closes while unread request bytes are still arriving.
 */
export async function writeAllThenRead(port: number, chunks: readonly (Buffer | string)[]): Promise<RawExchange> {
  const socket = await connect(port);
  let error: NodeJS.ErrnoException | undefined;
  socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e));
  socket.pause();
  for (const chunk of chunks) {
    if (error || socket.destroyed) break;
    await new Promise<void>((resolve) => socket.write(chunk, () => resolve()));
  }
  return readToClose(socket, () => error);
}

/**
 * Read what the server sends until the connection closes (the socket may already be paused or flowing). On the
 * server's FIN the client ends its side too, unless `halfClose` is false (a client that just goes on sending).
 */
export function readToClose(
  socket: net.Socket,
  errorSoFar: () => NodeJS.ErrnoException | undefined = () => undefined,
  halfClose = true,
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const received: Buffer[] = [];
    let error = errorSoFar();
    let ended = false;
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('end', () => {
      if (!error) ended = true;
      if (halfClose) socket.end();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e));
    const finish = (): void => resolve({ received: Buffer.concat(received), error: error ?? errorSoFar(), ended });
    if (socket.destroyed) finish();
    else socket.once('close', finish);
    socket.resume();
  });
}

/** Parse consecutive responses framed by Content-Length (enough for what this server sends). */
export function parseResponses(bytes: Buffer): RawResponse[] {
  const responses: RawResponse[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const headEnd = bytes.indexOf('\r\n\r\n', offset);
    if (headEnd < 0) throw new Error(`incomplete response head: ${JSON.stringify(bytes.subarray(offset).toString())}`);
    const [statusLine = '', ...fields] = bytes.subarray(offset, headEnd).toString('latin1').split('\r\n');
    const match = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
    if (!match) throw new Error(`not an HTTP/1.1 status line: ${JSON.stringify(statusLine)}`);
    const headers: Record<string, string> = {};
    for (const field of fields) {
      const colon = field.indexOf(':');
      headers[field.slice(0, colon).toLowerCase()] = field.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? '0');
    const bodyStart = headEnd + 4;
    if (bodyStart + length > bytes.length) throw new Error('incomplete response body');
    responses.push({ status: Number(match[1]), headers, body: bytes.subarray(bodyStart, bodyStart + length) });
    offset = bodyStart + length;
  }
  return responses;
}

/** The one response of an exchange (throws if there is not exactly one). */
export function onlyResponse(exchange: RawExchange): RawResponse {
  const responses = parseResponses(exchange.received);
  if (responses.length !== 1) throw new Error(`expected one response, got ${responses.length}`);
  return responses[0]!;
}

/** A request head (HTTP/1.1, Host 127.0.0.1) with the given extra header lines. */
export function requestHead(method: string, target: string, headers: Record<string, string | number> = {}): string {
  const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

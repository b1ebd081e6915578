// Serve a Hono app on 127.0.0.1 with graceful shutdown (stop accepting, finish in-flight requests). Requests refused
// before the app sees them (by Node's HTTP parser, or by the adapter building the Request) are answered as RFC 9457
// problems too (src/http/early-refusals.ts).

import type { AddressInfo, Socket } from 'node:net';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { answerAdapterError, answerParserError } from './early-refusals.ts';

export interface RunningServer {
  port: number;
  url: string;
  /** Stop accepting connections and resolve once in-flight requests have finished. */
  close(): Promise<void>;
}

/** Listen on 127.0.0.1 only (port 0 picks a free port). */
export function startHttpServer(
  app: { fetch: (request: Request, env?: unknown) => Response | Promise<Response> },
  port: number,
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    let closing = false;
    const inFlight = new Set<ServerResponse>();
    // What @hono/node-server's serve() builds, plus its errorHandler. The second argument of fetch carries the
    // adapter's bindings ({ incoming, outgoing }); pass it on.
    const listener = getRequestListener((request, env) => app.fetch(request, env), {
      hostname: '127.0.0.1',
      errorHandler: answerAdapterError,
    });
    const server = createServer(listener);
    server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
      inFlight.add(response);
      response.once('close', () => inFlight.delete(response));
      if (closing) endConnectionAfter(response);
    });
    server.on('clientError', (error: Error, socket: Socket) =>
      answerParserError(error, socket, isWritingResponseOn(inFlight, socket)),
    );
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const info = server.address() as AddressInfo;
      resolve({
        port: info.port,
        url: `http://127.0.0.1:${info.port}`,
        close: () =>
          new Promise<void>((done) => {
            closing = true;
            // A keep-alive connection busy at shutdown would otherwise stay open after its response (and keep
            // serving new requests on it): its response closes the connection instead.
            for (const response of inFlight) endConnectionAfter(response);
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });
}

function endConnectionAfter(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('Connection', 'close');
}

/** Whether a response on this connection is still being produced (only asked when the parser refuses a request). */
function isWritingResponseOn(inFlight: ReadonlySet<ServerResponse>, socket: Socket): boolean {
  for (const response of inFlight) if (response.socket === socket && !response.writableEnded) return true;
  return false;
}

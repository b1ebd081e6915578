// Serve a Hono app on 127.0.0.1 with graceful shutdown (stop accepting, finish in-flight requests). Requests refused
// before the app sees them (by Node's HTTP parser, or by the adapter building the Request) are answered as RFC 9457
// problems too (src/http/early-refusals.ts); plain GETs the app already answered from its immutable cache are answered
// in front of it (src/http/fast-reads.ts, issue 16 §4).

import type { AddressInfo, Socket } from 'node:net';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { answerAdapterError, answerParserError } from './early-refusals.ts';
import { answerFromCache } from './fast-reads.ts';
import type { ImmutableBodyCache } from './immutable-body-cache.ts';

export interface RunningServer {
  port: number;
  url: string;
  /** Stop accepting connections and resolve once in-flight requests have finished. */
  close(): Promise<void>;
}

export interface HttpServerOptions {
  /** The cache the app answers immutable reads from (AppDeps.cache): what it answered, the server answers first. */
  fastReads?: ImmutableBodyCache;
}

/** Listen on 127.0.0.1 only (port 0 picks a free port). */
export function startHttpServer(
  app: { fetch: (request: Request, env?: unknown) => Response | Promise<Response> },
  port: number,
  options: HttpServerOptions = {},
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
    const cache = options.fastReads;
    const server = createServer(
      cache === undefined
        ? listener
        : (request, response) => {
            if (!answerFromCache(cache, request, response)) return listener(request, response);
          },
    );
    server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
      inFlight.add(response);
      response.once('close', () => inFlight.delete(response));
      if (closing) endConnectionAfter(response);
    });
    server.on('clientError', (error: Error, socket: Socket) => {
      // A bad request pipelined behind one still being answered (its handler awaits the store) gets its problem once
      // that answer is whole (RFC 9112 §9.3.2: responses in request order).
      // Only behind a request whose body was read whole: a connection cut in the middle of a body must close at once,
      // so that the request reading it sees the abort.
      const pending = findResponseWritingOn(inFlight, socket);
      if (pending === undefined || !pending.req.complete) answerParserError(error, socket, pending !== undefined);
      else {
        let finished = false;
        pending.once('finish', () => {
          finished = true;
          answerParserError(error, socket, false);
        });
        pending.once('close', () => {
          if (!finished) socket.destroy(); // the answer was cut short: no problem can follow it
        });
      }
    });
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
function findResponseWritingOn(inFlight: ReadonlySet<ServerResponse>, socket: Socket): ServerResponse | undefined {
  for (const response of inFlight) if (response.socket === socket && !response.writableEnded) return response;
  return undefined;
}

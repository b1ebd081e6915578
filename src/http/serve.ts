// Serve a Hono app on 127.0.0.1 with graceful shutdown (stop accepting, finish in-flight requests).

import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { serve } from '@hono/node-server';

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
    // The second argument carries @hono/node-server's bindings ({ incoming, outgoing }); pass it on.
    const server = serve(
      { fetch: (request, env) => app.fetch(request, env), port, hostname: '127.0.0.1' },
      (info: AddressInfo) => {
        resolve({
          port: info.port,
          url: `http://127.0.0.1:${info.port}`,
          close: () =>
            new Promise<void>((done) => {
              closing = true;
              // A keep-alive connection busy at shutdown would otherwise stay open after its response (and keep
              // serving new requests on it): its response closes the connection instead.
              for (const response of inFlight) endConnectionAfter(response);
              (server as Server).close(() => done());
              (server as Server).closeIdleConnections();
            }),
        });
      },
    ) as Server;
    server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
      inFlight.add(response);
      response.once('close', () => inFlight.delete(response));
      if (closing) endConnectionAfter(response);
    });
    server.once('error', reject);
  });
}

function endConnectionAfter(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('Connection', 'close');
}

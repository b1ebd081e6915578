// The witness's HTTP face on node:http (C2SP tlog-witness "HTTP Interface"): POST <prefix>/add-checkpoint only,
// keep-alive, a bounded body; every answer is text. No Hono here (only src/http and src/web import it).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ADD_CHECKPOINT_PATH, MAX_ADD_CHECKPOINT_BYTES } from '../log/witness-protocol.ts';
import type { WitnessCore } from './add-checkpoint.ts';

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

function readBody(request: IncomingMessage, limit: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        resolve(undefined);
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(size > limit ? undefined : new Uint8Array(Buffer.concat(chunks))));
    request.on('error', reject);
  });
}

/** The witness's HTTP server (not yet listening). */
export function createWitnessHttpServer(core: WitnessCore): Server {
  const server = createServer({ keepAlive: true }, (request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== ADD_CHECKPOINT_PATH) return send(response, 404, 'text/plain; charset=utf-8', 'not found\n');
    if (request.method !== 'POST') {
      response.setHeader('Allow', 'POST');
      return send(response, 405, 'text/plain; charset=utf-8', 'only POST\n');
    }
    readBody(request, MAX_ADD_CHECKPOINT_BYTES)
      .then(async (body) => {
        if (body === undefined) return send(response, 413, 'text/plain; charset=utf-8', 'request too large\n');
        const answer = await core.addCheckpoint(body);
        send(response, answer.status, answer.contentType, answer.body);
      })
      .catch(() => {
        if (!response.headersSent) send(response, 500, 'text/plain; charset=utf-8', 'internal error\n');
        else response.destroy();
      });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  return server;
}

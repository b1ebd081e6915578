// A small static file server for the mirror tests: node:http on 127.0.0.1:0, answering exactly as the nginx
// configuration in docs/deploy.md does (locations in the same order, try_files $uri $uri/index.json, gzip_static,
// the problem+json 404 page). Every request's path is recorded.

import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface StaticServer {
  url: string;
  /** The paths requested so far (with their query, as sent). */
  requests: string[];
  close(): Promise<void>;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';

interface Location {
  contentType: string;
  cacheControl?: string;
  gzipStatic?: boolean;
  tryIndex?: boolean;
}

/** nginx's location choice for a decoded path (= exact first, then the regex locations in order, then `/`). */
function locate(path: string): Location | 'deny' {
  if (path === '/v1/log/checkpoint')
    return { contentType: 'text/plain; charset=utf-8', cacheControl: 'public, max-age=5' };
  if (path === '/v1/log/key') return { contentType: 'text/plain; charset=utf-8', cacheControl: 'public, max-age=3600' };
  if (path === '/_mirror/404.json') return 'deny'; // `internal`: only the error page reaches it
  if (/\/\.(?!well-known\/jwks\.json$)/.test(path)) return 'deny';
  if (path.startsWith('/v1/log/tile/'))
    return { contentType: 'application/octet-stream', cacheControl: IMMUTABLE, gzipStatic: true };
  if (/^\/v1\/manifests\/[^/]+\/[^/]+\/[^/]+\/attestation$/.test(path)) {
    return { contentType: 'application/jose+json', cacheControl: IMMUTABLE };
  }
  if (/^\/v1\/manifests\/[^/]+\/[^/]+\/[^/]+\/bundle$/.test(path)) {
    return { contentType: 'application/vnd.dev.sigstore.bundle.v0.3+json', cacheControl: 'no-cache' };
  }
  return { contentType: 'application/json', tryIndex: true };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function serve(root: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const notFound = async (): Promise<void> => {
    const body = await readFile(join(root, '_mirror', '404.json')).catch(() => Buffer.from('not found'));
    response.writeHead(404, { 'Content-Type': 'application/problem+json', 'Content-Length': body.byteLength });
    response.end(request.method === 'HEAD' ? undefined : body);
  };
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { Allow: 'GET, HEAD' }).end();
    return;
  }
  // nginx matches locations on the decoded, normalised path, without the query.
  const raw = (request.url ?? '/').split('?')[0] as string;
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    response.writeHead(400).end();
    return;
  }
  if (path.split('/').some((segment) => segment === '..' || segment === '.') || path.includes('\0')) {
    response.writeHead(400).end();
    return;
  }
  const location = locate(path);
  if (location === 'deny') return notFound();
  let file = join(root, path);
  if (!(await isFile(file))) {
    if (!location.tryIndex || !(await isFile(join(file, 'index.json')))) return notFound();
    file = join(file, 'index.json');
  }
  const headers: Record<string, string | number> = { 'Content-Type': location.contentType };
  if (location.cacheControl !== undefined) headers['Cache-Control'] = location.cacheControl;
  const acceptsGzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  if (location.gzipStatic) headers['Vary'] = 'Accept-Encoding'; // gzip_vary on
  if (location.gzipStatic && acceptsGzip && (await isFile(`${file}.gz`))) {
    file = `${file}.gz`;
    headers['Content-Encoding'] = 'gzip';
  }
  const body = await readFile(file);
  headers['Content-Length'] = body.byteLength;
  response.writeHead(200, headers);
  response.end(request.method === 'HEAD' ? undefined : body);
}

/** Serve `root` on 127.0.0.1 (a free port). */
export function startStaticServer(root: string): Promise<StaticServer> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(request.url ?? '');
    serve(root, request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

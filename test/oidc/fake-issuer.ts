// A local OIDC issuer on 127.0.0.1 for tests (OpenID Connect Discovery 1.0 §4, RFC 7517 JWK Set): serves its
// configuration and JWKS, mints ID tokens with jose, and can misbehave (huge or unreachable JWKS, rotated keys).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CompactSign, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

type SigningKey = {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
  publicJwk: JWK;
};

export type JwksMode = 'normal' | 'huge' | 'unreachable' | 'huge-no-length';

export class FakeIssuer {
  readonly keys: SigningKey[] = [];
  /** Keys minted with but not (yet) published: rotation and unknown-kid tests. */
  readonly unpublished: SigningKey[] = [];
  jwksMode: JwksMode = 'normal';
  discoveryFetches = 0;
  jwksFetches = 0;
  private constructor(
    private readonly server: Server,
    readonly issuer: string,
  ) {}

  static async start(): Promise<FakeIssuer> {
    let self: FakeIssuer | undefined;
    const server = createServer((request, response) => self!.handle(request.url ?? '', response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    self = new FakeIssuer(server, `http://127.0.0.1:${port}`);
    self.keys.push(await createKey('rsa-1', 'RS256'), await createKey('ec-1', 'ES256'));
    return self;
  }

  async addUnpublishedKey(kid: string): Promise<void> {
    this.unpublished.push(await createKey(kid, 'RS256'));
  }

  publishPendingKeys(): void {
    this.keys.push(...this.unpublished.splice(0));
  }

  /** A token signed with the key `kid` (default the RSA key), `iss` this issuer, iat now, exp in 5 minutes. */
  async mint(claims: JWTPayload, options: { kid?: string; now?: number; header?: Record<string, unknown> } = {}) {
    const kid = options.kid ?? 'rsa-1';
    const key = [...this.keys, ...this.unpublished].find((candidate) => candidate.kid === kid);
    if (key === undefined) throw new Error(`no key ${kid}`);
    const now = options.now ?? Math.floor(Date.now() / 1000);
    return await new SignJWT({ iss: this.issuer, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...options.header })
      .sign(key.privateKey);
  }

  /** A JWS over exactly `payloadText` (which may hold what a JWT library would never write, e.g. duplicate keys). */
  async signRaw(payloadText: string, kid = 'rsa-1'): Promise<string> {
    const key = this.keys.find((candidate) => candidate.kid === kid);
    if (key === undefined) throw new Error(`no key ${kid}`);
    return await new CompactSign(new TextEncoder().encode(payloadText))
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
      .sign(key.privateKey);
  }

  publicJwk(kid: string): JWK {
    const key = this.keys.find((candidate) => candidate.kid === kid);
    if (key === undefined) throw new Error(`no key ${kid}`);
    return key.publicJwk;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(url: string, response: import('node:http').ServerResponse): void {
    if (url === '/.well-known/openid-configuration') {
      this.discoveryFetches += 1;
      sendJson(response, { issuer: this.issuer, jwks_uri: `${this.issuer}/jwks` });
      return;
    }
    if (url === '/jwks') {
      this.jwksFetches += 1;
      if (this.jwksMode === 'unreachable') {
        response.socket?.destroy();
        return;
      }
      const keys = this.keys.map((key) => key.publicJwk);
      if (this.jwksMode === 'huge' || this.jwksMode === 'huge-no-length') {
        const padding = 'x'.repeat(200 * 1024);
        const body = JSON.stringify({ keys, padding });
        if (this.jwksMode === 'huge') {
          response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
          response.end(body);
        } else {
          response.writeHead(200, { 'Content-Type': 'application/json' });
          response.write(body.slice(0, 100 * 1024));
          response.end(body.slice(100 * 1024));
        }
        return;
      }
      sendJson(response, { keys });
      return;
    }
    response.writeHead(404).end();
  }
}

async function createKey(kid: string, alg: 'RS256' | 'ES256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk };
}

function sendJson(response: import('node:http').ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

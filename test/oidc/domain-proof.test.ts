// The MCP Registry HTTP domain proof (issue 28 §4): record parsing, signature and time checks, and the bounded fetch
// against a local server on 127.0.0.1.

import { generateKeyPairSync, sign } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  domainCoversNamespace,
  fetchDomainProofRecord,
  namespaceOfDomain,
  parseDomainProofRecord,
  parseDomainProofRecords,
  verifyDomainProof,
} from '../../src/oidc/domain-proof.ts';
import { OidcRefusal } from '../../src/oidc/refusal.ts';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const rawKey = (publicKey.export({ format: 'jwk' }) as { x: string }).x;
const keyBase64 = Buffer.from(rawKey, 'base64url').toString('base64');
const record = `v=MCPv1; k=ed25519; p=${keyBase64}`;
const now = new Date('2026-12-01T12:00:00.000Z');

function proof(timestamp: string, key = privateKey) {
  return { domain: 'example.com', timestamp, signatureHex: sign(null, Buffer.from(timestamp), key).toString('hex') };
}

function refused(run: () => void): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OidcRefusal);
    expect((error as OidcRefusal).code).toBe('FORBIDDEN');
    expect((error as OidcRefusal).reason).toBe('domain-proof');
    return (error as OidcRefusal).message;
  }
  throw new Error('expected a refusal');
}

describe('records', () => {
  it('parse exactly v=MCPv1; k=ed25519; p=32 bytes', () => {
    expect(Buffer.from(parseDomainProofRecord(record)!).toString('base64')).toBe(keyBase64);
    expect(parseDomainProofRecords(`# comment\n${record}\r\nv=MCPv1; k=ed25519; p=AAAA\n`)).toHaveLength(1);
    for (const bad of [
      `v=MCPv2; k=ed25519; p=${keyBase64}`,
      `v=MCPv1; k=ecdsap384; p=${keyBase64}`,
      `v=MCPv1; k=ed25519`,
      `v=MCPv1; k=ed25519; p=${keyBase64}; x=1`,
      `v=MCPv1; v=MCPv1; k=ed25519; p=${keyBase64}`,
      `v=MCPv1; k=ed25519; p=${keyBase64.slice(0, -4)}`,
      `v=MCPv1; k=ed25519; p=${keyBase64}!`,
    ]) {
      expect(parseDomainProofRecord(bad)).toBeUndefined();
    }
  });

  it('map domains to namespaces', () => {
    expect(namespaceOfDomain('tools.example.com')).toBe('com.example.tools');
    expect(domainCoversNamespace('example.com', 'com.example')).toBe(true);
    expect(domainCoversNamespace('example.com', 'com.example.tools')).toBe(true);
    expect(domainCoversNamespace('example.com', 'com.examplex')).toBe(false);
    expect(domainCoversNamespace('tools.example.com', 'com.example')).toBe(false);
  });
});

describe('verifyDomainProof', () => {
  it('accepts a current timestamp signed by a listed key', () => {
    expect(() => verifyDomainProof(proof('2026-12-01T12:00:30Z'), record, 'com.example.tools', { now })).not.toThrow();
  });

  it('refuses another key, a stale or future timestamp, a tampered signature, another namespace', () => {
    const other = generateKeyPairSync('ed25519').privateKey;
    refused(() => verifyDomainProof(proof('2026-12-01T12:00:00Z', other), record, 'com.example', { now }));
    refused(() => verifyDomainProof(proof('2026-12-01T11:58:00Z'), record, 'com.example', { now }));
    refused(() => verifyDomainProof(proof('2026-12-01T12:02:00Z'), record, 'com.example', { now }));
    refused(() => verifyDomainProof(proof('1764590400'), record, 'com.example', { now }));
    const good = proof('2026-12-01T12:00:00Z');
    const flipped = (good.signatureHex[0] === '0' ? '1' : '0') + good.signatureHex.slice(1);
    refused(() => verifyDomainProof({ ...good, signatureHex: flipped }, record, 'com.example', { now }));
    refused(() =>
      verifyDomainProof({ ...good, signatureHex: good.signatureHex.toUpperCase() }, record, 'com.example', { now }),
    );
    expect(refused(() => verifyDomainProof(good, record, 'org.example', { now }))).toContain('does not cover');
    refused(() => verifyDomainProof({ ...good, domain: 'Example.com' }, record, 'com.example', { now }));
    refused(() => verifyDomainProof(good, 'nothing here', 'com.example', { now }));
  });
});

describe('fetchDomainProofRecord', () => {
  let host: string;
  let body = record;
  const server = createServer((request, response) => {
    if (request.url !== '/.well-known/mcp-registry-auth') return void response.writeHead(404).end();
    response.writeHead(200, { 'Content-Type': 'text/plain' }).end(body);
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reads the record over loopback http only when allowed, and refuses a huge one', async () => {
    const fetcher = (url: string, init: RequestInit) => fetch(url, init);
    body = record;
    expect(await fetchDomainProofRecord(host, fetcher, { allowInsecureLoopback: true })).toBe(record);
    await expect(fetchDomainProofRecord(host, fetcher)).rejects.toMatchObject({ reason: 'domain-proof' });
    body = 'x'.repeat(10_000);
    await expect(fetchDomainProofRecord(host, fetcher, { allowInsecureLoopback: true })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      reason: 'domain-proof',
    });
  });
});

// Proving a reverse-DNS namespace by its domain (issue 28 §4), after the official MCP Registry's HTTP method: the
// domain serves an Ed25519 public key at https://DOMAIN/.well-known/mcp-registry-auth as `v=MCPv1; k=ed25519; p=KEY`
// (KEY the 32-byte RFC 8032 public key in base64), and the publisher signs an RFC 3339 timestamp with its private key.

import { createPublicKey, verify as verifySignature } from 'node:crypto';
import { decodeBase64Strict } from '../core/bytes.ts';
import { readStreamWithin } from '../core/stream.ts';
import { type FetchFunction, isLoopbackHost } from './issuer-url.ts';
import { OidcRefusal } from './refusal.ts';

export const DOMAIN_PROOF_PATH = '/.well-known/mcp-registry-auth';
const MAX_RECORD_BYTES = 4096;
/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4): the 32 key bytes follow. */
const ED25519_SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);
const DOMAIN_PATTERN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** The Ed25519 public keys a record file lists (one `v=MCPv1; k=ed25519; p=…` record per line; others ignored). */
export function parseDomainProofRecords(text: string): Uint8Array[] {
  const keys: Uint8Array[] = [];
  for (const line of text.split(/\r?\n/)) {
    const key = parseDomainProofRecord(line);
    if (key !== undefined) keys.push(key);
  }
  return keys;
}

/** One record's public key, or undefined unless it is exactly `v=MCPv1; k=ed25519; p=<base64 of 32 bytes>`. */
export function parseDomainProofRecord(line: string): Uint8Array | undefined {
  const fields = new Map<string, string>();
  for (const part of line.trim().split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) return undefined;
    const name = part.slice(0, at).trim();
    if (fields.has(name)) return undefined;
    fields.set(name, part.slice(at + 1).trim());
  }
  if (fields.size !== 3 || fields.get('v') !== 'MCPv1' || fields.get('k') !== 'ed25519') return undefined;
  const key = decodeBase64Strict(fields.get('p') ?? '');
  return key?.byteLength === 32 ? key : undefined;
}

/** The namespace a domain proves: `example.com` → `com.example` (it also covers `com.example.*`). */
export function namespaceOfDomain(domain: string): string {
  return domain.split('.').reverse().join('.');
}

export function domainCoversNamespace(domain: string, namespace: string): boolean {
  const root = namespaceOfDomain(domain);
  return namespace === root || namespace.startsWith(`${root}.`);
}

export interface DomainProof {
  domain: string;
  /** RFC 3339 UTC timestamp the publisher signed (its UTF-8 bytes are the message). */
  timestamp: string;
  /** The Ed25519 signature over the timestamp, in hex (as the official registry's `signed_timestamp`). */
  signatureHex: string;
}

/**
 * FORBIDDEN (domain-proof) unless `proof.signatureHex` is an Ed25519 signature of `proof.timestamp` by one of the
 * keys in `recordText`, the timestamp lies within `windowSeconds` of `now`, and the domain covers `namespace`.
 */
export function verifyDomainProof(
  proof: DomainProof,
  recordText: string,
  namespace: string,
  options: { now: Date; windowSeconds?: number },
): void {
  if (!DOMAIN_PATTERN.test(proof.domain)) throw new OidcRefusal('domain-proof', 'not a lowercase domain name');
  if (!domainCoversNamespace(proof.domain, namespace)) {
    throw new OidcRefusal('domain-proof', `domain ${proof.domain} does not cover namespace ${namespace}`);
  }
  const signedAt = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/.test(proof.timestamp)
    ? Date.parse(proof.timestamp)
    : Number.NaN;
  const windowMs = (options.windowSeconds ?? 60) * 1000;
  if (!Number.isFinite(signedAt) || Math.abs(options.now.getTime() - signedAt) > windowMs) {
    throw new OidcRefusal('domain-proof', 'the signed timestamp is missing or not current');
  }
  if (!/^(?:[0-9a-f]{2}){64}$/.test(proof.signatureHex)) {
    throw new OidcRefusal('domain-proof', 'the signature is not 64 bytes of lowercase hex');
  }
  const signature = Buffer.from(proof.signatureHex, 'hex');
  const message = new TextEncoder().encode(proof.timestamp);
  for (const key of parseDomainProofRecords(recordText)) {
    const publicKey = createPublicKey({
      key: Buffer.concat([ED25519_SPKI_PREFIX, key]),
      format: 'der',
      type: 'spki',
    });
    if (verifySignature(null, message, publicKey, signature)) return;
  }
  throw new OidcRefusal('domain-proof', `no key at https://${proof.domain}${DOMAIN_PROOF_PATH} signed the timestamp`);
}

/**
 * The record file of `domain` (https only; `http:` for loopback when allowed, in tests), at most 4 KiB, within
 * `timeoutMs`. FORBIDDEN (domain-proof) when it cannot be read.
 */
export async function fetchDomainProofRecord(
  domain: string,
  fetch: FetchFunction,
  options: { timeoutMs?: number; allowInsecureLoopback?: boolean } = {},
): Promise<string> {
  const host = domain.split(':')[0] ?? '';
  const scheme = options.allowInsecureLoopback === true && isLoopbackHost(host) ? 'http' : 'https';
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 5000);
  try {
    const response = await fetch(`${scheme}://${domain}${DOMAIN_PROOF_PATH}`, {
      method: 'GET',
      redirect: 'error',
      signal: controller.signal,
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new OidcRefusal('domain-proof', `${domain} answered ${response.status} for ${DOMAIN_PROOF_PATH}`);
    }
    const bytes = await readStreamWithin(
      response.body,
      MAX_RECORD_BYTES,
      () => new OidcRefusal('domain-proof', `${DOMAIN_PROOF_PATH} of ${domain} is over ${MAX_RECORD_BYTES} bytes`),
    );
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    if (error instanceof OidcRefusal) throw error;
    throw new OidcRefusal('domain-proof', `${DOMAIN_PROOF_PATH} of ${domain} could not be read`);
  } finally {
    clearTimeout(timer);
  }
}

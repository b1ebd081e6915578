// Stages 5 and 6: JCS canonical bytes (RFC 8785) and their SHA-256 digest, written `sha256:<hex>`.

import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { ToolsealError } from '../core/errors.ts';
import type { JsonValue } from '../core/json.ts';

export type Sha256Digest = `sha256:${string}`;

const utf8Encoder = new TextEncoder();

/**
 * RFC 8785 §3.2: keys sorted by UTF-16 code units, arrays in order, ECMAScript number form,
 * minimal string escaping, no whitespace; encoded as UTF-8 (§3.2.4).
 * The caller must have bounded the depth (the library recurses).
 */
export function canonicalizeToBytes(value: JsonValue): Uint8Array {
  const text = canonicalize(value);
  if (text === undefined) throw new ToolsealError('INTERNAL', 'value has no JSON form');
  return utf8Encoder.encode(text);
}

export function canonicalizeToText(value: JsonValue): string {
  const text = canonicalize(value);
  if (text === undefined) throw new ToolsealError('INTERNAL', 'value has no JSON form');
  return text;
}

/** One-shot SHA-256 (no Hash object per call: it runs on every read of the HTTP read path). */
export function computeSha256Hex(bytes: Uint8Array): string {
  return hash('sha256', bytes, 'hex');
}

export function computeDigest(bytes: Uint8Array): Sha256Digest {
  return `sha256:${computeSha256Hex(bytes)}`;
}

const digestPattern = /^sha256:[0-9a-f]{64}$/;

export function isSha256Digest(value: unknown): value is Sha256Digest {
  return typeof value === 'string' && digestPattern.test(value);
}

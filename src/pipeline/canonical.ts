// Stage 5: JCS canonical bytes (RFC 8785); stage 6, the digest, is src/core/digest.ts.

import canonicalize from 'canonicalize';
import { ToolsealError } from '../core/errors.ts';
import type { JsonValue } from '../core/json.ts';

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

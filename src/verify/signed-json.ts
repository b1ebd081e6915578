// Reading signed manifest bytes fast without reading them less strictly: RFC 8785 (JCS) output is a fixed point of
// JSON.parse then JSON.stringify for every value the strict parser (RFC 8259 + I-JSON RFC 7493) accepts.

import type { JsonValue } from '../core/json.ts';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../pipeline/limits.ts';
import { parseStrict } from '../pipeline/parse.ts';

const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const UNSAFE_DIGIT_RUN = /[0-9]{16}/;

/**
 * Exactly `parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS).value`, with the same errors, but faster on the bytes a
 * registry signs. When `JSON.stringify(JSON.parse(text))` gives `text` back, the text has no white space, no
 * duplicate key (stringify never writes one, and it wrote this very text), only ECMAScript number forms (no -0,
 * no overflow or underflow: those never round-trip), and is valid UTF-8 without a BOM (it starts with `{`); what is
 * left of the strict rules is ruled out before taking that path: `\u` escapes (lone surrogates) and digit runs of
 * 16 or more (integers beyond ±(2^53−1)) and nesting deeper than the limit (bounded by the count of `{` and `[`).
 * Anything else goes to parseStrict, which decides and names the error.
 */
export function parseSignedJson(bytes: Uint8Array): JsonValue {
  const fast = tryRoundTrip(bytes);
  return fast !== undefined ? fast : parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS).value;
}

function tryRoundTrip(bytes: Uint8Array): JsonValue | undefined {
  if (bytes.byteLength === 0 || bytes[0] !== 0x7b /* { */) return undefined;
  let text: string;
  try {
    text = utf8Decoder.decode(bytes);
  } catch {
    return undefined;
  }
  if (text.includes('\\u') || UNSAFE_DIGIT_RUN.test(text)) return undefined;
  if (!isNestingBounded(text, SIGNED_MANIFEST_PARSE_LIMITS.maxDepth)) return undefined;
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
  return JSON.stringify(value) === text ? value : undefined;
}

/** True when the text opens at most `maxDepth` containers in all (so none is nested deeper). */
function isNestingBounded(text: string, maxDepth: number): boolean {
  let count = 0;
  for (const open of ['{', '[']) {
    let at = text.indexOf(open);
    while (at >= 0) {
      if (++count > maxDepth) return false;
      at = text.indexOf(open, at + 1);
    }
  }
  return true;
}

// Byte helpers shared by the log modules: strict RFC 4648 §4 base64, byte equality, hex, strict UTF-8.

const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** RFC 4648 §4 standard base64 with padding. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * Decode RFC 4648 §4 base64 strictly: padding required, no whitespace, no stray characters,
 * and canonical (the unused low bits of the last symbol must be zero, RFC 4648 §3.5).
 * Returns undefined for anything else; Buffer.from(text, 'base64') alone silently skips garbage.
 */
export function decodeBase64Strict(text: string): Uint8Array | undefined {
  if (!BASE64_PATTERN.test(text)) return undefined;
  const decoded = Buffer.from(text, 'base64');
  if (decoded.toString('base64') !== text) return undefined;
  return new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
}

/** Byte equality (not constant-time: never for secrets). Buffer.compare is native, about 10x a JS loop on a hash. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
}

export function encodeHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decode UTF-8 with fatal errors; a BOM is kept as U+FEFF so the text maps back to the same bytes. */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Any surrogate code unit: a plain class, several times quicker than LONE_SURROGATE's look-arounds. */
const SURROGATE = /[\uD800-\uDFFF]/;

/** True when the string has a lone surrogate and so has no UTF-8 encoding (most text has no surrogate at all). */
export function hasLoneSurrogate(text: string): boolean {
  return SURROGATE.test(text) && LONE_SURROGATE.test(text);
}

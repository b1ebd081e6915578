// A validating scan of signed manifest bytes (RFC 8259 grammar, I-JSON RFC 7493) that only reads the top-level
// name and version: it accepts a subset of what the strict parser (src/pipeline/parse.ts) accepts, and says so.

import { isUtf8 } from 'node:buffer';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../pipeline/limits.ts';

/** The declared name and version of bytes the strict parser accepts as a manifest. */
export interface DeclaredSubject {
  name: string;
  version: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
/** Number literals this short are accepted as they are: at most 15 characters cannot leave ±(2^53−1), overflow
 * or underflow (the strict parser's UNSAFE_NUMBER checks), as long as there is no exponent. */
const MAX_PLAIN_NUMBER_LENGTH = 15;
const NAME_KEY = [0x6e, 0x61, 0x6d, 0x65]; // name
const VERSION_KEY = [0x76, 0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e]; // version

/**
 * The top-level string `name` and `version` of `bytes` when the scan can show that
 * `parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS)` accepts them and parses an object whose `name` and `version`
 * are exactly these strings; undefined when it cannot (the caller then parses strictly, which decides and names the
 * error). Accepted: valid UTF-8 starting with `{` (no BOM), the RFC 8259 grammar with white space, strings without a
 * `\u` escape (no lone surrogate) or a control character, number literals of at most 15 characters with no exponent,
 * nesting within the limit, and in every object keys without escapes in strictly increasing byte order (so no
 * duplicate key, RFC 7493 §2.3; JCS, RFC 8785 §3.2.3, writes them in that order unless a key mixes characters above
 * U+E000 with ones beyond U+FFFF). The name and version must be strings without escapes.
 */
export function scanDeclaredSubject(bytes: Uint8Array): DeclaredSubject | undefined {
  const length = bytes.byteLength;
  if (length === 0 || bytes[0] !== OPEN_OBJECT || !isUtf8(bytes)) return undefined;
  const maxDepth = SIGNED_MANIFEST_PARSE_LIMITS.maxDepth;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Per open container (index depth - 1): where its last key started and ended (-1 before the first key of an
  // object, -2 for an array).
  const keyStarts: number[] = [];
  const keyEnds: number[] = [];
  let depth = 0;
  let nameStart = -1;
  let nameEnd = -1;
  let versionStart = -1;
  let versionEnd = -1;
  let i = 0;
  // Read one value at i, then what follows it, until the top-level object closes.
  for (;;) {
    let code = bytes[i];
    if (code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09) {
      i = skipWhitespace(bytes, i);
      code = bytes[i];
    }
    if (code === QUOTE) {
      const end = skipString(bytes, view, i + 1);
      if (end < 0) return undefined;
      if (depth === 1) {
        const key = keyStarts[0] as number;
        const keyLength = (keyEnds[0] as number) - key;
        if (keyLength === 4 && equalsAt(bytes, key, NAME_KEY)) {
          nameStart = i + 1;
          nameEnd = end;
        } else if (keyLength === 7 && equalsAt(bytes, key, VERSION_KEY)) {
          versionStart = i + 1;
          versionEnd = end;
        }
      }
      i = end + 1;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (depth >= maxDepth) return undefined;
      i++;
      if ((bytes[i] as number) <= 0x20) i = skipWhitespace(bytes, i);
      const close = code === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
      if (bytes[i] === close) {
        i++;
      } else {
        keyStarts[depth] = code === OPEN_OBJECT ? -1 : -2;
        keyEnds[depth] = -1;
        depth++;
        if (code === OPEN_OBJECT) {
          i = readKey(bytes, i, depth - 1, keyStarts, keyEnds);
          if (i < 0) return undefined;
        }
        continue;
      }
    } else if (code === 0x74 /* t */) {
      if (bytes[i + 1] !== 0x72 || bytes[i + 2] !== 0x75 || bytes[i + 3] !== 0x65) return undefined;
      i += 4;
    } else if (code === 0x66 /* f */) {
      if (bytes[i + 1] !== 0x61 || bytes[i + 2] !== 0x6c || bytes[i + 3] !== 0x73 || bytes[i + 4] !== 0x65)
        return undefined;
      i += 5;
    } else if (code === 0x6e /* n */) {
      if (bytes[i + 1] !== 0x75 || bytes[i + 2] !== 0x6c || bytes[i + 3] !== 0x6c) return undefined;
      i += 4;
    } else {
      i = skipNumber(bytes, i);
      if (i < 0) return undefined;
    }
    // After a value: a comma and the next member or element, or the end of containers.
    for (;;) {
      if (depth === 0) {
        if (skipWhitespace(bytes, i) !== length || nameStart < 0 || versionStart < 0) return undefined;
        return readSubject(bytes, nameStart, nameEnd, versionStart, versionEnd);
      }
      let next = bytes[i];
      if (next === 0x20 || next === 0x0a || next === 0x0d || next === 0x09) {
        i = skipWhitespace(bytes, i);
        next = bytes[i];
      }
      const inObject = (keyStarts[depth - 1] as number) !== -2;
      if (next === COMMA) {
        i++;
        if ((bytes[i] as number) <= 0x20) i = skipWhitespace(bytes, i);
        if (inObject) {
          i = readKey(bytes, i, depth - 1, keyStarts, keyEnds);
          if (i < 0) return undefined;
        }
        break;
      }
      if (next !== (inObject ? CLOSE_OBJECT : CLOSE_ARRAY)) return undefined;
      depth--;
      i++;
    }
  }
}

/** The name and version strings (no escapes in them: then the bytes between the quotes are the strings). */
function readSubject(
  bytes: Uint8Array,
  nameStart: number,
  nameEnd: number,
  versionStart: number,
  versionEnd: number,
): DeclaredSubject | undefined {
  if (bytes.subarray(nameStart, nameEnd).includes(BACKSLASH)) return undefined;
  if (bytes.subarray(versionStart, versionEnd).includes(BACKSLASH)) return undefined;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    name: buffer.toString('utf8', nameStart, nameEnd),
    version: buffer.toString('utf8', versionStart, versionEnd),
  };
}

function skipWhitespace(bytes: Uint8Array, from: number): number {
  let i = from;
  if ((bytes[i] as number) > 0x20) return i;
  for (;;) {
    const c = bytes[i];
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else return i;
  }
}

/**
 * Read `"key"` and the colon after it at `from`, as the next key of the object at `slot`: -1 unless the key has no
 * escape and sorts after the object's previous key; else the position after the colon.
 */
function readKey(bytes: Uint8Array, from: number, slot: number, starts: number[], ends: number[]): number {
  if (bytes[from] !== QUOTE) return -1;
  const start = from + 1;
  let i = start;
  for (;;) {
    const c = bytes[i];
    if (c === QUOTE) break;
    if (c === undefined || c === BACKSLASH || c < 0x20) return -1;
    i++;
  }
  const previousStart = starts[slot] as number;
  if (previousStart >= 0 && !sortsAfter(bytes, start, i, previousStart, ends[slot] as number)) return -1;
  starts[slot] = start;
  ends[slot] = i;
  i++;
  if (bytes[i] === COLON) return i + 1;
  i = skipWhitespace(bytes, i);
  return bytes[i] === COLON ? i + 1 : -1;
}

/** bytes[start, end) is greater than bytes[previousStart, previousEnd) byte by byte (so not equal). */
function sortsAfter(
  bytes: Uint8Array,
  start: number,
  end: number,
  previousStart: number,
  previousEnd: number,
): boolean {
  const common = Math.min(end - start, previousEnd - previousStart);
  for (let k = 0; k < common; k++) {
    const a = bytes[start + k] as number;
    const b = bytes[previousStart + k] as number;
    if (a !== b) return a > b;
  }
  return end - start > previousEnd - previousStart;
}

/**
 * The position of the closing quote of a string whose content starts at `from`; -1 for a `\u` escape, a control
 * character or the end of the bytes (the strict parser decides those). Other escapes are RFC 8259 §7's. Four bytes
 * at a time while none of them is a quote, a backslash or below 0x20 (the "has a byte less than n" word test).
 */
function skipString(bytes: Uint8Array, view: DataView, from: number): number {
  const wordsEnd = bytes.byteLength - 4;
  let i = from;
  for (;;) {
    while (i <= wordsEnd) {
      const word = view.getInt32(i, true);
      const quotes = word ^ 0x22222222;
      const backslashes = word ^ 0x5c5c5c5c;
      const found =
        ((quotes - 0x01010101) & ~quotes) | ((backslashes - 0x01010101) & ~backslashes) | ((word - 0x20202020) & ~word);
      if ((found & 0x80808080) !== 0) break;
      i += 4;
    }
    const c = bytes[i];
    if (c === QUOTE) return i;
    if (c === undefined || c < 0x20) return -1;
    if (c === BACKSLASH) {
      const e = bytes[i + 1];
      // " \ / b f n r t
      if (e !== 0x22 && e !== 0x5c && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74)
        return -1;
      i += 2;
    } else {
      i++;
    }
  }
}

/** The end of an RFC 8259 §6 number at `from` of at most 15 characters without an exponent; -1 otherwise. */
function skipNumber(bytes: Uint8Array, from: number): number {
  let i = from;
  if (bytes[i] === 0x2d /* - */) i++;
  const first = bytes[i];
  if (first === 0x30) i++;
  else if (first !== undefined && first >= 0x31 && first <= 0x39) i = skipDigits(bytes, i + 1);
  else return -1;
  if (bytes[i] === 0x2e /* . */) {
    const digits = i + 1;
    i = skipDigits(bytes, digits);
    if (i === digits) return -1;
  }
  const next = bytes[i];
  if (next === 0x65 || next === 0x45 || i - from > MAX_PLAIN_NUMBER_LENGTH) return -1;
  return i;
}

function skipDigits(bytes: Uint8Array, from: number): number {
  let i = from;
  for (;;) {
    const c = bytes[i];
    if (c !== undefined && c >= 0x30 && c <= 0x39) i++;
    else return i;
  }
}

function equalsAt(bytes: Uint8Array, at: number, expected: readonly number[]): boolean {
  for (let k = 0; k < expected.length; k++) if (bytes[at + k] !== expected[k]) return false;
  return true;
}

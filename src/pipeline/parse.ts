// Stage 1: strict parse of untrusted bytes (RFC 8259 grammar, I-JSON RFC 7493 restrictions, size and depth limits).
// Over 400 lines on purpose: one recursive-descent parser over one buffer; its parts share the cursor and limits.

import { ToolsealError } from '../core/errors.ts';
import { setOwn, type JsonObject, type JsonValue } from '../core/json.ts';
import { formatPointer } from '../core/json-pointer.ts';
import { truncateText } from '../core/text.ts';

export interface ParseLimits {
  /** Largest accepted input, in bytes. */
  maxBytes: number;
  /** Deepest accepted nesting of arrays and objects (the root container is depth 1). */
  maxDepth: number;
}

export const defaultParseLimits: ParseLimits = { maxBytes: 1024 * 1024, maxDepth: 64 };

/** What the parser noticed on the way, so later stages can skip work they do not need. */
export interface ParseResult {
  value: JsonValue;
  /** Some object has a `$ref`, `$dynamicRef` or `$recursiveRef` member (anywhere). */
  hasRefKeyword: boolean;
  /**
   * Some string or key holds a character at or above U+0300. Text below U+0300 is always
   * NFC-stable (no combining mark or decomposable singleton lies below it), so stage 4 skips it.
   */
  hasNonLatinText: boolean;
  /** Pointer of the first `_host_meta` key, if any. */
  reservedKeyPointer: string | undefined;
}

const RESERVED_HOST_KEY = '_host_meta';
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decode and parse `bytes`. Refuses (with a typed error and pointer) everything
 * docs/design.md's stage 1 lists: invalid UTF-8 or a BOM, duplicate keys, lone
 * surrogates, integer literals beyond ±(2^53−1), overflow, depth and size limits.
 */
export function parseStrict(bytes: Uint8Array, limits: ParseLimits = defaultParseLimits): ParseResult {
  if (bytes.byteLength > limits.maxBytes) {
    throw new ToolsealError('TOO_LARGE', `manifest is ${bytes.byteLength} bytes; the limit is ${limits.maxBytes}`);
  }
  // RFC 8259 §8.1: implementations MUST NOT add a BOM; we refuse one rather than strip it.
  if (bytes.byteLength >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new ToolsealError('INVALID_UTF8', 'a UTF-8 byte order mark is not allowed');
  }
  let text: string;
  try {
    text = utf8Decoder.decode(bytes);
  } catch (cause) {
    throw new ToolsealError(
      'INVALID_UTF8',
      `not valid UTF-8 (first bad byte at offset ${firstInvalidUtf8Offset(bytes)})`,
      { cause },
    );
  }
  return new StrictParser(text, limits.maxDepth).parseDocument();
}

/** Parse a JSON text already held as a string (used on our own canonical output). */
export function parseStrictText(text: string, maxDepth = defaultParseLimits.maxDepth): JsonValue {
  return new StrictParser(text, maxDepth).parseDocument().value;
}

class StrictParser {
  private index = 0;
  private depth = 0;
  private readonly path: (string | number)[] = [];
  private hasRefKeyword = false;
  private hasNonLatinText = false;
  private reservedKeyPointer: string | undefined;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  parseDocument(): ParseResult {
    this.skipWhitespace();
    if (this.index >= this.text.length) this.fail('empty document');
    const value = this.parseValue();
    this.skipWhitespace();
    if (this.index < this.text.length) this.fail('unexpected data after the JSON value');
    return {
      value,
      hasRefKeyword: this.hasRefKeyword,
      hasNonLatinText: this.hasNonLatinText,
      reservedKeyPointer: this.reservedKeyPointer,
    };
  }

  private parseValue(): JsonValue {
    const code = this.text.charCodeAt(this.index);
    switch (code) {
      case 0x7b /* { */:
        return this.parseObject();
      case 0x5b /* [ */:
        return this.parseArray();
      case 0x22 /* " */:
        return this.parseString();
      case 0x74 /* t */:
        return this.parseLiteral('true', true);
      case 0x66 /* f */:
        return this.parseLiteral('false', false);
      case 0x6e /* n */:
        return this.parseLiteral('null', null);
      default:
        if (code === 0x2d || (code >= 0x30 && code <= 0x39)) return this.parseNumber();
        return this.fail(Number.isNaN(code) ? 'unexpected end of input' : `unexpected character ${describeChar(code)}`);
    }
  }

  private enterContainer(): void {
    this.depth++;
    if (this.depth > this.maxDepth) {
      throw new ToolsealError('DEPTH_LIMIT', `nesting deeper than ${this.maxDepth} levels`, {
        pointer: this.currentPointer(),
      });
    }
  }

  private parseObject(): JsonObject {
    this.enterContainer();
    this.index++; // {
    const result: JsonObject = {};
    const pathSlot = this.depth - 1;
    this.skipWhitespace();
    if (this.text.charCodeAt(this.index) === 0x7d /* } */) {
      this.index++;
      this.depth--;
      return result;
    }
    for (;;) {
      // While a key is read, errors point at this object, not at the previous member.
      this.path.length = pathSlot;
      if (this.text.charCodeAt(this.index) !== 0x22) this.fail('expected a string key');
      const key = this.parseString();
      this.path[pathSlot] = key;
      this.path.length = pathSlot + 1;
      if (Object.hasOwn(result, key)) {
        // RFC 7493 §2.3: member names MUST be unique (identical duplicates too).
        throw new ToolsealError('DUPLICATE_KEY', `duplicate key ${JSON.stringify(key)}`, {
          pointer: this.currentPointer(),
        });
      }
      this.noteKey(key);
      this.skipWhitespace();
      if (this.text.charCodeAt(this.index) !== 0x3a /* : */) this.fail("expected ':' after a key");
      this.index++;
      this.skipWhitespace();
      setOwn(result, key, this.parseValue());
      this.skipWhitespace();
      const next = this.text.charCodeAt(this.index);
      if (next === 0x2c /* , */) {
        this.index++;
        this.skipWhitespace();
        continue;
      }
      if (next === 0x7d /* } */) {
        this.index++;
        break;
      }
      this.fail("expected ',' or '}'");
    }
    this.path.length = pathSlot;
    this.depth--;
    return result;
  }

  private noteKey(key: string): void {
    const first = key.charCodeAt(0);
    if (first === 0x24 /* $ */ && (key === '$ref' || key === '$dynamicRef' || key === '$recursiveRef')) {
      this.hasRefKeyword = true;
    } else if (first === 0x5f /* _ */ && key === RESERVED_HOST_KEY && this.reservedKeyPointer === undefined) {
      this.reservedKeyPointer = this.currentPointer();
    }
  }

  private parseArray(): JsonValue[] {
    this.enterContainer();
    this.index++; // [
    const result: JsonValue[] = [];
    const pathSlot = this.depth - 1;
    this.skipWhitespace();
    if (this.text.charCodeAt(this.index) === 0x5d /* ] */) {
      this.index++;
      this.depth--;
      return result;
    }
    for (;;) {
      this.path[pathSlot] = result.length;
      this.path.length = pathSlot + 1;
      result.push(this.parseValue());
      this.skipWhitespace();
      const next = this.text.charCodeAt(this.index);
      if (next === 0x2c /* , */) {
        this.index++;
        this.skipWhitespace();
        continue;
      }
      if (next === 0x5d /* ] */) {
        this.index++;
        break;
      }
      this.fail("expected ',' or ']'");
    }
    this.path.length = pathSlot;
    this.depth--;
    return result;
  }

  private parseString(): string {
    const text = this.text;
    const start = ++this.index; // opening quote
    let i = start;
    let highest = 0;
    // Fast path: no escapes.
    for (;;) {
      const code = text.charCodeAt(i);
      if (code === 0x22) {
        this.index = i + 1;
        if (highest >= 0x300) this.hasNonLatinText = true;
        return text.slice(start, i);
      }
      if (code === 0x5c || code < 0x20 || Number.isNaN(code)) break;
      if (code > highest) highest = code;
      i++;
    }
    this.hasNonLatinText = true; // escapes are rare: let stage 4 look at this document
    let result = text.slice(start, i);
    for (;;) {
      const code = text.charCodeAt(i);
      if (Number.isNaN(code)) {
        this.index = i;
        this.fail('unterminated string');
      }
      if (code === 0x22) {
        this.index = i + 1;
        return result;
      }
      if (code < 0x20) {
        this.index = i;
        this.fail(`unescaped control character ${describeChar(code)} in a string`);
      }
      if (code !== 0x5c) {
        const runStart = i;
        while (i < text.length) {
          const c = text.charCodeAt(i);
          if (c === 0x22 || c === 0x5c || c < 0x20) break;
          i++;
        }
        result += text.slice(runStart, i);
        continue;
      }
      const escaped = text.charCodeAt(i + 1);
      switch (escaped) {
        case 0x22:
          result += '"';
          break;
        case 0x5c:
          result += '\\';
          break;
        case 0x2f:
          result += '/';
          break;
        case 0x62:
          result += '\b';
          break;
        case 0x66:
          result += '\f';
          break;
        case 0x6e:
          result += '\n';
          break;
        case 0x72:
          result += '\r';
          break;
        case 0x74:
          result += '\t';
          break;
        case 0x75 /* u */:
          {
            const unit = this.readHex4(i + 2);
            if (unit >= 0xd800 && unit <= 0xdbff) {
              // RFC 8259 §8.2 / RFC 7493 §2.1: a high surrogate must be followed by an escaped low surrogate.
              const low =
                text.charCodeAt(i + 6) === 0x5c && text.charCodeAt(i + 7) === 0x75 ? this.readHex4(i + 8) : -1;
              if (low < 0xdc00 || low > 0xdfff) this.loneSurrogate(unit, i);
              result += String.fromCharCode(unit, low);
              i += 12;
              continue;
            }
            if (unit >= 0xdc00 && unit <= 0xdfff) this.loneSurrogate(unit, i);
            result += String.fromCharCode(unit);
            i += 6;
            continue;
          }
        default:
          this.index = i;
          this.fail('invalid escape sequence');
      }
      i += 2;
    }
  }

  private readHex4(at: number): number {
    let value = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.text.charCodeAt(at + k);
      let digit: number;
      if (c >= 0x30 && c <= 0x39) digit = c - 0x30;
      else if (c >= 0x41 && c <= 0x46) digit = c - 0x37;
      else if (c >= 0x61 && c <= 0x66) digit = c - 0x57;
      else {
        this.index = at + k;
        return this.fail('invalid \\u escape');
      }
      value = value * 16 + digit;
    }
    return value;
  }

  private loneSurrogate(unit: number, at: number): never {
    this.index = at;
    throw new ToolsealError('LONE_SURROGATE', `lone surrogate \\u${unit.toString(16).toUpperCase()} (RFC 7493 §2.1)`, {
      pointer: this.currentPointer(),
    });
  }

  private parseNumber(): number {
    const text = this.text;
    const start = this.index;
    let i = start;
    if (text.charCodeAt(i) === 0x2d) i++;
    const firstDigit = text.charCodeAt(i);
    if (firstDigit === 0x30) {
      i++;
    } else if (firstDigit >= 0x31 && firstDigit <= 0x39) {
      do i++;
      while (isDigit(text.charCodeAt(i)));
    } else {
      this.index = i;
      this.fail('invalid number');
    }
    let isIntegerLiteral = true;
    if (text.charCodeAt(i) === 0x2e /* . */) {
      isIntegerLiteral = false;
      i++;
      if (!isDigit(text.charCodeAt(i))) {
        this.index = i;
        this.fail('invalid number: digits must follow the decimal point');
      }
      do i++;
      while (isDigit(text.charCodeAt(i)));
    }
    const mantissaEnd = i;
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      isIntegerLiteral = false;
      i++;
      const sign = text.charCodeAt(i);
      if (sign === 0x2b || sign === 0x2d) i++;
      if (!isDigit(text.charCodeAt(i))) {
        this.index = i;
        this.fail('invalid number: digits must follow the exponent');
      }
      do i++;
      while (isDigit(text.charCodeAt(i)));
    }
    this.index = i;
    const literal = text.slice(start, i);
    const value = Number(literal);
    if (isIntegerLiteral) {
      // RFC 7493 §2.2: integers beyond ±(2^53−1) do not survive a JavaScript (or any double) round trip.
      if (i - start > 15 && !Number.isSafeInteger(value)) {
        throw new ToolsealError('UNSAFE_NUMBER', `integer ${literal} is outside ±(2^53−1)`, {
          pointer: this.currentPointer(),
        });
      }
      return value || 0; // -0 is 0, as JCS writes it
    }
    if (!Number.isFinite(value)) {
      throw new ToolsealError('UNSAFE_NUMBER', `number ${truncateText(literal, 40)} overflows an IEEE-754 double`, {
        pointer: this.currentPointer(),
      });
    }
    if (value === 0) {
      if (/[1-9]/.test(text.slice(start, mantissaEnd))) {
        throw new ToolsealError('UNSAFE_NUMBER', `number ${truncateText(literal, 40)} underflows to zero`, {
          pointer: this.currentPointer(),
        });
      }
      return 0; // -0.0 and 0e5 are 0: JCS writes them as "0" (RFC 8785 §3.2.2.3)
    }
    // RFC 8785 §3.2.2.3 writes integral values below 1e21 as integer literals: beyond ±(2^53−1) such a
    // literal could not be parsed back (it is refused above), so the value is refused whatever its form.
    if (Number.isInteger(value) && !Number.isSafeInteger(value) && Math.abs(value) < 1e21) {
      throw new ToolsealError('UNSAFE_NUMBER', `number ${truncateText(literal, 40)} is an integer outside ±(2^53−1)`, {
        pointer: this.currentPointer(),
      });
    }
    return value;
  }

  private parseLiteral<T extends JsonValue>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.index)) this.fail('invalid literal');
    this.index += word.length;
    return value;
  }

  private skipWhitespace(): void {
    const text = this.text;
    let i = this.index;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.index = i;
  }

  private currentPointer(): string {
    return formatPointer(this.path.slice(0, Math.max(0, this.depth)));
  }

  private fail(reason: string): never {
    const { line, column } = lineAndColumn(this.text, this.index);
    throw new ToolsealError('INVALID_JSON', `${reason} at line ${line}, column ${column}`, {
      pointer: this.currentPointer(),
    });
  }
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function describeChar(code: number): string {
  return code >= 0x21 && code <= 0x7e
    ? `'${String.fromCharCode(code)}'`
    : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

function lineAndColumn(text: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < index && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: index - lineStart + 1 };
}

/** RFC 3629 §4: find the offset of the first byte that breaks UTF-8, for the error message. */
function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    let need: number;
    let min: number;
    if (b < 0x80) {
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else {
      return i;
    }
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return i;
}

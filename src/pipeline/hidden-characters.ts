// Stage 4b (after names): characters a person reviewing a manifest cannot see but the model reads
// (docs/manifest-format.md, "Hidden characters and confusable names").
//
// - Unicode tag characters U+E0000–U+E007F are refused anywhere: in keys and string values at any depth,
//   descriptions and schemas included. They spell invisible ASCII ("ASCII smuggling") that models read.
// - Tool names (their NFC form, the one that is signed) may hold no bidirectional control (Bidi_Control: U+061C,
//   U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and no Default_Ignorable_Code_Point (zero-width characters,
//   U+00AD, U+034F, variation selectors, U+FEFF, …).
// - Every string and key of the `server` member (issue 27) may hold no control, bidi, tag or default-ignorable
//   character: hosts build command lines, environments and URLs from them.
// Other free text stays byte-exact: descriptions may hold bidi controls and zero-width characters.

import { ToolsealError } from '../core/errors.ts';
import type { JsonValue } from '../core/json.ts';
import { formatPointer } from '../core/json-pointer.ts';

/** A tag character, as its UTF-16 surrogate pair (U+E0000–U+E007F is \uDB40\uDC00 to \uDB40\uDC7F). */
const TAG_CHARACTER = /\udb40[\udc00-\udc7f]/;
const HIDDEN_IN_NAME = /[\p{Bidi_Control}\p{Default_Ignorable_Code_Point}]/u;
const BIDI_CONTROL = /\p{Bidi_Control}/u;

/**
 * Refuse hidden characters with HIDDEN_CHARACTER and the pointer of the offending string or key.
 * `document` is the manifest as parsed (pointers are the vendor's); `toolNames` are the NFC names, in tool order.
 * `scanAllText` is the parser's `hasNonLatinText`: without it no string holds a character at or above U+0300, so
 * no tag character either, and the walk is skipped (names are always checked: U+00AD lies below U+0300).
 */
export function assertNoHiddenCharacters(
  document: JsonValue,
  toolNames: readonly string[],
  scanAllText: boolean,
): void {
  if (scanAllText) walkForTags(document, []);
  toolNames.forEach((name, index) => {
    const match = HIDDEN_IN_NAME.exec(name);
    if (match === null) return;
    const char = match[0];
    const kind = BIDI_CONTROL.test(char) ? 'a bidirectional control' : 'an invisible (default-ignorable) character';
    throw new ToolsealError(
      'HIDDEN_CHARACTER',
      `tool name contains ${describeCodePoint(char)}, ${kind}, at character ${[...name.slice(0, match.index)].length + 1}: tool names may hold no bidi control and no zero-width or other default-ignorable character`,
      { pointer: formatPointer(['tools', index, 'name']) },
    );
  });
}

function walkForTags(value: JsonValue, tokens: (string | number)[]): void {
  if (typeof value === 'string') {
    if (TAG_CHARACTER.test(value)) throw tagRefusal(value, tokens, 'string');
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      tokens.push(index);
      walkForTags(value[index] as JsonValue, tokens);
      tokens.pop();
    }
    return;
  }
  for (const key of Object.keys(value)) {
    tokens.push(key);
    if (TAG_CHARACTER.test(key)) throw tagRefusal(key, tokens, 'key');
    walkForTags(value[key] as JsonValue, tokens);
    tokens.pop();
  }
}

function tagRefusal(text: string, tokens: (string | number)[], what: 'string' | 'key'): ToolsealError {
  const match = TAG_CHARACTER.exec(text) as RegExpExecArray;
  return new ToolsealError(
    'HIDDEN_CHARACTER',
    `${what} contains ${describeCodePoint(match[0])}, a Unicode tag character (invisible, yet read by models), at character ${[...text.slice(0, match.index)].length + 1}: tag characters U+E0000 to U+E007F are refused anywhere in a manifest`,
    { pointer: formatPointer(tokens) },
  );
}

function describeCodePoint(char: string): string {
  return `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Characters refused in every string and key of a manifest's `server` member (issue 27): C0/C1 controls, bidi
 * controls, tag characters and default-ignorable (zero-width) characters. A host turns these strings into a command
 * line, an environment or a URL, where an invisible character changes what runs.
 */
const HIDDEN_IN_SERVER = /[\p{Cc}\p{Bidi_Control}\p{Default_Ignorable_Code_Point}\u{E0000}-\u{E007F}]/u;

/** Refuse with HIDDEN_CHARACTER (pointer under /server) any string or key of `server` that holds a hidden character. */
export function assertNoHiddenCharactersInServer(server: JsonValue): void {
  walkServer(server, ['server']);
}

function walkServer(value: JsonValue, tokens: (string | number)[]): void {
  if (typeof value === 'string') {
    checkServerText(value, tokens, 'string');
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      walkServer(item, [...tokens, index]);
    });
    return;
  }
  for (const key of Object.keys(value)) {
    checkServerText(key, [...tokens, key], 'key');
    walkServer(value[key] as JsonValue, [...tokens, key]);
  }
}

function checkServerText(text: string, tokens: (string | number)[], what: 'string' | 'key'): void {
  const match = HIDDEN_IN_SERVER.exec(text);
  if (match === null) return;
  throw new ToolsealError(
    'HIDDEN_CHARACTER',
    `${what} contains ${describeCodePoint(match[0])} at character ${[...text.slice(0, match.index)].length + 1}: no string of the server member may hold a control, bidi control, tag or zero-width character`,
    { pointer: formatPointer(tokens) },
  );
}

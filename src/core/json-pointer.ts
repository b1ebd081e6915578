// JSON Pointer (RFC 6901): build a pointer from reference tokens, escaping `~` and `/` (§3, §4).

/** RFC 6901 §3: encode one reference token. */
export function escapePointerToken(token: string | number): string {
  const text = String(token);
  return text.includes('~') || text.includes('/') ? text.replace(/~/g, '~0').replace(/\//g, '~1') : text;
}

/** RFC 6901: build a pointer from tokens ("" is the whole document). */
export function formatPointer(tokens: readonly (string | number)[]): string {
  let pointer = '';
  for (const token of tokens) pointer += `/${escapePointerToken(token)}`;
  return pointer;
}

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

/**
 * RFC 6901 §4: the reference tokens of `pointer` ("" has none), or undefined when it is not a pointer (it does not
 * start with `/`, or a `~` is not followed by `0` or `1`).
 */
export function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) return undefined;
  const tokens = pointer.slice(1).split('/');
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (!token.includes('~')) continue;
    if (/~(?![01])/.test(token)) return undefined;
    tokens[i] = token.replace(/~1/g, '/').replace(/~0/g, '~');
  }
  return tokens;
}

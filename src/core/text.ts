// Small text helpers used in messages and stable orderings (RFC 8785 §3.2.3 sorts keys by UTF-16 code units).

/** Order two strings by their UTF-16 code units (what `<` does on JavaScript strings), as JCS sorts keys. */
export function compareUtf16(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** `text` cut to at most `max` characters, ending in `...` when cut (for quoting untrusted values in messages). */
export function truncateText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

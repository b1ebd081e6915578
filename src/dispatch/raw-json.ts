// Where a value sits in a JSON text (RFC 8259 §2–§7), to read a literal exactly as it was sent (issue §1: an amount
// must be an integer literal, and `100.0` or `1e2` parse to the same number as `100`). The text must already have
// passed the strict parser (no duplicate keys, valid grammar): the scanner only finds boundaries.

/** The text of the value at `tokens` (RFC 6901 reference tokens) inside the JSON `text`, or undefined if absent. */
export function findValueText(text: string, tokens: readonly string[]): string | undefined {
  let start = skipWhitespace(text, 0);
  let end = skipValue(text, start);
  for (const token of tokens) {
    const span = text[start] === '{' ? findMember(text, start, token) : findElement(text, start, token);
    if (span === undefined) return undefined;
    [start, end] = span;
  }
  return text.slice(start, end);
}

function findMember(text: string, start: number, key: string): [number, number] | undefined {
  let position = skipWhitespace(text, start + 1);
  while (text[position] === '"') {
    const keyEnd = skipString(text, position);
    const raw = text.slice(position + 1, keyEnd - 1);
    const name = raw.includes('\\') ? (JSON.parse(text.slice(position, keyEnd)) as string) : raw;
    const valueStart = skipWhitespace(text, skipWhitespace(text, keyEnd) + 1);
    const valueEnd = skipValue(text, valueStart);
    if (name === key) return [valueStart, valueEnd];
    position = skipWhitespace(text, valueEnd);
    if (text[position] !== ',') return undefined;
    position = skipWhitespace(text, position + 1);
  }
  return undefined;
}

function findElement(text: string, start: number, token: string): [number, number] | undefined {
  if (text[start] !== '[' || !/^(?:0|[1-9][0-9]*)$/.test(token)) return undefined;
  const wanted = Number(token);
  let position = skipWhitespace(text, start + 1);
  for (let index = 0; text[position] !== ']' && position < text.length; index++) {
    const end = skipValue(text, position);
    if (index === wanted) return [position, end];
    position = skipWhitespace(text, end);
    if (text[position] !== ',') return undefined;
    position = skipWhitespace(text, position + 1);
  }
  return undefined;
}

/** The end of the value starting at `start` (no recursion: containers are skipped by counting brackets). */
function skipValue(text: string, start: number): number {
  const first = text[start];
  if (first === '"') return skipString(text, start);
  if (first !== '{' && first !== '[') {
    let i = start;
    while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
    return i;
  }
  let depth = 0;
  let i = start;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      i = skipString(text, i);
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return i;
}

function skipString(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) i += 2;
    else if (c === 0x22) return i + 1;
    else i++;
  }
  return i;
}

function skipWhitespace(text: string, start: number): number {
  let i = start;
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  return i;
}

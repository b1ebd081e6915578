// Where values sit in a JSON text (RFC 8259 §2–§7), so the guard can change one value and keep every other byte.
//
// The text must already have been parsed (JSON.parse): the scanner only finds boundaries and answers undefined on
// anything unexpected. It does not recurse, so a deeply nested value costs no stack. As JSON.parse does, the last
// of duplicate keys wins.

/** A value's place in a text: `text.slice(start, end)`. */
export interface TextSpan {
  start: number;
  end: number;
}

/** The span of the one value that makes up `text` (whitespace around it excluded). */
export function findRootSpan(text: string): TextSpan | undefined {
  const start = skipWhitespace(text, 0);
  const end = skipValue(text, start);
  if (end === undefined || skipWhitespace(text, end) !== text.length) return undefined;
  return { start, end };
}

/** The spans of the elements of the array at `span`, in order; undefined when it is not an array. */
export function findElementSpans(text: string, span: TextSpan): TextSpan[] | undefined {
  if (text[span.start] !== '[') return undefined;
  const elements: TextSpan[] = [];
  let position = skipWhitespace(text, span.start + 1);
  if (text[position] === ']') return elements;
  for (;;) {
    const end = skipValue(text, position);
    if (end === undefined) return undefined;
    elements.push({ start: position, end });
    position = skipWhitespace(text, end);
    if (text[position] === ']') return elements;
    if (text[position] !== ',') return undefined;
    position = skipWhitespace(text, position + 1);
  }
}

/** The span of the value of member `key` of the object at `span` (the last such member); undefined when absent. */
export function findMemberSpan(text: string, span: TextSpan, key: string): TextSpan | undefined {
  if (text[span.start] !== '{') return undefined;
  let found: TextSpan | undefined;
  let position = skipWhitespace(text, span.start + 1);
  if (text[position] === '}') return undefined;
  for (;;) {
    const keyEnd = text[position] === '"' ? skipString(text, position) : undefined;
    if (keyEnd === undefined) return undefined;
    const colon = skipWhitespace(text, keyEnd);
    if (text[colon] !== ':') return undefined;
    const valueStart = skipWhitespace(text, colon + 1);
    const valueEnd = skipValue(text, valueStart);
    if (valueEnd === undefined) return undefined;
    if ((JSON.parse(text.slice(position, keyEnd)) as string) === key) found = { start: valueStart, end: valueEnd };
    position = skipWhitespace(text, valueEnd);
    if (text[position] === '}') return found;
    if (text[position] !== ',') return undefined;
    position = skipWhitespace(text, position + 1);
  }
}

/** RFC 8259 §2: space, tab, line feed, carriage return. */
function skipWhitespace(text: string, position: number): number {
  let at = position;
  while (at < text.length && (text[at] === ' ' || text[at] === '\t' || text[at] === '\n' || text[at] === '\r')) at++;
  return at;
}

/** The end of the string starting at `position` (its opening quote), after the closing quote. */
function skipString(text: string, position: number): number | undefined {
  for (let at = position + 1; at < text.length; at++) {
    if (text[at] === '\\') at++;
    else if (text[at] === '"') return at + 1;
  }
  return undefined;
}

/** The end of the value starting at `position`: a string, an object or array (by bracket depth), or a literal. */
function skipValue(text: string, position: number): number | undefined {
  const first = text[position];
  if (first === undefined) return undefined;
  if (first === '"') return skipString(text, position);
  if (first !== '{' && first !== '[') {
    let at = position;
    while (at < text.length && /[0-9A-Za-z+.-]/.test(text[at]!)) at++;
    return at === position ? undefined : at;
  }
  let depth = 0;
  for (let at = position; at < text.length; at++) {
    const char = text[at];
    if (char === '"') {
      const end = skipString(text, at);
      if (end === undefined) return undefined;
      at = end - 1;
    } else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) return at + 1;
    }
  }
  return undefined;
}

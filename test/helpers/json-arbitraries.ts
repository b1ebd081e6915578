// fast-check arbitraries for JSON values (RFC 8259 §3), shared by the property suites: each suite gives the numbers,
// strings and keys its claim is about; the tree around them is built here once.

import fc from 'fast-check';
import type { JsonValue } from '../../src/core/json.ts';

export interface JsonValueParts {
  number: fc.Arbitrary<number>;
  text: fc.Arbitrary<string>;
  key: fc.Arbitrary<string>;
  /** Nesting of arrays and objects (fast-check's maxDepth). */
  maxDepth: number;
  /** Elements of an array and members of an object, at most. */
  maxLength: number;
}

/** Any JSON value built from `parts` (objects without a null prototype, as JSON.parse makes them). */
export function arbitraryJsonValue(parts: JsonValueParts): fc.Arbitrary<JsonValue> {
  const { value } = fc.letrec<{ value: JsonValue }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', maxDepth: parts.maxDepth },
      fc.constant(null),
      fc.boolean(),
      parts.number,
      parts.text,
      fc.array(tie('value'), { maxLength: parts.maxLength }),
      fc.dictionary(parts.key, tie('value'), { maxKeys: parts.maxLength, noNullPrototype: true }),
    ),
  }));
  return value;
}

/**
 * Numbers the strict parser reads back as they are written: no integral value beyond ±(2^53−1) below 1e21, which it
 * refuses as unsafe (RFC 7493 §2.2).
 */
export const isRoundTrippable = (n: number): boolean =>
  !(Number.isInteger(n) && !Number.isSafeInteger(n) && Math.abs(n) < 1e21);

// Every field where two JSON values differ, each with its RFC 6901 JSON pointer and both values: what the version
// diff (src/web/manifest-diff.ts, `toolseal diff`) and `toolseal check` (live-tools.ts) list. Pure.

import { formatPointer } from '../core/json-pointer.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';

/** One field that differs; `undefined` is an absent member. */
export interface FieldChange {
  pointer: string;
  before: JsonValue | undefined;
  after: JsonValue | undefined;
}

/** Deep equality of two JSON values (objects by their members, whatever the key order). */
export function equalJson(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, index) => equalJson(item, b[index]));
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && equalJson(a[key], b[key]))
    );
  }
  return false;
}

/**
 * Append to `out` every change from `before` to `after`, under the pointer `tokens`: objects member by member (the
 * members of `before` first, in their order, then those only `after` has), arrays of equal length item by item;
 * anything else is replaced whole.
 */
export function collectFieldChanges(
  before: JsonValue | undefined,
  after: JsonValue | undefined,
  tokens: (string | number)[],
  out: FieldChange[],
): void {
  if (equalJson(before, after)) return;
  if (isJsonObject(before) && isJsonObject(after)) {
    const keys = [...Object.keys(before), ...Object.keys(after).filter((key) => !Object.hasOwn(before, key))];
    for (const key of keys) collectFieldChanges(ownValue(before, key), ownValue(after, key), [...tokens, key], out);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    for (const [index, item] of before.entries()) collectFieldChanges(item, after[index], [...tokens, index], out);
    return;
  }
  out.push({ pointer: formatPointer(tokens), before, after });
}

function ownValue(object: Record<string, JsonValue>, key: string): JsonValue | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

// JSON value types shared by every pipeline stage, and the small helpers that handle them safely.

export type JsonPrimitive = null | boolean | number | string;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Set an own property, even for the key `__proto__` (a plain assignment would
 * change the object's prototype instead of adding a member).
 */
export function setOwn(target: JsonObject, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

export function hasOwn(target: object, key: string): boolean {
  return Object.hasOwn(target, key);
}

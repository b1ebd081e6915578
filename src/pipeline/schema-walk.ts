// Which members of a JSON Schema hold subschemas (JSON Schema 2020-12 Core §10, Validation §6–9, and draft-07's forms).

import type { JsonObject, JsonValue } from '../core/json.ts';

/** Keywords whose value is one subschema. */
const singleSchemaKeywords = new Set([
  'additionalProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
  'contentSchema',
  'items', // draft-07 also allows an array here; handled below
]);

/** Keywords whose value is an array of subschemas. */
const schemaArrayKeywords = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);

/** Keywords whose value is an object mapping names to subschemas. */
const schemaMapKeywords = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies', // draft-07: a value may also be an array of property names (data)
]);

export type SchemaKeywordShape = 'single' | 'array' | 'map' | 'data';

/** How the value under `keyword` is to be read: as subschema(s), or as data that is never walked. */
export function classifySchemaKeyword(keyword: string): SchemaKeywordShape {
  if (singleSchemaKeywords.has(keyword)) return 'single';
  if (schemaArrayKeywords.has(keyword)) return 'array';
  if (schemaMapKeywords.has(keyword)) return 'map';
  return 'data';
}

/** A subschema is an object or a boolean (2020-12 Core §4.3.1). */
export function isSchemaValue(value: JsonValue | undefined): value is JsonObject | boolean {
  return typeof value === 'boolean' || (typeof value === 'object' && value !== null && !Array.isArray(value));
}

/**
 * Call `visit` for every direct subschema of `schema`, with the path tokens that lead to it.
 * Data keywords (`const`, `enum`, `default`, `examples`, unknown keywords) are never entered.
 */
export function forEachSubschema(
  schema: JsonObject,
  visit: (child: JsonObject | boolean, tokens: (string | number)[]) => void,
): void {
  for (const keyword of Object.keys(schema)) {
    const value = schema[keyword];
    switch (classifySchemaKeyword(keyword)) {
      case 'single':
        if (isSchemaValue(value)) visit(value, [keyword]);
        else if (keyword === 'items' && Array.isArray(value)) visitArray(value, keyword, visit);
        break;
      case 'array':
        if (Array.isArray(value)) visitArray(value, keyword, visit);
        break;
      case 'map':
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          for (const name of Object.keys(value)) {
            const child = value[name];
            if (isSchemaValue(child)) visit(child, [keyword, name]);
          }
        }
        break;
      case 'data':
        break;
    }
  }
}

function visitArray(
  values: JsonValue[],
  keyword: string,
  visit: (child: JsonObject | boolean, tokens: (string | number)[]) => void,
): void {
  values.forEach((child, index) => {
    if (isSchemaValue(child)) visit(child, [keyword, index]);
  });
}

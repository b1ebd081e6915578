// Stage 4: NFC-normalise tool names (refusing collisions) and refuse keys and enum/const strings that are not NFC.

import { ToolsealError } from '../core/errors.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { forEachSubschema, isSchemaValue } from './schema-walk.ts';
import { formatPointer } from '../core/json-pointer.ts';

export interface RenamedTool {
  /** Index of the tool in `tools`. */
  index: number;
  /** The name as the vendor sent it. */
  from: string;
  /** The NFC form that is signed (UAX #15). */
  to: string;
}

export interface NamedTool {
  name: string;
  inputSchema?: JsonValue;
  outputSchema?: JsonValue;
}

/**
 * Return the tools with NFC names (new objects only where a name changed) and the list of renames.
 * Two tools whose names are equal after NFC are refused: a host could not tell which one a call means.
 */
export function normaliseToolNames<T extends NamedTool>(
  tools: readonly T[],
): { tools: T[]; renamedTools: RenamedTool[] } {
  const seen = new Map<string, number>();
  const renamedTools: RenamedTool[] = [];
  const result = tools.map((tool, index) => {
    const normalised = tool.name.normalize('NFC');
    const earlier = seen.get(normalised);
    if (earlier !== undefined) {
      throw new ToolsealError(
        'NAME_COLLISION',
        `tool name ${JSON.stringify(normalised)} is already used by /tools/${earlier}/name${normalised === tool.name ? '' : ' (after NFC normalisation)'}`,
        { pointer: formatPointer(['tools', index, 'name']) },
      );
    }
    seen.set(normalised, index);
    if (normalised === tool.name) return tool;
    renamedTools.push({ index, from: tool.name, to: normalised });
    return { ...tool, name: normalised };
  });
  return { tools: result, renamedTools };
}

/**
 * Refuse any object key (anywhere in the manifest) and any string inside a schema's `enum` or `const`
 * that NFC would change: hosts match arguments against these, and rewriting vendor data could lose
 * information where refusing cannot.
 */
export function assertNfcStable(manifest: JsonObject): void {
  checkKeys(manifest, []);
  const tools = manifest['tools'];
  if (!Array.isArray(tools)) return;
  tools.forEach((tool, index) => {
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) return;
    for (const member of ['inputSchema', 'outputSchema']) {
      const schema = tool[member];
      if (isSchemaValue(schema)) checkSchemaValues(schema, ['tools', index, member]);
    }
  });
}

function checkKeys(value: JsonValue, tokens: (string | number)[]): void {
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      checkKeys(item, [...tokens, index]);
    });
    return;
  }
  for (const key of Object.keys(value)) {
    if (!isNfc(key)) {
      throw new ToolsealError('NOT_NFC', `key ${JSON.stringify(key)} is not in Unicode NFC; send it normalised`, {
        pointer: formatPointer([...tokens, key]),
      });
    }
    checkKeys(value[key] as JsonValue, [...tokens, key]);
  }
}

function checkSchemaValues(schema: JsonObject | boolean, tokens: (string | number)[]): void {
  if (typeof schema === 'boolean') return;
  if ('const' in schema) checkStrings(schema['const'] as JsonValue, [...tokens, 'const']);
  if ('enum' in schema) checkStrings(schema['enum'] as JsonValue, [...tokens, 'enum']);
  forEachSubschema(schema, (child, childTokens) => checkSchemaValues(child, [...tokens, ...childTokens]));
}

function checkStrings(value: JsonValue, tokens: (string | number)[]): void {
  if (typeof value === 'string') {
    if (!isNfc(value)) {
      throw new ToolsealError(
        'NOT_NFC',
        `enum/const string ${JSON.stringify(value)} is not in Unicode NFC; send it normalised`,
        {
          pointer: formatPointer(tokens),
        },
      );
    }
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      checkStrings(item, [...tokens, index]);
    });
  } else for (const key of Object.keys(value)) checkStrings(value[key] as JsonValue, [...tokens, key]);
}

/** Below U+0300 every string is NFC-stable; only look further when a higher code unit is present. */
function isNfc(text: string): boolean {
  return !/[^\u0000-\u02ff]/.test(text) || text.normalize('NFC') === text;
}

// Stage 4: NFC-normalise tool names (rechecking the envelope's name rules on the NFC form, refusing exact and confusable
// collisions, UTS #39 §4) and refuse keys and enum/const strings that are not NFC (docs/manifest-format.md, "Tools").

import { ToolsealError } from '../core/errors.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { forEachSubschema, isSchemaValue } from './schema-walk.ts';
import { formatPointer } from '../core/json-pointer.ts';
import { truncateText } from '../core/text.ts';
import { computeSkeleton } from './confusables.ts';
import { checkToolName } from './envelope.ts';

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
 * Every NFC name that differs from the name sent is checked again against the envelope's tool-name rules (NFC can
 * make a name longer), so the signed name obeys the format. Two tools whose names are equal after NFC, or
 * confusable (equal UTS #39 skeletons: Latin `a` and Cyrillic `а`, `rn` and `m`, a name and the same name with a
 * zero-width joiner), are refused: a host, or the model, could not tell which one a call means.
 */
export function normaliseToolNames<T extends NamedTool>(
  tools: readonly T[],
): { tools: T[]; renamedTools: RenamedTool[] } {
  const seen = new Map<string, number>();
  const skeletons = new Map<string, number>();
  const renamedTools: RenamedTool[] = [];
  const result = tools.map((tool, index) => {
    const normalised = tool.name.normalize('NFC');
    if (normalised !== tool.name) checkToolName(normalised, index);
    const earlier = seen.get(normalised);
    if (earlier !== undefined) {
      throw new ToolsealError(
        'NAME_COLLISION',
        `tool name ${JSON.stringify(normalised)} is already used by /tools/${earlier}/name${normalised === tool.name ? '' : ' (after NFC normalisation)'}`,
        { pointer: formatPointer(['tools', index, 'name']) },
      );
    }
    seen.set(normalised, index);
    const skeleton = computeSkeleton(normalised);
    const lookalike = skeletons.get(skeleton);
    if (lookalike !== undefined) throw confusableCollision(tools, lookalike, normalised, index);
    skeletons.set(skeleton, index);
    if (normalised === tool.name) return tool;
    renamedTools.push({ index, from: tool.name, to: normalised });
    return { ...tool, name: normalised };
  });
  return { tools: result, renamedTools };
}

function confusableCollision(tools: readonly NamedTool[], earlier: number, name: string, index: number): ToolsealError {
  const first = (tools[earlier] as NamedTool).name.normalize('NFC');
  return new ToolsealError(
    'NAME_COLLISION',
    `tool name ${spellOut(name)} at /tools/${index}/name is confusable with ${spellOut(first)} at /tools/${earlier}/name: they look alike (the same Unicode UTS #39 skeleton); rename one of them`,
    { pointer: formatPointer(['tools', index, 'name']) },
  );
}

/** A name quoted with every character outside printable ASCII as a `\uXXXX` escape, so lookalikes show apart. */
function spellOut(name: string): string {
  const quoted = JSON.stringify(name).replace(
    /[^\u0020-\u007e]/g,
    (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return truncateText(quoted, 400);
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

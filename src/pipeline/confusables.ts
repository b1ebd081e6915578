// Stage 4 helper: the UTS #39 §4 skeleton of a string, so tool names that look alike can be refused as a collision.
//
// skeleton(X) (Unicode Technical Standard #39, §4 "Confusable Detection", revision 15.1 and later):
//   1. NFD; 2. remove every Default_Ignorable_Code_Point; 3. replace each code point by its prototype from the
//   confusables data (confusables.txt); 4. NFD again. X and Y are confusable when skeleton(X) === skeleton(Y).
// The data is the npm package `unhomoglyph` (MIT; nodeca), whose data.json is the source → prototype mapping of
// Unicode's confusables.txt 13.0.0 (the Unicode data licence). It is loaded once from node_modules at module
// load: nothing is fetched at run time, and no manifest can make this module load anything.

import { createRequire } from 'node:module';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';

/** The Unicode version of the confusables data shipped by `unhomoglyph` 1.0.6. */
export const CONFUSABLES_DATA_VERSION = '13.0.0';

const prototypes: ReadonlyMap<string, string> = loadPrototypes();

function loadPrototypes(): Map<string, string> {
  const data: unknown = createRequire(import.meta.url)('unhomoglyph/data.json');
  if (!isJsonObject(data)) throw new ToolsealError('INTERNAL', 'the confusables data is not a JSON object');
  const map = new Map<string, string>();
  for (const [source, prototype] of Object.entries(data)) {
    if (typeof prototype !== 'string' || [...source].length !== 1) {
      throw new ToolsealError('INTERNAL', 'the confusables data maps something other than one code point');
    }
    map.set(source, prototype);
  }
  return map;
}

const ASCII_ONLY = /^[\u0000-\u007f]*$/;
const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
/** Prototypes of the few ASCII characters that have one (`0` → `O`, `1` → `l`, `m` → `rn`, …), by char code. */
const ASCII_PROTOTYPES: readonly (string | undefined)[] = Array.from({ length: 0x80 }, (_, code) =>
  prototypes.get(String.fromCharCode(code)),
);

/**
 * The UTS #39 skeleton of `text`. Not for display: `m` becomes `rn`, `0` becomes `O`, Cyrillic `а` becomes Latin
 * `a`, and zero-width characters disappear. ASCII text takes a shortcut with the same result: NFD is the identity
 * on ASCII and no ASCII character is default-ignorable, so only the few mapped characters are replaced.
 */
export function computeSkeleton(text: string): string {
  let mapped = '';
  let copiedUpTo = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0x80) return computeFullSkeleton(text);
    const prototype = ASCII_PROTOTYPES[code];
    if (prototype === undefined) continue;
    mapped += text.slice(copiedUpTo, index) + prototype;
    copiedUpTo = index + 1;
  }
  if (copiedUpTo === 0) return text;
  mapped += text.slice(copiedUpTo);
  return ASCII_ONLY.test(mapped) ? mapped : mapped.normalize('NFD'); // `%` has the prototype `º/₀`
}

function computeFullSkeleton(text: string): string {
  let skeleton = '';
  for (const char of text.normalize('NFD').replace(DEFAULT_IGNORABLE, '')) skeleton += prototypes.get(char) ?? char;
  return skeleton.normalize('NFD');
}

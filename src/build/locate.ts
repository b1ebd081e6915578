// Where a ref's fragment points inside one schema document: an RFC 6901 pointer through schema positions, or a
// plain-name `$anchor` (JSON Schema 2020-12 Core §8.2.2, §8.2.3.1), by the rules the pipeline applies to local refs.

import type { ErrorCode } from '../core/errors.ts';
import { hasOwn, isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { classifySchemaKeyword, forEachSubschema, isSchemaValue } from '../pipeline/schema-walk.ts';

export const anchorPattern = /^[A-Za-z_][-A-Za-z0-9._]*$/;

export interface Located {
  node: JsonObject | boolean;
  /** Where the node sits in its document. */
  tokens: (string | number)[];
  /** Some schema between the document root and the node (both excluded) declares `$id`: an embedded resource. */
  embedded: boolean;
}

/** A refusal raised while locating; the caller adds the site. */
export class LocateError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Evaluate a decoded fragment (`""`, `/json/pointer` or `name`) in `document`. */
export function locateFragment(document: JsonValue, fragment: string, anchors: () => Map<string, Located>): Located {
  if (fragment === '' || fragment.startsWith('/')) return evaluatePointer(document, fragment);
  if (!anchorPattern.test(fragment))
    throw new LocateError('UNSUPPORTED_REF', 'the fragment is neither a JSON pointer nor a plain-name anchor');
  const found = anchors().get(fragment);
  if (found === undefined) throw new LocateError('MISSING_REF', `no $anchor ${JSON.stringify(fragment)} there`);
  return found;
}

/** RFC 6901 §4: the walk passes only through schema positions (a pointer into `const`, `default`... names no schema). */
export function evaluatePointer(document: JsonValue, pointer: string): Located {
  let current: JsonValue = document;
  let position: 'schema' | 'other' = 'schema';
  let embedded = false;
  const tokens: (string | number)[] = [];
  for (const raw of pointer === '' ? [] : pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (tokens.length > 0 && isJsonObject(current) && typeof current['$id'] === 'string') embedded = true;
    if (position === 'schema') {
      const shape = classifySchemaKeyword(token);
      if (shape === 'data')
        throw new LocateError(
          'UNSUPPORTED_REF',
          `the pointer enters ${JSON.stringify(token)}, which holds data, not a schema`,
        );
      position = shape === 'single' && !Array.isArray(childOf(current, token)) ? 'schema' : 'other';
    } else {
      position = 'schema';
    }
    if (Array.isArray(current)) {
      const index = /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : -1;
      if (index < 0 || index >= current.length) throw missing();
      current = current[index] as JsonValue;
      tokens.push(index);
    } else if (isJsonObject(current) && hasOwn(current, token)) {
      current = current[token] as JsonValue;
      tokens.push(token);
    } else {
      throw missing();
    }
  }
  if (!isSchemaValue(current))
    throw new LocateError('UNSUPPORTED_REF', 'the pointer names a value that is not a schema');
  return { node: current, tokens, embedded };

  function missing(): LocateError {
    return new LocateError('MISSING_REF', 'the pointer names nothing there');
  }
}

/** Every `$anchor` of a document outside embedded resources, as the pipeline indexes them; refuses bad or twice-defined ones. */
export function indexAnchors(document: JsonValue): Map<string, Located> {
  const anchors = new Map<string, Located>();
  const visit = (node: JsonObject | boolean, tokens: (string | number)[], embedded: boolean): void => {
    if (typeof node === 'boolean') return;
    const inside = embedded || (tokens.length > 0 && typeof node['$id'] === 'string');
    const anchor = node['$anchor'];
    if (anchor !== undefined && !inside) {
      if (typeof anchor !== 'string' || !anchorPattern.test(anchor))
        throw new LocateError('UNSUPPORTED_REF', '$anchor must be a plain name (2020-12 Core §8.2.2)');
      if (anchors.has(anchor))
        throw new LocateError('UNSUPPORTED_REF', `$anchor ${JSON.stringify(anchor)} is defined twice`);
      anchors.set(anchor, { node, tokens, embedded });
    }
    forEachSubschema(node, (child, childTokens) => visit(child, [...tokens, ...childTokens], inside));
  };
  if (isSchemaValue(document)) visit(document, [], false);
  return anchors;
}

function childOf(value: JsonValue, token: string): JsonValue | undefined {
  return isJsonObject(value) && hasOwn(value, token) ? value[token] : undefined;
}

// Stage 3: inline every local `$ref` of one schema document, refuse every other kind, bound the expansion first.
// Over 400 lines on purpose: one walk (resolution, anchors, cycles, sibling rules, the budget) sharing its state.
//
// Written by hand rather than with json-schema-ref-parser: that library reads files and fetches URLs
// unless configured not to, resolves `$ref` inside data (`const`, `enum`, `default`), has no `$anchor`
// support, merges `$ref` siblings "sibling wins" (wrong under 2020-12 Core §8.2.3.1) and shares object
// identity between inlined copies. This module has no I/O at all: it cannot read a file or open a socket.

import { ToolsealError } from '../core/errors.ts';
import { hasOwn, setOwn, type JsonObject, type JsonValue } from '../core/json.ts';
import { classifySchemaKeyword, forEachSubschema, isSchemaValue } from './schema-walk.ts';
import { formatPointer } from '../core/json-pointer.ts';
import { truncateText } from '../core/text.ts';

export interface RefLimits {
  /** Most `$ref`s one schema document may hold. */
  maxRefsPerSchema: number;
  /** Largest estimated serialised size (UTF-16 units) of all inlined schemas of a manifest. */
  maxExpandedSize: number;
  /** Deepest nesting of the manifest after inlining (canonicalisation is recursive). */
  maxExpandedDepth: number;
}

export const defaultRefLimits: RefLimits = {
  maxRefsPerSchema: 1000,
  maxExpandedSize: 4 * 1024 * 1024,
  maxExpandedDepth: 128,
};

/** Shared across the schemas of one manifest, so the cap is per manifest. */
export interface ExpansionBudget {
  remaining: number;
}

type Dialect = 'draft-07' | '2020-12';

/** draft-07 ignores `$ref` siblings; these are annotations only, so an `allOf` keeps their meaning. */
const draft07AnnotationSiblings = new Set(['title', 'description', 'default', 'examples', '$comment']);
/** At a schema root these may sit beside `$ref` in either dialect: identity and the definitions refs point into. */
const rootOnlySiblings = new Set(['$schema', '$id', '$defs', 'definitions']);
const copyStrippedKeywords = new Set(['$id', '$anchor', '$dynamicAnchor']);
const anchorPattern = /^[A-Za-z_][-A-Za-z0-9._]*$/;

interface Located {
  node: JsonObject | boolean;
  tokens: (string | number)[];
}

interface Measure {
  size: number;
  depth: number;
}

/**
 * Inline the refs of `schema`, the document rooted at `basePointer` (e.g. `/tools/0/inputSchema`),
 * whose root sits at `baseDepth` containers below the manifest root. Returns a new value;
 * the input is not modified. A schema without any reference keyword is returned as is.
 */
export function inlineSchemaRefs(
  schema: JsonValue,
  basePointer: readonly (string | number)[],
  baseDepth: number,
  budget: ExpansionBudget,
  limits: RefLimits = defaultRefLimits,
): JsonValue {
  if (!isSchemaValue(schema) || typeof schema === 'boolean') return schema;
  return new SchemaInliner(schema, basePointer, baseDepth, budget, limits).run();
}

class SchemaInliner {
  private readonly anchors = new Map<string, Located>();
  private readonly dialect: Dialect;
  private readonly measured = new WeakMap<object, Measure>();
  private readonly expanding: { node: object; ref: string }[] = [];
  private refCount = 0;
  private readonly refSites: { node: JsonObject; tokens: (string | number)[] }[] = [];

  constructor(
    private readonly root: JsonObject,
    private readonly basePointer: readonly (string | number)[],
    private readonly baseDepth: number,
    private readonly budget: ExpansionBudget,
    private readonly limits: RefLimits,
  ) {
    const declared = root['$schema'];
    this.dialect =
      typeof declared === 'string' && /json-schema\.org\/draft-0[0-7]\//.test(declared) ? 'draft-07' : '2020-12';
  }

  run(): JsonValue {
    this.scan(this.root, [], false);
    if (this.refCount === 0) return this.root;
    // Every ref must resolve, even one in a definition nothing uses: a dangling ref is an author's mistake.
    for (const { node, tokens } of this.refSites) this.resolve(node, tokens);
    const { size, depth } = this.measure(this.root, [], true);
    if (this.baseDepth + depth > this.limits.maxExpandedDepth) {
      throw new ToolsealError(
        'DEPTH_LIMIT',
        `after inlining refs the schema nests deeper than ${this.limits.maxExpandedDepth} levels`,
        {
          pointer: this.pointer([]),
        },
      );
    }
    this.budget.remaining -= size;
    if (this.budget.remaining < 0) {
      throw new ToolsealError(
        'EXPANSION_LIMIT',
        `inlining refs would expand the manifest beyond ${this.limits.maxExpandedSize} characters`,
        {
          pointer: this.pointer([]),
        },
      );
    }
    return this.build(this.root, false, true);
  }

  /** Pass 1: index `$anchor`s, check every reference keyword everywhere (even in unused definitions). */
  private scan(node: JsonObject | boolean, tokens: (string | number)[], insideEmbeddedResource: boolean): void {
    if (typeof node === 'boolean') return;
    const embedded = insideEmbeddedResource || (tokens.length > 0 && typeof node['$id'] === 'string');
    for (const keyword of ['$dynamicRef', '$recursiveRef']) {
      if (hasOwn(node, keyword)) {
        throw new ToolsealError('UNSUPPORTED_REF', `${keyword} is not supported: only local $ref can be inlined`, {
          pointer: this.pointer([...tokens, keyword]),
        });
      }
    }
    if (hasOwn(node, '$ref')) {
      this.refCount++;
      if (this.refCount > this.limits.maxRefsPerSchema) {
        throw new ToolsealError('EXPANSION_LIMIT', `more than ${this.limits.maxRefsPerSchema} $ref in one schema`, {
          pointer: this.pointer([...tokens, '$ref']),
        });
      }
      if (embedded) {
        throw new ToolsealError(
          'UNSUPPORTED_REF',
          '$ref inside an embedded resource ($id below the root) is not supported',
          {
            pointer: this.pointer([...tokens, '$ref']),
          },
        );
      }
      this.classifyRef(node['$ref'], tokens);
      this.refSites.push({ node, tokens });
    }
    const anchor = node['$anchor'];
    // An anchor under an embedded resource ($id below the root) belongs to that resource, not to `#`.
    if (anchor !== undefined && !embedded) {
      if (typeof anchor !== 'string' || !anchorPattern.test(anchor)) {
        throw new ToolsealError('UNSUPPORTED_REF', '$anchor must be a plain name (2020-12 Core §8.2.2)', {
          pointer: this.pointer([...tokens, '$anchor']),
        });
      }
      if (this.anchors.has(anchor)) {
        throw new ToolsealError('UNSUPPORTED_REF', `$anchor ${JSON.stringify(anchor)} is defined twice`, {
          pointer: this.pointer([...tokens, '$anchor']),
        });
      }
      this.anchors.set(anchor, { node, tokens });
    }
    forEachSubschema(node, (child, childTokens) => this.scan(child, [...tokens, ...childTokens], embedded));
  }

  /** Accept only `#`, `#/json-pointer` and `#plain-name`; everything else is refused (RFC 3986 §4.1). */
  private classifyRef(
    ref: JsonValue | undefined,
    tokens: (string | number)[],
  ): { kind: 'pointer' | 'anchor'; fragment: string } {
    const at = this.pointer([...tokens, '$ref']);
    if (typeof ref !== 'string') throw new ToolsealError('UNSUPPORTED_REF', '$ref must be a string', { pointer: at });
    if (!ref.startsWith('#')) {
      throw new ToolsealError(
        'EXTERNAL_REF',
        `$ref ${JSON.stringify(truncateText(ref, 80))} is not local to this schema; only "#..." refs are resolved`,
        {
          pointer: at,
        },
      );
    }
    let fragment: string;
    try {
      fragment = decodeURIComponent(ref.slice(1));
    } catch (cause) {
      throw new ToolsealError(
        'UNSUPPORTED_REF',
        `$ref ${JSON.stringify(truncateText(ref, 80))} has invalid percent-encoding`,
        {
          pointer: at,
          cause,
        },
      );
    }
    if (fragment === '' || fragment.startsWith('/')) return { kind: 'pointer', fragment };
    if (anchorPattern.test(fragment)) return { kind: 'anchor', fragment };
    throw new ToolsealError(
      'UNSUPPORTED_REF',
      `$ref ${JSON.stringify(truncateText(ref, 80))} is neither a JSON pointer nor a plain-name anchor`,
      { pointer: at },
    );
  }

  private resolve(refNode: JsonObject, tokens: (string | number)[]): Located {
    const ref = refNode['$ref'];
    const { kind, fragment } = this.classifyRef(ref, tokens);
    const at = this.pointer([...tokens, '$ref']);
    if (kind === 'anchor') {
      const found = this.anchors.get(fragment);
      if (!found)
        throw new ToolsealError('MISSING_REF', `no $anchor ${JSON.stringify(fragment)} in this schema`, {
          pointer: at,
        });
      return found;
    }
    // RFC 6901 §4 evaluation, §6 URI fragment form (already percent-decoded). The walk may only pass through
    // schema positions: a pointer into data (`const`, `default`, an unknown keyword) names no schema, and the
    // scan never checked what lies there.
    let current: JsonValue = this.root;
    let position: 'schema' | 'schema-array' | 'schema-map' = 'schema';
    const targetTokens: (string | number)[] = [];
    if (fragment !== '') {
      for (const raw of fragment.slice(1).split('/')) {
        const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
        if (position === 'schema') {
          const shape = classifySchemaKeyword(token);
          if (shape === 'data') {
            throw new ToolsealError(
              'UNSUPPORTED_REF',
              `$ref ${JSON.stringify(truncateText(String(ref), 80))} points into ${JSON.stringify(token)}, which holds data, not a schema`,
              {
                pointer: at,
              },
            );
          }
          const next: JsonValue | undefined =
            isJsonObjectValue(current) && hasOwn(current, token) ? current[token] : undefined;
          position =
            shape === 'map' ? 'schema-map' : shape === 'array' || Array.isArray(next) ? 'schema-array' : 'schema';
        } else {
          position = 'schema';
        }
        if (Array.isArray(current)) {
          const index = /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : -1;
          if (index < 0 || index >= current.length) throw missing();
          current = current[index] as JsonValue;
          targetTokens.push(index);
        } else if (typeof current === 'object' && current !== null && hasOwn(current, token)) {
          current = current[token] as JsonValue;
          targetTokens.push(token);
        } else {
          throw missing();
        }
      }
    }
    if (!isSchemaValue(current)) {
      throw new ToolsealError(
        'UNSUPPORTED_REF',
        `$ref ${JSON.stringify(truncateText(String(ref), 80))} points at a value that is not a schema`,
        { pointer: at },
      );
    }
    return { node: current, tokens: targetTokens };

    function missing(): ToolsealError {
      return new ToolsealError(
        'MISSING_REF',
        `$ref ${JSON.stringify(truncateText(String(ref), 80))} points at nothing in this schema`,
        { pointer: at },
      );
    }
  }

  /** Pass 2: the size and depth the inlined result will have, memoised by identity; refuses cycles. */
  private measure(node: JsonObject | boolean, tokens: (string | number)[], isRoot: boolean): Measure {
    if (typeof node === 'boolean') return { size: 5, depth: 0 };
    const known = this.measured.get(node);
    if (known) return known;
    const keys = Object.keys(node).filter((key) => !(isRoot && (key === '$defs' || key === 'definitions')));
    if (keys.length === 1 && keys[0] === '$ref') {
      // A lone `$ref` is replaced by its target: no wrapper, no extra level.
      const result = this.measureRefTarget(node, tokens);
      this.measured.set(node, result);
      return result;
    }
    let size = 2;
    let depth = 1;
    for (const key of keys) {
      const value = node[key] as JsonValue;
      let child: Measure;
      if (key === '$ref') {
        child = this.measureRefTarget(node, tokens);
        child = { size: child.size + 12, depth: child.depth + 1 }; // inside `"allOf":[…]` beside the siblings
      } else {
        switch (classifySchemaKeyword(key)) {
          case 'data':
            child = measureData(value);
            break;
          default:
            child = this.measureSubschemas(key, value, tokens);
        }
      }
      size += key.length + 4 + child.size;
      if (child.depth + 1 > depth) depth = child.depth + 1;
      if (size > this.limits.maxExpandedSize) {
        throw new ToolsealError(
          'EXPANSION_LIMIT',
          `inlining refs would expand this schema beyond ${this.limits.maxExpandedSize} characters`,
          {
            pointer: this.pointer(tokens),
          },
        );
      }
    }
    const result = { size, depth };
    this.measured.set(node, result);
    return result;
  }

  private measureRefTarget(node: JsonObject, tokens: (string | number)[]): Measure {
    const target = this.resolve(node, tokens);
    const ref = String(node['$ref']);
    const cycleStart = this.expanding.findIndex((entry) => entry.node === target.node);
    if (cycleStart >= 0 || target.node === this.root) {
      const cycle = [...this.expanding.slice(Math.max(0, cycleStart)).map((entry) => entry.ref), ref];
      throw new ToolsealError('CIRCULAR_REF', `circular $ref cannot be inlined: ${cycle.join(' → ')}`, {
        pointer: this.pointer([...tokens, '$ref']),
      });
    }
    this.expanding.push({ node: target.node as object, ref });
    const measured = this.measure(target.node, target.tokens, false);
    this.expanding.pop();
    return measured;
  }

  private measureSubschemas(key: string, value: JsonValue, tokens: (string | number)[]): Measure {
    const shape = classifySchemaKeyword(key);
    if (shape === 'map') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return measureData(value);
      let size = 2;
      let depth = 1;
      for (const name of Object.keys(value)) {
        const item = value[name] as JsonValue;
        const inner = isSchemaValue(item) ? this.measure(item, [...tokens, key, name], false) : measureData(item);
        size += name.length + 4 + inner.size;
        if (inner.depth + 1 > depth) depth = inner.depth + 1;
      }
      return { size, depth };
    }
    if (isSchemaValue(value)) return this.measure(value, [...tokens, key], false);
    if (Array.isArray(value)) {
      let size = 2;
      let depth = 1;
      value.forEach((item, index) => {
        const inner = isSchemaValue(item) ? this.measure(item, [...tokens, key, index], false) : measureData(item);
        size += inner.size + 1;
        if (inner.depth + 1 > depth) depth = inner.depth + 1;
      });
      return { size, depth };
    }
    return measureData(value);
  }

  /** Pass 3: build the inlined copy. `isCopy` marks a target being inlined (its `$id`/`$anchor` go). */
  private build(node: JsonObject | boolean, isCopy: boolean, isRoot: boolean): JsonValue {
    if (typeof node === 'boolean') return node;
    if (hasOwn(node, '$ref')) return this.buildRef(node, isCopy, isRoot);
    const result: JsonObject = {};
    for (const key of Object.keys(node)) {
      if (isRoot && (key === '$defs' || key === 'definitions')) continue;
      if (isCopy && copyStrippedKeywords.has(key)) continue;
      setOwn(result, key, this.buildMember(key, node[key] as JsonValue, isCopy));
    }
    return result;
  }

  private buildMember(key: string, value: JsonValue, isCopy: boolean): JsonValue {
    const shape = classifySchemaKeyword(key);
    if (shape === 'data') return copyData(value);
    if (shape === 'map') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return copyData(value);
      const result: JsonObject = {};
      for (const name of Object.keys(value)) {
        const child = value[name] as JsonValue;
        setOwn(result, name, isSchemaValue(child) ? this.build(child, isCopy, false) : copyData(child));
      }
      return result;
    }
    if (Array.isArray(value))
      return value.map((item) => (isSchemaValue(item) ? this.build(item, isCopy, false) : copyData(item)));
    return isSchemaValue(value) ? this.build(value, isCopy, false) : copyData(value);
  }

  /** 2020-12 Core §8.2.3.1: `{"$ref": R, ...s}` means `{...s, "allOf": [inline(R)]}`, never "sibling wins". */
  private buildRef(node: JsonObject, isCopy: boolean, isRoot: boolean): JsonValue {
    // `resolve` cannot fail here: `measure` already resolved every reachable ref.
    const target = this.resolve(node, []);
    const inlined = this.build(target.node, true, false);
    const siblings = Object.keys(node).filter(
      (key) =>
        key !== '$ref' &&
        !(isRoot && (key === '$defs' || key === 'definitions')) &&
        !(isCopy && copyStrippedKeywords.has(key)),
    );
    if (siblings.length === 0) return inlined;
    if (this.dialect === 'draft-07') {
      const assertion = siblings.find(
        (key) => !draft07AnnotationSiblings.has(key) && !(isRoot && rootOnlySiblings.has(key)),
      );
      if (assertion !== undefined) {
        throw new ToolsealError(
          'REF_SIBLINGS',
          `under draft-07 a $ref ignores its siblings, so the assertion ${JSON.stringify(assertion)} beside it is ambiguous; move it into an allOf`,
          { pointer: this.pointerOfNode(node, assertion) },
        );
      }
    }
    const result: JsonObject = {};
    for (const key of siblings) setOwn(result, key, this.buildMember(key, node[key] as JsonValue, isCopy));
    const existing = result['allOf'];
    result['allOf'] = Array.isArray(existing) ? [...existing, inlined] : [inlined];
    return result;
  }

  /** Where a node sits in the original schema, for errors raised while building. */
  private pointerOfNode(target: JsonObject, key: string): string {
    let found: (string | number)[] | undefined;
    const search = (node: JsonObject | boolean, tokens: (string | number)[]): void => {
      if (found || typeof node === 'boolean') return;
      if (node === target) {
        found = tokens;
        return;
      }
      forEachSubschema(node, (child, childTokens) => search(child, [...tokens, ...childTokens]));
    };
    search(this.root, []);
    return this.pointer([...(found ?? []), key]);
  }

  private pointer(tokens: readonly (string | number)[]): string {
    return formatPointer([...this.basePointer, ...tokens]);
  }
}

function isJsonObjectValue(value: JsonValue): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function measureData(value: JsonValue): Measure {
  if (value === null) return { size: 4, depth: 0 };
  switch (typeof value) {
    case 'string':
      return { size: value.length + 2, depth: 0 };
    case 'number':
      return { size: 8, depth: 0 };
    case 'boolean':
      return { size: 5, depth: 0 };
  }
  let size = 2;
  let depth = 1;
  if (Array.isArray(value)) {
    for (const item of value) {
      const inner = measureData(item);
      size += inner.size + 1;
      if (inner.depth + 1 > depth) depth = inner.depth + 1;
    }
  } else {
    for (const key of Object.keys(value)) {
      const inner = measureData(value[key] as JsonValue);
      size += key.length + 4 + inner.size;
      if (inner.depth + 1 > depth) depth = inner.depth + 1;
    }
  }
  return { size, depth };
}

/** A deep copy of data, so inlined copies never share identity with each other or the input. */
function copyData(value: JsonValue): JsonValue {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyData);
  const result: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(result, key, copyData(value[key] as JsonValue));
  return result;
}

// Bundle one tool schema (README "Schemas split across files"): every ref to another document becomes a local ref
// `#/$defs/<key>` (`#/definitions/<key>` under draft-07) to a copy of its target inside this schema, which the
// pipeline then inlines like any local ref. Refs local to the manifest's schema are left exactly as written.
//
// Written here rather than with json-schema-ref-parser's `bundle()`, whose output the pipeline could not take: it
// crawls data (`const`, `enum`, `default`, `examples`) and would read a file a `$ref` there names; it bundles the
// whole manifest as one document, so its refs (`#/tools/0/...`) mean nothing inside a tool schema, which is its own
// document; it puts each target at its first use rather than under `$defs`; it merges an extended `$ref`'s
// siblings into the target "sibling wins" (2020-12 Core §8.2.3.1 applies both); and it follows `$ref`s while
// evaluating a pointer. Here, siblings stay beside the rewritten `$ref`, so the pipeline keeps 2020-12 meaning.
// The input is never modified and every copy is a new object: two refs to one file share one definition, never
// one object with another tool schema or with the document read.

import type { ToolsealError } from '../core/errors.ts';
import { hasOwn, isJsonObject, setOwn, type JsonObject, type JsonValue } from '../core/json.ts';
import { formatPointer } from '../core/json-pointer.ts';
import { truncateText } from '../core/text.ts';
import { classifySchemaKeyword, isSchemaValue } from '../pipeline/schema-walk.ts';
import { quoteRef, refuseAt, type DocumentRef, type DocumentSource, type RefSite } from './documents.ts';
import { indexAnchors, LocateError, locateFragment, type Located } from './locate.ts';

type Dialect = 'draft-07' | '2020-12';
type Tokens = (string | number)[];

/** Dropped from every copy: the pipeline drops them from inlined copies too, and two copies must not clash. */
const copyStripped = new Set(['$id', '$anchor', '$dynamicAnchor']);
/** Also dropped where a copy starts at a document's root: its identity and its definitions (which become entries). */
const copyRootStripped = new Set(['$schema', '$defs', 'definitions']);

export interface BundleSchemaInput {
  schema: JsonValue;
  /** Where the schema sits in the manifest, e.g. `['tools', 0, 'inputSchema']`. */
  basePointer: Tokens;
  manifest: DocumentRef;
  source: DocumentSource;
  /** Shared by every schema of the manifest: characters of copied definitions left. */
  budget: { remaining: number };
  maxTargets: number;
}

/** A definition the build added, and what messages call it (`schemas/money.json#/$defs/amount`). */
export interface BundledDefinition {
  /** Where it sits in the built manifest. */
  pointer: string;
  /** The local ref that now names it, e.g. `#/$defs/money.amount`. */
  ref: string;
  label: string;
}

export interface BundledSchema {
  schema: JsonValue;
  definitions: BundledDefinition[];
}

interface Context {
  doc: DocumentRef;
  document: JsonValue;
  tokens: Tokens;
  inManifest: boolean;
  embedded: boolean;
  site: RefSite;
}

interface Target extends Located {
  doc: DocumentRef;
  document: JsonValue;
}

interface Definition {
  key: string;
  label: string;
  value: JsonValue;
}

export function bundleSchema(input: BundleSchemaInput): Promise<BundledSchema> {
  return new SchemaBundler(input).run();
}

class SchemaBundler {
  private readonly dialect: Dialect;
  private readonly container: '$defs' | 'definitions';
  private readonly definitions = new Map<string, Definition>();
  private readonly keys = new Set<string>();
  private readonly anchors = new Map<string, Map<string, Located>>();
  private readonly dialectChecked = new Set<string>();

  constructor(private readonly input: BundleSchemaInput) {
    const root = input.schema;
    this.dialect = isJsonObject(root) ? (dialectOf(root['$schema']) ?? '2020-12') : '2020-12';
    this.container = this.dialect === 'draft-07' ? 'definitions' : '$defs';
    const existing = isJsonObject(root) ? root[this.container] : undefined;
    if (isJsonObject(existing)) for (const key of Object.keys(existing)) this.keys.add(key);
  }

  async run(): Promise<BundledSchema> {
    const { schema, manifest } = this.input;
    if (!isJsonObject(schema)) return { schema: copyJson(schema), definitions: [] };
    const site: RefSite = { pointer: this.manifestPointer([]) };
    const context: Context = {
      doc: manifest,
      document: schema,
      tokens: [],
      inManifest: true,
      embedded: false,
      site,
    };
    const built = (await this.rewriteNode(schema, context)) as JsonObject;
    if (this.definitions.size === 0) return { schema: built, definitions: [] };
    const existing = built[this.container];
    if (existing !== undefined && !isJsonObject(existing))
      throw refuseAt(
        'UNSUPPORTED_REF',
        site,
        `the schema's root ${this.container} is not an object; bundled definitions go there`,
      );
    const container: JsonObject = existing ?? {};
    const definitions: BundledDefinition[] = [];
    for (const { key, label, value } of this.definitions.values()) {
      setOwn(container, key, value);
      definitions.push({ pointer: this.manifestPointer([this.container, key]), ref: this.localRef(key), label });
    }
    setOwn(built, this.container, container);
    return { schema: built, definitions };
  }

  /** A new copy of the schema `node`, its refs rewritten. */
  private async rewriteNode(node: JsonObject | boolean, context: Context): Promise<JsonValue> {
    if (typeof node === 'boolean') return node;
    const embedded = context.embedded || (context.tokens.length > 0 && typeof node['$id'] === 'string');
    const inner: Context = { ...context, embedded };
    if (!context.inManifest) {
      for (const keyword of ['$dynamicRef', '$recursiveRef']) {
        if (hasOwn(node, keyword))
          throw this.refuseInFile(
            inner,
            [keyword],
            'UNSUPPORTED_REF',
            `${keyword} is not supported: only $ref can be bundled`,
          );
      }
    }
    const result: JsonObject = {};
    const atRoot = context.tokens.length === 0;
    for (const key of Object.keys(node)) {
      if (!context.inManifest && (copyStripped.has(key) || (atRoot && copyRootStripped.has(key)))) continue;
      const value = node[key] as JsonValue;
      setOwn(
        result,
        key,
        key === '$ref' ? await this.rewriteRef(value, inner) : await this.rewriteMember(key, value, inner),
      );
    }
    return result;
  }

  /** The schema-walk of the pipeline (src/pipeline/schema-walk.ts): data is copied as it is, never entered. */
  private async rewriteMember(key: string, value: JsonValue, context: Context): Promise<JsonValue> {
    const shape = classifySchemaKeyword(key);
    const at = (...tokens: Tokens): Context => ({ ...context, tokens: [...context.tokens, key, ...tokens] });
    if (shape === 'data') return copyJson(value);
    if (shape === 'map') {
      if (!isJsonObject(value)) return copyJson(value);
      const result: JsonObject = {};
      for (const name of Object.keys(value)) {
        const child = value[name] as JsonValue;
        setOwn(result, name, isSchemaValue(child) ? await this.rewriteNode(child, at(name)) : copyJson(child));
      }
      return result;
    }
    if (Array.isArray(value) && (shape === 'array' || key === 'items')) {
      const result: JsonValue[] = [];
      for (const [index, item] of value.entries())
        result.push(isSchemaValue(item) ? await this.rewriteNode(item, at(index)) : copyJson(item));
      return result;
    }
    return isSchemaValue(value) ? this.rewriteNode(value, at()) : copyJson(value);
  }

  private async rewriteRef(ref: JsonValue, context: Context): Promise<JsonValue> {
    if (context.inManifest && (typeof ref !== 'string' || ref.startsWith('#'))) return copyJson(ref); // the pipeline's
    if (typeof ref !== 'string') throw this.refuseInFile(context, ['$ref'], 'UNSUPPORTED_REF', '$ref must be a string');
    const site = context.inManifest
      ? { pointer: this.manifestPointer([...context.tokens, '$ref']) }
      : this.siteIn(context);
    if (context.embedded) {
      throw refuseAt(
        'UNSUPPORTED_REF',
        site,
        `$ref ${quoteRef(ref)} sits inside an embedded resource ($id below the root); it cannot be bundled`,
      );
    }
    const target = await this.locate(ref, context, site);
    return this.localRef(await this.define(target, site));
  }

  private async locate(ref: string, context: Context, site: RefSite): Promise<Target> {
    const hash = ref.indexOf('#');
    let { doc, document } = context;
    if (!ref.startsWith('#')) {
      doc = await this.input.source.resolve(ref, context.doc, site);
      if (doc.id === this.input.manifest.id)
        throw refuseAt(
          'UNSUPPORTED_REF',
          site,
          `$ref ${quoteRef(ref)} names the manifest file itself; use a local "#..." ref`,
        );
      if (doc.id !== context.doc.id) document = await this.input.source.load(doc, site);
      this.checkDialect(doc, document, site);
    }
    let fragment: string;
    try {
      fragment = decodeURIComponent(hash < 0 ? '' : ref.slice(hash + 1));
    } catch (cause) {
      throw refuseAt('UNSUPPORTED_REF', site, `$ref ${quoteRef(ref)} has invalid percent-encoding`, cause);
    }
    try {
      return { ...locateFragment(document, fragment, () => this.anchorsOf(doc, document)), doc, document };
    } catch (error) {
      if (!(error instanceof LocateError)) throw error;
      throw refuseAt(error.code, site, `$ref ${quoteRef(ref)} cannot be followed in ${doc.label}: ${error.message}`);
    }
  }

  /** The key of the definition holding a copy of `target`, copied on first use. */
  private async define(target: Target, site: RefSite): Promise<string> {
    const id = `${target.doc.id}#${formatPointer(target.tokens)}`;
    const known = this.definitions.get(id);
    if (known !== undefined) return known.key;
    if (this.definitions.size >= this.input.maxTargets)
      throw refuseAt('EXPANSION_LIMIT', site, `more than ${this.input.maxTargets} ref targets in one schema`);
    const key = this.allocateKey(target);
    const label = target.tokens.length === 0 ? target.doc.label : `${target.doc.label}#${formatPointer(target.tokens)}`;
    const definition: Definition = { key, label, value: null };
    this.definitions.set(id, definition);
    const context: Context = {
      doc: target.doc,
      document: target.document,
      tokens: target.tokens,
      inManifest: false,
      embedded: target.embedded,
      site,
    };
    definition.value = await this.rewriteNode(target.node, context);
    this.input.budget.remaining -= JSON.stringify(definition.value).length;
    if (this.input.budget.remaining < 0)
      throw refuseAt('EXPANSION_LIMIT', site, 'the definitions copied from other files exceed the bundling limit');
    return key;
  }

  /** `money.amount` for `money.json#/$defs/amount`: readable, unique in this schema, needing no escaping. */
  private allocateKey(target: Target): string {
    const name = decodeURIComponent(target.doc.url.pathname.split('/').pop() ?? '');
    const stem = name.replace(/(\.schema)?\.json$/i, '') || 'schema';
    const parts = target.tokens.filter((token) => token !== '$defs' && token !== 'definitions').map(String);
    const base = truncateText([stem, ...parts].join('.').replace(/[^A-Za-z0-9._-]/g, '_'), 64);
    let key = base;
    for (let n = 2; this.keys.has(key); n++) key = `${base}-${n}`;
    this.keys.add(key);
    return key;
  }

  private anchorsOf(doc: DocumentRef, document: JsonValue): Map<string, Located> {
    let anchors = this.anchors.get(doc.id);
    if (anchors === undefined) {
      anchors = indexAnchors(document);
      this.anchors.set(doc.id, anchors);
    }
    return anchors;
  }

  /** A copy is read in the tool schema's dialect, so a file that declares another one cannot be bundled into it. */
  private checkDialect(doc: DocumentRef, document: JsonValue, site: RefSite): void {
    if (this.dialectChecked.has(doc.id)) return;
    this.dialectChecked.add(doc.id);
    const declared = isJsonObject(document) ? dialectOf(document['$schema']) : undefined;
    if (declared === undefined || declared === this.dialect) return;
    throw refuseAt(
      'UNSUPPORTED_REF',
      site,
      `${doc.label} declares JSON Schema ${declared} but the tool schema is ${this.dialect}; a bundled copy would change meaning`,
    );
  }

  private siteIn(context: Context): RefSite {
    return {
      pointer: context.site.pointer,
      where: `${context.doc.label} at ${formatPointer([...context.tokens, '$ref'])}`,
    };
  }

  private refuseInFile(context: Context, tokens: Tokens, code: 'UNSUPPORTED_REF', message: string): ToolsealError {
    const where = `${context.doc.label} at ${formatPointer([...context.tokens, ...tokens])}`;
    return refuseAt(code, { pointer: context.site.pointer, where }, message);
  }

  private localRef(key: string): string {
    return `#/${this.container}/${key}`;
  }

  private manifestPointer(tokens: Tokens): string {
    return formatPointer([...this.input.basePointer, ...tokens]);
  }
}

/** The pipeline's dialect rule (src/pipeline/refs.ts): draft-00..07 by `$schema`, anything else 2020-12. */
function dialectOf(declared: JsonValue | undefined): Dialect | undefined {
  if (typeof declared !== 'string') return undefined;
  return /json-schema\.org\/draft-0[0-7]\//.test(declared) ? 'draft-07' : '2020-12';
}

/** A deep copy: nothing of the input is shared with the output. */
export function copyJson(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(copyJson);
  if (!isJsonObject(value)) return value;
  const result: JsonObject = {};
  for (const key of Object.keys(value)) setOwn(result, key, copyJson(value[key] as JsonValue));
  return result;
}

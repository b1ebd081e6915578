// `toolseal manifest build` (README "Schemas split across files"): one self-contained manifest from a manifest whose
// tool schemas `$ref` schema files, run through the publish pipeline before anyone writes or uploads it.
// Vendor-side only: it reads files (and, if asked, https documents); the registry side never imports it.

import { dirname } from 'node:path';
import { isToolsealError, ToolsealError } from '../core/errors.ts';
import { isJsonObject, setOwn, type JsonObject, type JsonValue } from '../core/json.ts';
import { runPipeline, type PipelineResult } from '../pipeline/index.ts';
import { bundleSchema, copyJson, type BundledDefinition } from './bundle-schema.ts';
import { defaultBuildLimits, type BuildLimits, type DocumentRef } from './documents.ts';
import { RefParserSource } from './ref-parser-source.ts';

export type { BuildLimits } from './documents.ts';
export { defaultBuildLimits } from './documents.ts';

export interface BuildOptions {
  /** The folder every file read must lie under; default: the manifest's folder. */
  root?: string;
  /** Follow `https:` refs (bounded in size and time); never `http:`. Off by default: no network at all. */
  allowHttp?: boolean;
  limits?: Partial<BuildLimits>;
  /** The fetch for https documents (tests inject one). */
  fetch?: typeof fetch;
}

export interface BuiltManifest {
  /** The built manifest (a new value; shares nothing with what was read). */
  manifest: JsonObject;
  /** It as 2-space JSON with a final newline: what `manifest build` writes. */
  text: string;
  bytes: Uint8Array;
  /** The pipeline's result over `bytes`: the digest that `canonicalize` and `publish` will compute. */
  result: PipelineResult;
  /** Every document read, as messages name them (the manifest first). */
  documents: string[];
}

const schemaFields = ['inputSchema', 'outputSchema'] as const;

/** Build the manifest at `file`. Throws ToolsealError (with the manifest pointer of the ref concerned) on any refusal. */
export async function buildManifest(file: string, options: BuildOptions = {}): Promise<BuiltManifest> {
  const limits: BuildLimits = { ...defaultBuildLimits, ...options.limits };
  const { source, manifest: doc } = await RefParserSource.open(file, {
    root: options.root ?? dirname(file),
    allowHttp: options.allowHttp === true,
    limits,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const value = await source.load(doc, { pointer: undefined });
  if (!isJsonObject(value) || !Array.isArray(value['tools']))
    throw new ToolsealError('INVALID_MANIFEST', 'a manifest must be a JSON object with tools', { pointer: '' });

  const budget = { remaining: limits.maxBundledSize };
  const definitions: BundledDefinition[] = [];
  const tools: JsonValue[] = [];
  for (const [index, tool] of value['tools'].entries()) {
    tools.push(await bundleTool(tool, index, { doc, source, budget, limits, definitions }));
  }
  const manifest: JsonObject = {};
  for (const key of Object.keys(value))
    setOwn(manifest, key, key === 'tools' ? tools : copyJson(value[key] as JsonValue));

  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  const bytes = new TextEncoder().encode(text);
  let result: PipelineResult;
  try {
    result = runPipeline(bytes);
  } catch (error) {
    throw explainPipelineRefusal(error, definitions);
  }
  return { manifest, text, bytes, result, documents: source.labels };
}

interface ToolContext {
  doc: DocumentRef;
  source: RefParserSource;
  budget: { remaining: number };
  limits: BuildLimits;
  definitions: BundledDefinition[];
}

async function bundleTool(tool: JsonValue, index: number, context: ToolContext): Promise<JsonValue> {
  if (!isJsonObject(tool)) return copyJson(tool);
  const result: JsonObject = {};
  for (const key of Object.keys(tool)) {
    const member = tool[key] as JsonValue;
    if (!(schemaFields as readonly string[]).includes(key)) {
      setOwn(result, key, copyJson(member));
      continue;
    }
    const bundled = await bundleSchema({
      schema: member,
      basePointer: ['tools', index, key],
      manifest: context.doc,
      source: context.source,
      budget: context.budget,
      maxTargets: context.limits.maxTargetsPerSchema,
    });
    context.definitions.push(...bundled.definitions);
    setOwn(result, key, bundled.schema);
  }
  return result;
}

/**
 * The pipeline's refusal of the built manifest, said in the vendor's terms: a cycle through bundled definitions
 * names the files it runs through; a problem inside a bundled copy names the file it was copied from.
 */
function explainPipelineRefusal(error: unknown, definitions: readonly BundledDefinition[]): unknown {
  if (!isToolsealError(error) || error.pointer === undefined) return error;
  const pointer = error.pointer;
  const schemaPrefix = /^\/tools\/[0-9]+\/(inputSchema|outputSchema)/.exec(pointer)?.[0];
  const ours = definitions.filter(
    (entry) => schemaPrefix !== undefined && entry.pointer.startsWith(`${schemaPrefix}/`),
  );
  if (error.code === 'CIRCULAR_REF') {
    const byRef = new Map(ours.map((entry) => [entry.ref, entry.label]));
    const refs = error.message.slice(error.message.indexOf(': ') + 2).split(' → ');
    if (refs.some((ref) => byRef.has(ref))) {
      const files = refs.map((ref) => byRef.get(ref) ?? ref).join(' → ');
      return new ToolsealError(
        'CIRCULAR_REF',
        `circular $ref across files: ${files}; bundled, it is the local recursive ref ${refs.join(' → ')}, which the pipeline refuses (a recursive schema cannot be inlined)`,
        { pointer, cause: error },
      );
    }
  }
  const inside = ours.find((entry) => pointer === entry.pointer || pointer.startsWith(`${entry.pointer}/`));
  if (inside === undefined) return error;
  const within = pointer.slice(inside.pointer.length);
  return new ToolsealError(
    error.code,
    `${error.message} (in the copy of ${inside.label}${within === '' ? '' : ` at ${within}`})`,
    { pointer, cause: error },
  );
}

// A manifest draft from a vendor's MCP Registry server.json (issue 27 §1; server.json schema 2025-12-11): name,
// version and description from the server.json, its reach fields (title, websiteUrl, repository, icons, packages,
// remotes) as the signed `server` member, and the tools from a manifest the vendor already has (e.g. captured).
// Pure: the CLI reads the files and writes the draft.

import { ToolsealError } from '../core/errors.ts';
import { hasOwn, isJsonObject, type JsonObject, type JsonValue } from '../core/json.ts';
import { parseStrict, runPipeline, type PipelineResult } from '../pipeline/index.ts';

/** The server.json members that become the manifest's `server` member, in manifest order. */
export const SERVER_REACH_FIELDS = ['title', 'websiteUrl', 'repository', 'icons', 'packages', 'remotes'] as const;

/** server.json members a manifest has no place for: left out of the draft, and listed so the vendor sees it. */
const TOP_LEVEL_KEPT = new Set(['name', 'version', 'description', ...SERVER_REACH_FIELDS]);

export interface ServerJsonDraftOptions {
  /** Overrides server.json `name` (a manifest name is lowercase `namespace/name`). */
  name?: string | undefined;
  /** Overrides server.json `version` (a manifest version is exact SemVer). */
  version?: string | undefined;
  /** The tools, e.g. the `tools` of a captured manifest. Without them the draft lists none and is not publishable. */
  tools?: JsonValue[] | undefined;
}

export interface ServerJsonDraft {
  /** The draft, members in manifest order. */
  manifest: JsonObject;
  /** 2-space JSON of `manifest`, newline-terminated. */
  text: string;
  /** Top-level server.json members left out (`$schema`, `_meta`, …), as JSON pointers. */
  leftOut: string[];
  /** The pipeline's result when tools were given (the draft is then publishable as is). */
  result?: PipelineResult;
}

/**
 * Draft a manifest from server.json bytes (strict parse). The server member is checked as the pipeline checks it
 * (closed shape, official schema, exact versions, URLs, hidden characters): a refusal carries the manifest pointer.
 */
export function draftManifestFromServerJson(bytes: Uint8Array, options: ServerJsonDraftOptions = {}): ServerJsonDraft {
  const parsed = parseStrict(bytes);
  const serverJson = parsed.value;
  if (!isJsonObject(serverJson)) {
    throw new ToolsealError('INVALID_MANIFEST', 'a server.json is a JSON object', { pointer: '' });
  }
  const name = options.name ?? stringMember(serverJson, 'name');
  const version = options.version ?? stringMember(serverJson, 'version');
  const manifest: JsonObject = { name, version };
  const description = serverJson['description'];
  if (typeof description === 'string') manifest['description'] = description;
  manifest['tools'] = options.tools ?? [];
  const server: JsonObject = {};
  for (const field of SERVER_REACH_FIELDS) {
    if (hasOwn(serverJson, field)) server[field] = serverJson[field] as JsonValue;
  }
  manifest['server'] = server;
  const leftOut = Object.keys(serverJson)
    .filter((key) => !TOP_LEVEL_KEPT.has(key))
    .map((key) => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);

  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  if (options.tools !== undefined && options.tools.length > 0) {
    return { manifest, text, leftOut, result: runPipeline(new TextEncoder().encode(text)) };
  }
  // No tools yet: check everything else with a stand-in tool, so the server member is known good before capture.
  const probe = { ...manifest, tools: [{ name: 'stand_in', inputSchema: { type: 'object' } }] };
  runPipeline(new TextEncoder().encode(JSON.stringify(probe)));
  return { manifest, text, leftOut };
}

function stringMember(serverJson: JsonObject, member: 'name' | 'version'): string {
  const value = serverJson[member];
  if (typeof value !== 'string') {
    throw new ToolsealError('INVALID_MANIFEST', `the server.json has no string "${member}"; pass --${member}`, {
      pointer: `/${member}`,
    });
  }
  return value;
}

/** The `tools` of a manifest file's bytes (strict parse), for `--tools`. */
export function readToolsOfManifest(bytes: Uint8Array): JsonValue[] {
  const value = parseStrict(bytes).value;
  const tools = isJsonObject(value) ? value['tools'] : undefined;
  if (!Array.isArray(tools)) {
    throw new ToolsealError('INVALID_MANIFEST', 'the --tools file is not a manifest with a tools array', {
      pointer: '/tools',
    });
  }
  return tools;
}

export interface ManifestWithServer {
  manifest: JsonObject;
  text: string;
  result: PipelineResult;
}

/**
 * `manifest build --server-json FILE`: replace a built manifest's `server` member with the reach fields of a
 * server.json that names the same server (its `name` and `version` must equal the manifest's: INVALID_MANIFEST at
 * `/name` or `/version` of the server.json otherwise), then run the pipeline over the result.
 */
export function attachServerJson(manifest: JsonObject, serverJsonBytes: Uint8Array): ManifestWithServer {
  const serverJson = parseStrict(serverJsonBytes).value;
  if (!isJsonObject(serverJson)) {
    throw new ToolsealError('INVALID_MANIFEST', 'a server.json is a JSON object', { pointer: '' });
  }
  for (const member of ['name', 'version'] as const) {
    if (serverJson[member] !== manifest[member]) {
      throw new ToolsealError(
        'INVALID_MANIFEST',
        `the server.json's ${member} ${JSON.stringify(serverJson[member])} is not the manifest's ${JSON.stringify(manifest[member])}`,
        { pointer: `/${member}` },
      );
    }
  }
  const server: JsonObject = {};
  for (const field of SERVER_REACH_FIELDS) {
    if (hasOwn(serverJson, field)) server[field] = serverJson[field] as JsonValue;
  }
  const withServer: JsonObject = { ...manifest, server };
  const text = `${JSON.stringify(withServer, null, 2)}\n`;
  return { manifest: withServer, text, result: runPipeline(new TextEncoder().encode(text)) };
}

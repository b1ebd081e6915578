// Stage 2b: the signed `server` member (issue 27). Its shape is closed in schema/manifest-v1.schema.json; this module
// adds what the MCP Registry's server.json schema (modelcontextprotocol/registry, schema/mcp-server.schema.json, the
// schema published for 2025-12-11, as generated from the OpenAPI document 2025-12-01) says, checked against that
// very schema, plus the rules a signature needs: exact versions, pinned OCI digests, https URLs, declared variables.

import { createRequire } from 'node:module';
import { Ajv, type ErrorObject } from 'ajv';
import formatsPlugin from 'ajv-formats';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject } from '../core/json.ts';
import { formatPointer } from '../core/json-pointer.ts';

/** An MCP Registry Input (server.json): a value a host fills in, possibly from the user. */
export interface ServerInput {
  description?: string;
  isRequired?: boolean;
  format?: 'string' | 'number' | 'boolean' | 'filepath';
  value?: string;
  isSecret?: boolean;
  default?: string;
  placeholder?: string;
  choices?: string[];
}

/** An input whose value may name `{variables}`. */
export interface ServerInputWithVariables extends ServerInput {
  variables?: Record<string, ServerInput>;
}

/** A positional or named command-line argument. */
export interface ServerArgument extends ServerInputWithVariables {
  type: 'positional' | 'named';
  name?: string;
  valueHint?: string;
  isRepeated?: boolean;
}

/** A header or environment variable. */
export interface ServerKeyValue extends ServerInputWithVariables {
  name: string;
}

export interface ServerTransport {
  type: 'stdio' | 'streamable-http' | 'sse';
  url?: string;
  headers?: ServerKeyValue[];
}

export type ServerRegistryType = 'npm' | 'pypi' | 'oci' | 'nuget' | 'mcpb';

export interface ServerPackage {
  registryType: ServerRegistryType;
  registryBaseUrl?: string;
  identifier: string;
  version?: string;
  fileSha256?: string;
  runtimeHint?: string;
  runtimeArguments?: ServerArgument[];
  packageArguments?: ServerArgument[];
  environmentVariables?: ServerKeyValue[];
  transport: ServerTransport;
}

export interface ServerRemote {
  type: 'streamable-http' | 'sse';
  url: string;
  headers?: ServerKeyValue[];
  variables?: Record<string, ServerInput>;
}

export interface ServerIcon {
  src: string;
  mimeType?: 'image/png' | 'image/jpeg' | 'image/jpg' | 'image/svg+xml' | 'image/webp';
  sizes?: string[];
  theme?: 'light' | 'dark';
}

export interface ServerRepository {
  url: string;
  source: string;
  id?: string;
  subfolder?: string;
}

/** The signed server: how a host reaches the server whose tools the manifest lists. */
export interface ManifestServer {
  title?: string;
  websiteUrl?: string;
  repository?: ServerRepository;
  icons?: ServerIcon[];
  packages?: ServerPackage[];
  remotes?: ServerRemote[];
}

/** What this module reads of a manifest (the envelope's Manifest has these members). */
export interface ServerHolder {
  name: string;
  version: string;
  description?: string;
  server?: ManifestServer;
}

/** The server.json schema version the `server` member is checked against (its `$schema` URL in a server.json). */
export const SERVER_JSON_SCHEMA_URL = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/** The MCP Registry's server.json schema, exactly as vendored (schema/mcp-server.schema.json); a constant path. */
export const officialServerSchema: JsonObject = loadOfficialServerSchema();

function loadOfficialServerSchema(): JsonObject {
  const schema: unknown = createRequire(import.meta.url)('../../schema/mcp-server.schema.json');
  if (!isJsonObject(schema)) throw new ToolsealError('INTERNAL', 'schema/mcp-server.schema.json is not a JSON object');
  return schema;
}

// draft-07, as the schema declares; `strict: false` because it carries OpenAPI annotations (`example`).
const officialAjv = new Ajv({ strict: false, allErrors: false, validateFormats: true, logger: false });
formatsPlugin.default(officialAjv);
const validateServerDetail = officialAjv.compile(officialServerSchema);

/** Longest description the official API allows (ServerDetail.description, maxLength 100, in code points). */
export const SERVER_DESCRIPTION_MAX = 100;

/**
 * The official `server.description` (1 to 100 characters) for a manifest: its description, else the server title,
 * else the manifest name; whitespace runs and controls collapse to one space; a longer text is cut at the last
 * whitespace before the limit and ends with "…", never inside a word (a text with no such break is skipped for the
 * next one; the name, the last resort, is cut after its last '.', '/', '-' or '_' before the limit).
 */
export function deriveServerDescription(manifest: ServerHolder): string {
  for (const candidate of [manifest.description, manifest.server?.title]) {
    if (candidate === undefined) continue;
    const fitted = fitText(candidate, 'words');
    if (fitted !== undefined) return fitted;
  }
  return fitText(manifest.name, 'name') ?? [...manifest.name].slice(0, SERVER_DESCRIPTION_MAX).join('');
}

function fitText(raw: string, breaks: 'words' | 'name'): string | undefined {
  const chars = [...raw.replace(/[\s\p{Cc}]+/gu, ' ').trim()];
  if (chars.length === 0) return undefined;
  if (chars.length <= SERVER_DESCRIPTION_MAX) return chars.join('');
  const limit = SERVER_DESCRIPTION_MAX - 1; // room for the ellipsis
  if (breaks === 'words') {
    // A space at index i ends the words before it: chars[0, i) is whole words.
    for (let i = limit; i > 0; i--) {
      if (chars[i] === ' ') return `${chars.slice(0, i).join('')}…`;
    }
    return undefined;
  }
  for (let i = limit - 1; i > 0; i--) {
    if ('./_-'.includes(chars[i] as string)) return `${chars.slice(0, i + 1).join('')}…`;
  }
  return undefined;
}

/**
 * The server.json (ServerDetail) a manifest's `server` member stands for: the manifest's name and version, the
 * derived description and the signed reach fields, in that order. `undefined` when the manifest has no server.
 */
export function composeServerDetail(manifest: ServerHolder): JsonObject | undefined {
  const server = manifest.server;
  if (server === undefined) return undefined;
  const detail: JsonObject = {
    $schema: SERVER_JSON_SCHEMA_URL,
    name: manifest.name,
    description: deriveServerDescription(manifest),
    version: manifest.version,
  };
  for (const key of ['title', 'websiteUrl', 'repository', 'icons', 'packages', 'remotes'] as const) {
    const value = server[key];
    if (value !== undefined) detail[key] = value as unknown as JsonObject;
  }
  return detail;
}

/**
 * Assert the rules of a `server` member beyond its closed shape (which the envelope checked), then the official
 * server.json schema on the server it stands for. Refuses with INVALID_MANIFEST and the pointer of the first problem.
 */
export function checkServerMember(manifest: ServerHolder): void {
  const server = manifest.server;
  if (server === undefined) return;
  const packages = server.packages ?? [];
  const remotes = server.remotes ?? [];
  if (packages.length === 0 && remotes.length === 0) {
    throw invalid(['server'], 'server must list at least one package or one remote: it says how to reach the server');
  }
  if (server.websiteUrl !== undefined) checkUrl(server.websiteUrl, ['server', 'websiteUrl'], 'plain');
  if (server.repository !== undefined) checkUrl(server.repository.url, ['server', 'repository', 'url'], 'plain');
  server.icons?.forEach((icon, index) => {
    checkUrl(icon.src, ['server', 'icons', index, 'src'], 'plain');
  });
  packages.forEach((pkg, index) => {
    checkPackage(pkg, ['server', 'packages', index]);
  });
  remotes.forEach((remote, index) => {
    const at = ['server', 'remotes', index];
    checkUrl(remote.url, [...at, 'url'], 'remote', new Set(Object.keys(remote.variables ?? {})));
  });
  const detail = composeServerDetail(manifest) as JsonObject;
  if (!validateServerDetail(detail)) throw officialRefusal(validateServerDetail.errors?.[0]);
}

const OCI_PINNED = /^[a-z0-9][a-z0-9._/:-]*@sha256:[a-f0-9]{64}$/;

function checkPackage(pkg: ServerPackage, at: (string | number)[]): void {
  const type = pkg.registryType;
  if ((type === 'npm' || type === 'pypi' || type === 'nuget') && pkg.version === undefined) {
    throw invalid(
      [...at, 'version'],
      `missing required field "version" in ${formatPointer(at)}: an ${type} package is signed at one exact version`,
    );
  }
  if (type === 'oci' && !OCI_PINNED.test(pkg.identifier)) {
    throw invalid(
      [...at, 'identifier'],
      `${formatPointer([...at, 'identifier'])} ${quote(pkg.identifier)} does not pin an image digest: an oci identifier is a lowercase image reference ending in @sha256:<64 hex digits>, since a tag can move`,
    );
  }
  if (type === 'mcpb') {
    checkUrl(pkg.identifier, [...at, 'identifier'], 'plain');
    if (pkg.fileSha256 === undefined) {
      throw invalid(
        [...at, 'fileSha256'],
        `missing required field "fileSha256" in ${formatPointer(at)}: an mcpb package is a download pinned by its SHA-256`,
      );
    }
  }
  if (pkg.registryBaseUrl !== undefined) checkUrl(pkg.registryBaseUrl, [...at, 'registryBaseUrl'], 'plain');
  const transport = pkg.transport;
  if (transport.type === 'stdio') {
    if (transport.url !== undefined || transport.headers !== undefined) {
      throw invalid(
        [...at, 'transport'],
        `${formatPointer([...at, 'transport'])}: a stdio transport has no url or headers`,
      );
    }
    return;
  }
  if (transport.url === undefined) {
    throw invalid(
      [...at, 'transport', 'url'],
      `missing required field "url" in ${formatPointer([...at, 'transport'])}: a ${transport.type} transport names its URL`,
    );
  }
  checkUrl(transport.url, [...at, 'transport', 'url'], 'package');
}

const TEMPLATE_VARIABLE = /\{([a-zA-Z_][a-zA-Z0-9_]*)\}/g;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** What a `{variable}` becomes while a URL template is parsed (a valid host label, port digits aside). */
const VARIABLE_STAND_IN = 'v1';

/**
 * `plain`: an https URL. `remote`: an https URL (http on a loopback host) whose `{variables}` are declared and may not
 * stand for the scheme or the whole host. `package`: a package's own transport URL, which may name variables
 * (arguments, environment) and may start with one (`{baseUrl}/mcp`, as server.json allows).
 */
function checkUrl(
  url: string,
  tokens: (string | number)[],
  kind: 'plain' | 'remote' | 'package',
  declared?: ReadonlySet<string>,
): void {
  const where = `${formatPointer(tokens)} ${quote(url)}`;
  const names = [...url.matchAll(TEMPLATE_VARIABLE)].map((match) => match[1] as string);
  if (kind === 'plain' && names.length > 0) throw invalid(tokens, `${where} may not hold {variables}`);
  if (kind === 'remote') {
    const undeclared = names.find((name) => !declared?.has(name));
    if (undeclared !== undefined) {
      throw invalid(tokens, `${where} names {${undeclared}}, which the remote's variables do not declare`);
    }
  }
  if (kind === 'package' && url.startsWith('{')) return;
  let parsed: URL;
  try {
    parsed = new URL(url.replace(TEMPLATE_VARIABLE, VARIABLE_STAND_IN));
  } catch {
    throw invalid(tokens, `${where} is not a URL`);
  }
  if (kind === 'remote' && parsed.hostname.split('.').every((label) => label === VARIABLE_STAND_IN)) {
    throw invalid(tokens, `${where} lets a variable stand for the whole host: a signed remote names its host`);
  }
  const https = parsed.protocol === 'https:';
  const loopbackHttp = parsed.protocol === 'http:' && LOOPBACK_HOSTS.has(parsed.hostname) && kind !== 'plain';
  if (!https && !loopbackHttp) {
    throw invalid(
      tokens,
      `${where} is not an https URL${kind === 'plain' ? '' : ' (http only on localhost, 127.0.0.1 or [::1])'}`,
    );
  }
  if (parsed.username !== '' || parsed.password !== '') throw invalid(tokens, `${where} may not carry credentials`);
  if (/\s/u.test(url)) throw invalid(tokens, `${where} may not hold whitespace`);
}

/** The official schema's first error, at its pointer in the manifest (the composed detail mirrors the manifest). */
function officialRefusal(error: ErrorObject | undefined): ToolsealError {
  const path = error?.instancePath ?? '';
  const top = path.split('/')[1] ?? '';
  const pointer = ['name', 'version', 'description'].includes(top) ? path : `/server${path}`;
  const detail = error === undefined ? '' : `: ${error.keyword} ${JSON.stringify(error.params)}`;
  return new ToolsealError(
    'INVALID_MANIFEST',
    `${pointer === '' ? 'the server' : pointer} does not match the MCP Registry server.json schema (2025-12-11)${detail}`,
    { pointer },
  );
}

function invalid(tokens: (string | number)[], message: string): ToolsealError {
  return new ToolsealError('INVALID_MANIFEST', message, { pointer: formatPointer(tokens) });
}

function quote(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 61)}...` : text);
}

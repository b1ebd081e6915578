// Stage 2: the closed envelope check. A manifest is a closed type (schema/manifest-v1.schema.json), not a bag.

import { createRequire } from 'node:module';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonObject } from '../core/json.ts';
import type { ParseResult } from './parse.ts';
import { escapePointerToken } from '../core/json-pointer.ts';
import { assertNoHiddenCharactersInServer } from './hidden-characters.ts';
import { checkServerMember, type ManifestServer } from './server-member.ts';

/**
 * The manifest format v1 as a JSON Schema (draft 2020-12), exactly as shipped in schema/. Loaded once through the
 * module system, as a static JSON import would be (Node 20 warns on JSON import attributes, and dist/ cannot reach
 * outside src/). dist/ mirrors src/, so `../../schema/` is the schema folder from either. The path is a constant:
 * no manifest can make the pipeline load anything.
 */
export const manifestSchemaV1: JsonObject = loadManifestSchemaV1();

function loadManifestSchemaV1(): JsonObject {
  const schema: unknown = createRequire(import.meta.url)('../../schema/manifest-v1.schema.json');
  if (!isJsonObject(schema)) throw new ToolsealError('INTERNAL', 'schema/manifest-v1.schema.json is not a JSON object');
  return schema;
}

/** `$id` of format v1. */
export const MANIFEST_SCHEMA_V1_ID = 'https://toolseal.dev/schema/manifest-v1.json';

/** Any JSON Schema: an object schema or a boolean schema. Its content is never constrained by the envelope. */
export type JsonSchema = JsonObject | boolean;

/** MCP ToolAnnotations: hints only. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** MCP Icon. */
export interface ToolIcon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

/** MCP ToolExecution (2025-11-25). */
export interface ToolExecution {
  taskSupport?: 'forbidden' | 'optional' | 'required';
}

/** Hosts the tool contacts: `api.example.com`, `*.example.com`, `host:443`, `[::1]`, or `*` for any host. */
export interface NetworkCapability {
  hosts?: string[];
}

/** Absolute POSIX path patterns the tool reads and writes (`*` within a segment, `**` across segments). */
export interface FilesystemCapability {
  read?: string[];
  write?: string[];
}

/** Secrets the tool needs, as environment variable names. */
export interface SecretsCapability {
  env?: string[];
}

/** Money the tool moves: ISO 4217 currencies and a per-call ceiling in integer minor units. */
export interface MoneyCapability {
  currencies?: string[];
  /** Integer 0..2^53−1, in the minor unit of the currency of the call. */
  maxAmountMinorPerCall?: number;
  /** JSON pointer (no `*`) of the argument holding a call's amount, an integer literal in minor units. */
  amountArgument?: string;
  /** JSON pointer (no `*`) of the argument holding a call's currency, one of `currencies`. */
  currencyArgument?: string;
}

/** How a call's arguments are classified for approvals (issue §1): pointer patterns, `*` for any index or member. */
export interface ToolApproval {
  /** Members whose change does not change the action; every other argument is material. */
  informational?: string[];
  /** Arrays whose order carries no meaning (compared as multisets). */
  unordered?: string[];
}

/** A tool's capability declaration: an absent member makes no claim, an empty list declares none. */
export interface ToolCapabilities {
  network?: NetworkCapability;
  filesystem?: FilesystemCapability;
  secrets?: SecretsCapability;
  money?: MoneyCapability;
}

/** An MCP Tool (revisions 2025-06-18 to 2026-07-28) plus its capability declaration. */
export interface ManifestTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject & { type: 'object' };
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
  icons?: ToolIcon[];
  execution?: ToolExecution;
  _meta?: JsonObject;
  capabilities?: ToolCapabilities;
  approval?: ToolApproval;
}

/** A manifest that passed the closed envelope check (format v1). */
export interface Manifest {
  name: string;
  version: string;
  description?: string;
  tools: ManifestTool[];
  /** The signed server (issue 27): how a host reaches the server that provides the tools. */
  server?: ManifestServer;
}

// Compiled once at module load. `verbose` only adds the failing schema node to error objects
// (the success path is unchanged); the node's `description` is the rule we name in messages.
const ajv = new Ajv2020({ allErrors: false, strict: true, allowUnionTypes: true, verbose: true });
const validateManifest = ajv.compile(manifestSchemaV1);
// The schema's own node for a tool name, so the rules checked again on the NFC name are exactly the envelope's.
const validateToolName = ajv.getSchema(`${MANIFEST_SCHEMA_V1_ID}#/$defs/tool/properties/name`);

/**
 * Assert that `parsed.value` is a manifest of format v1 and return it, typed (the same object: no copy,
 * no rewriting). Refuses with RESERVED_KEY (a `_host_meta` key anywhere), HIDDEN_CHARACTER (in the `server`
 * member), UNKNOWN_FIELD (a member outside the closed shape, pointing at that member) or INVALID_MANIFEST (every
 * other problem, pointing at the first; the `server` member also against the official server.json schema).
 */
export function checkEnvelope(parsed: ParseResult): Manifest {
  if (parsed.reservedKeyPointer !== undefined) {
    throw new ToolsealError(
      'RESERVED_KEY',
      'the key "_host_meta" is reserved for host annotations, which live outside the signed manifest; it may not appear anywhere in a manifest',
      { pointer: parsed.reservedKeyPointer },
    );
  }
  const value = parsed.value;
  if (!isJsonObject(value)) {
    throw new ToolsealError('INVALID_MANIFEST', `a manifest must be a JSON object, not ${describeKind(value)}`, {
      pointer: '',
    });
  }
  // Hidden characters in the server member first: a bidi control in a URL is HIDDEN_CHARACTER, not a bad URL.
  if (value['server'] !== undefined) assertNoHiddenCharactersInServer(value['server']);
  if (!validateManifest(value)) throw refusalFor(validateManifest.errors?.[0]);
  const manifest = value as unknown as Manifest;
  manifest.tools.forEach(checkMoneyIsMaterial);
  checkServerMember(manifest);
  return manifest;
}

/**
 * A rule the JSON Schema cannot state: no informational pattern may cover (equal, or be a prefix of) a money
 * pointer, or the amount or currency would fall out of the action digest. Refuses with INVALID_MANIFEST.
 */
function checkMoneyIsMaterial(tool: ManifestTool, index: number): void {
  const money = tool.capabilities?.money;
  const informational = tool.approval?.informational ?? [];
  for (const member of ['amountArgument', 'currencyArgument'] as const) {
    const target = money?.[member];
    if (target === undefined) continue;
    const targetTokens = target.slice(1).split('/');
    informational.forEach((pattern, at) => {
      const tokens = pattern.slice(1).split('/');
      const covers = tokens.length <= targetTokens.length && tokens.every((t, i) => t === '*' || t === targetTokens[i]);
      if (!covers) return;
      throw new ToolsealError(
        'INVALID_MANIFEST',
        `approval.informational ${quote(pattern)} covers money.${member} ${quote(target)}: the money arguments are always material`,
        { pointer: `/tools/${index}/approval/informational/${at}` },
      );
    });
  }
}

/**
 * Assert that the tool name at `/tools/<index>/name` keeps every rule the envelope states for a tool name. Stage 4
 * calls it on each NFC form that differs from the name sent (NFC can lengthen a name: U+FB2C is 3 code points in
 * NFC), so the name that is signed obeys the format and the canonical bytes pass the pipeline again. Refuses with
 * the same code, pointer and message as the envelope check does for a name sent that way.
 */
export function checkToolName(name: string, index: number): void {
  if (validateToolName === undefined) throw new ToolsealError('INTERNAL', 'the schema has no tool name rule');
  if (validateToolName(name)) return;
  throw refusalFor(validateToolName.errors?.[0], `/tools/${index}/name`);
}

/**
 * Turn ajv's first error into our own refusal (our words, our pointer; nothing of ajv's text). `base` is the
 * pointer of the validated value when it is not the whole manifest.
 */
function refusalFor(error: ErrorObject | undefined, base = ''): ToolsealError {
  if (error === undefined) {
    return new ToolsealError('INVALID_MANIFEST', 'the manifest does not match format v1', { pointer: base });
  }
  const at = base + error.instancePath;
  const node: unknown = error.parentSchema;
  const rule = ruleOf(node);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const field = String(params['additionalProperty']);
      const allowed = isJsonObject(node) && isJsonObject(node['properties']) ? Object.keys(node['properties']) : [];
      return new ToolsealError(
        'UNKNOWN_FIELD',
        `unknown field ${quote(field)} in ${where(at)}: it is a closed object whose fields are ${allowed.join(', ')}`,
        { pointer: `${at}/${escapePointerToken(field)}` },
      );
    }
    case 'required':
    case 'dependentRequired': {
      const missing = String(params['missingProperty']);
      const condition =
        error.keyword === 'dependentRequired' ? ` (required when ${quote(String(params['property']))} is present)` : '';
      const memberRule =
        isJsonObject(node) && isJsonObject(node['properties']) ? ruleOf(node['properties'][missing]) : '';
      return invalid(
        `${at}/${escapePointerToken(missing)}`,
        `missing required field ${quote(missing)} in ${where(at)}${condition}`,
        memberRule,
      );
    }
    case 'type': {
      const expected = String(params['type']).split(',').map(typeWord).join(' or ');
      return invalid(at, `${where(at)} must be ${expected}, not ${describeKind(error.data)}`, rule);
    }
    case 'const':
      return invalid(
        at,
        `${where(at)} must be ${describeValue(params['allowedValue'])}, not ${describeValue(error.data)}`,
        rule,
      );
    case 'enum': {
      const allowed = Array.isArray(params['allowedValues'])
        ? params['allowedValues'].map(describeValue).join(', ')
        : '';
      return invalid(at, `${where(at)} must be one of ${allowed}, not ${describeValue(error.data)}`, rule);
    }
    case 'pattern':
      return invalid(at, `${where(at)} ${describeValue(error.data)} is not valid`, rule);
    case 'minItems':
    case 'maxItems':
      return invalid(
        at,
        `${where(at)} must have ${error.keyword === 'minItems' ? 'at least' : 'at most'} ${String(params['limit'])} item(s)`,
        rule,
      );
    case 'minLength':
    case 'maxLength':
      return invalid(
        at,
        `${where(at)} must be ${error.keyword === 'minLength' ? 'at least' : 'at most'} ${String(params['limit'])} character(s) long`,
        rule,
      );
    case 'minimum':
    case 'maximum':
      return invalid(
        at,
        `${where(at)} must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${String(params['limit'])}, not ${describeValue(error.data)}`,
        rule,
      );
    case 'uniqueItems':
      return invalid(
        at,
        `${where(at)} lists the same item twice (items ${String(params['i'])} and ${String(params['j'])})`,
        rule,
      );
    default:
      return invalid(at, `${where(at)} does not match format v1`, rule);
  }
}

function invalid(pointer: string, problem: string, rule: string): ToolsealError {
  return new ToolsealError('INVALID_MANIFEST', rule === '' ? problem : `${problem}. ${rule}`, { pointer });
}

/** The rule a schema node states, from its `description`. */
function ruleOf(node: unknown): string {
  return isJsonObject(node) && typeof node['description'] === 'string' ? node['description'] : '';
}

function where(pointer: string): string {
  return pointer === '' ? 'the manifest' : pointer;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 61)}...` : text);
}

function typeWord(type: string): string {
  switch (type) {
    case 'object':
      return 'an object';
    case 'array':
      return 'an array';
    case 'integer':
      return 'an integer';
    default:
      return `a ${type}`;
  }
}

function describeKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  if (typeof value === 'string') return `the string ${quote(value)}`;
  if (typeof value === 'boolean') return `${value}`;
  return typeof value === 'object' ? 'an object' : typeof value;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return describeKind(value);
}

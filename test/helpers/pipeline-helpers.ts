// Test helpers for the pipeline suites: where the repository and its vectors are, manifest builders, refusal capture.

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { ToolsealError, type ErrorCode } from '../../src/core/errors.ts';
import { parseStrict } from '../../src/pipeline/parse.ts';
import type { JsonObject, JsonValue } from '../../src/core/json.ts';

/**
 * The repository root (this file lives at <repo>/test/helpers/). Resolved from this module's URL, never from
 * the working directory, so the suites run the same from any folder.
 */
export const repoRoot: string = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

/** A path inside the repository, e.g. `repoPath('manifests')`. */
export function repoPath(...parts: string[]): string {
  return [repoRoot, ...parts].join('/');
}

/** A path inside this repository's test/vectors/. */
export function vectorPath(...parts: string[]): string {
  return repoPath('test', 'vectors', ...parts);
}

/** The names in `dir` that end with `suffix`, sorted (stable test order on every file system). */
export function listFiles(dir: string, suffix: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(suffix))
    .sort();
}

export function readJsonFile<T = unknown>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** JSON.stringify then UTF-8 (lone surrogates come out as `\uXXXX` escapes, so they reach the parser). */
export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

export const TEST_MANIFEST_NAME = 'io.example.test/pipeline';

/** A minimal valid tool; `extra` overrides or adds members. */
export function tool(name: string, inputSchema: JsonObject = { type: 'object' }, extra: JsonObject = {}): JsonObject {
  return { name, inputSchema, ...extra };
}

/** A manifest around `tools`; `extra` adds top-level members. */
export function manifest(tools: JsonValue[], extra: JsonObject = {}): JsonObject {
  return { name: TEST_MANIFEST_NAME, version: '1.0.0', tools, ...extra };
}

/** A manifest with one tool whose inputSchema is `inputSchema`, encoded as bytes. */
export function oneToolBytes(inputSchema: JsonObject, toolExtra: JsonObject = {}): Uint8Array {
  return encodeJson(manifest([tool('t', inputSchema, toolExtra)]));
}

export interface Refusal {
  code: ErrorCode;
  message: string;
  pointer: string | undefined;
}

/** The ToolsealError `fn` throws. Fails the test if `fn` returns, rethrows any other error. */
export function refusalOf(fn: () => unknown): Refusal {
  let result: unknown;
  try {
    result = fn();
  } catch (error) {
    if (error instanceof ToolsealError) return { code: error.code, message: error.message, pointer: error.pointer };
    throw error;
  }
  throw new Error(`expected a ToolsealError, but the call returned ${describe(result)}`);
}

/** Assert that `fn` refuses with exactly `code` at exactly `pointer` (undefined: no pointer). Returns the refusal. */
export function expectRefusal(fn: () => unknown, code: ErrorCode, pointer: string | undefined): Refusal {
  const refusal = refusalOf(fn);
  expect({ code: refusal.code, pointer: refusal.pointer }).toEqual({ code, pointer });
  return refusal;
}

function describe(value: unknown): string {
  const text = (() => {
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  })();
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** Nest `inner` in `levels` arrays: `nestArrays(2, '1')` is `[[1]]`. */
export function nestArrays(levels: number, inner = ''): string {
  return '['.repeat(levels) + inner + ']'.repeat(levels);
}

/** The manifest name a corpus file gets: `io.github.corpus/<stem, lowercased, '.' and '_' → '-'>`. */
export function corpusManifestName(file: string): string {
  const stem = file.replace(/\.tools\.json$/, '').replace(/\.json$/, '');
  return `io.github.corpus/${stem.toLowerCase().replace(/[._]/g, '-')}`;
}

/**
 * A corpus file (`{"tools": [...]}` plus capture metadata) as manifest bytes: its tools, a name and version 1.0.0.
 * The corpus file is read with the strict parser (so nothing lossy of JSON.parse's slips in) and re-serialised.
 */
export function corpusManifestBytes(file: string): Uint8Array {
  const parsed = parseStrict(readFileSync(vectorPath('corpus', file))).value as JsonObject;
  const tools = parsed['tools'];
  if (!Array.isArray(tools)) throw new Error(`${file} has no tools array`);
  return encodeJson({ name: corpusManifestName(file), version: '1.0.0', tools });
}

/** Deep copy of a JSON value through its text (for "was the input modified?" snapshots). */
export function snapshot(value: JsonValue): string {
  return JSON.stringify(value);
}

/**
 * An independent, deliberately naive RFC 8785 serialiser (for cross-checks against the library we ship):
 * keys sorted by UTF-16 code units, ECMAScript number and string forms (JSON.stringify implements both).
 */
export function referenceJcs(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(referenceJcs).join(',')}]`;
  const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)); // JS string comparison is by UTF-16 code units
  return `{${keys.map((key) => `${JSON.stringify(key)}:${referenceJcs(value[key] as JsonValue)}`).join(',')}}`;
}

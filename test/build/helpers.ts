// Helpers for the manifest build suites: split folders written to temp directories, refusals of async builds,
// and the pipeline's view of a manifest written inline by hand.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { ToolsealError, type ErrorCode } from '../../src/core/errors.ts';
import type { JsonObject, JsonValue } from '../../src/core/json.ts';
import { runPipeline, type PipelineResult } from '../../src/pipeline/index.ts';
import { encodeJson, type Refusal } from '../helpers/pipeline-helpers.ts';

const made: string[] = [];

/** A fresh temp folder holding `files` (path → JSON value, or raw text). Removed by `removeTrees`. */
export function writeTree(files: Record<string, JsonValue | { text: string }>): string {
  const root = mkdtempSync(join(tmpdir(), 'toolseal-build-'));
  made.push(root);
  for (const [path, content] of Object.entries(files)) {
    const target = join(root, path);
    mkdirSync(dirname(target), { recursive: true });
    const text = isText(content) ? content.text : JSON.stringify(content, null, 2);
    writeFileSync(target, text);
  }
  return root;
}

export function removeTrees(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

function isText(value: JsonValue | { text: string }): value is { text: string } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof value['text'] === 'string';
}

/** A manifest with one tool per input schema (tools t0, t1, ...). */
export function manifestOf(...inputSchemas: JsonObject[]): JsonObject {
  return {
    name: 'io.example.test/build',
    version: '1.0.0',
    tools: inputSchemas.map((inputSchema, index) => ({ name: `t${index}`, inputSchema })),
  };
}

/** What the pipeline makes of a manifest (e.g. one merged inline by hand). */
export function pipelineOf(manifest: JsonObject): PipelineResult {
  return runPipeline(encodeJson(manifest));
}

/** The ToolsealError `run` rejects with; fails if it resolves. */
export async function asyncRefusalOf(run: Promise<unknown>): Promise<Refusal> {
  try {
    await run;
  } catch (error) {
    if (error instanceof ToolsealError) return { code: error.code, message: error.message, pointer: error.pointer };
    throw error;
  }
  throw new Error('expected a ToolsealError, but the build succeeded');
}

/** Assert the build refuses with `code` at `pointer`; returns the refusal for message checks. */
export async function expectBuildRefusal(
  run: Promise<unknown>,
  code: ErrorCode,
  pointer: string | undefined,
): Promise<Refusal> {
  const refusal = await asyncRefusalOf(run);
  expect({ code: refusal.code, pointer: refusal.pointer }, refusal.message).toEqual({ code, pointer });
  return refusal;
}

/** Freeze a JSON value all the way down (a later write to it throws in strict mode). */
export function deepFreeze<T extends JsonValue>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child as JsonValue);
    Object.freeze(value);
  }
  return value;
}

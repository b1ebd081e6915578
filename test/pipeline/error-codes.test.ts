// One test per pipeline error code: the code and the exact pointer, through runPipeline. Plus: no error message,
// in-process or from the CLI, ever carries the repository's path or the temp dir's.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/core/errors.ts';
import { runPipeline, type PipelineLimits } from '../../src/pipeline/index.ts';
import {
  encodeJson,
  expectRefusal,
  manifest,
  nestArrays,
  repoPath,
  repoRoot,
  tool,
  utf8,
} from '../helpers/pipeline-helpers.ts';
import { httpStatusByCode } from '../../src/http/problem.ts';

interface Case {
  code: ErrorCode;
  pointer: string | undefined;
  bytes: () => Uint8Array;
  limits?: Partial<PipelineLimits>;
  why: string;
}

const HEAD = '{"name":"io.example.test/errors","version":"1.0.0","tools":';
const text = (json: string) => () => utf8(json);
const value = (v: unknown) => () => encodeJson(v);
const schemaCase = (inputSchema: Record<string, unknown>) => value(manifest([tool('t', inputSchema as never)]));

/** Every code a pipeline stage can refuse with, in stage order. */
const pipelineCodes: ErrorCode[] = [
  'INVALID_JSON',
  'INVALID_UTF8',
  'DUPLICATE_KEY',
  'LONE_SURROGATE',
  'UNSAFE_NUMBER',
  'DEPTH_LIMIT',
  'TOO_LARGE',
  'INVALID_MANIFEST',
  'UNKNOWN_FIELD',
  'RESERVED_KEY',
  'EXTERNAL_REF',
  'UNSUPPORTED_REF',
  'CIRCULAR_REF',
  'MISSING_REF',
  'REF_SIBLINGS',
  'EXPANSION_LIMIT',
  'NAME_COLLISION',
  'NOT_NFC',
  'HIDDEN_CHARACTER',
];

const cases: Case[] = [
  {
    code: 'INVALID_JSON',
    pointer: '/tools/0',
    bytes: text(`${HEAD}[{"name":"a",}]}`),
    why: 'a trailing comma in a tool object',
  },
  {
    code: 'INVALID_UTF8',
    pointer: undefined,
    bytes: () =>
      Uint8Array.from([...utf8(`${HEAD}[{"name":"`), 0xc3, 0x28, ...utf8('","inputSchema":{"type":"object"}}]}')]),
    why: 'an invalid 2-byte sequence in a tool name',
  },
  {
    code: 'DUPLICATE_KEY',
    pointer: '/tools/0/name',
    bytes: text(`${HEAD}[{"name":"a","inputSchema":{"type":"object"},"name":"b"}]}`),
    why: 'a tool with two names',
  },
  {
    code: 'LONE_SURROGATE',
    pointer: '/tools/0/description',
    bytes: text(`${HEAD}[{"name":"a","description":"half \\ud83d","inputSchema":{"type":"object"}}]}`),
    why: 'half a surrogate pair in a description',
  },
  {
    code: 'UNSAFE_NUMBER',
    pointer: '/tools/0/inputSchema/properties/n/maximum',
    bytes: text(
      HEAD +
        '[{"name":"a","inputSchema":{"type":"object","properties":{"n":{"type":"integer","maximum":9007199254740993}}}}]}',
    ),
    why: 'an integer literal beyond 2^53−1',
  },
  {
    code: 'DEPTH_LIMIT',
    pointer: `/tools/0/inputSchema/default${'/0'.repeat(60)}`,
    bytes: text(`${HEAD}[{"name":"a","inputSchema":{"type":"object","default":${nestArrays(61)}}}]}`),
    why: 'the 65th level of nesting (manifest, tools, tool, inputSchema, 61 arrays)',
  },
  {
    code: 'TOO_LARGE',
    pointer: undefined,
    bytes: value(manifest([tool('t', { type: 'object', description: 'x'.repeat(1024 * 1024) })])),
    why: 'a manifest above the default 1 MiB',
  },
  {
    code: 'INVALID_MANIFEST',
    pointer: '/version',
    bytes: text(
      '{"name":"io.example.test/errors","version":"1.0","tools":[{"name":"a","inputSchema":{"type":"object"}}]}',
    ),
    why: 'a partial version',
  },
  {
    code: 'UNKNOWN_FIELD',
    pointer: '/tools/0/inputschema',
    bytes: text(`${HEAD}[{"name":"a","inputSchema":{"type":"object"},"inputschema":{}}]}`),
    why: 'a misspelt tool field',
  },
  {
    code: 'RESERVED_KEY',
    pointer: '/tools/0/_meta/_host_meta',
    bytes: text(`${HEAD}[{"name":"a","inputSchema":{"type":"object"},"_meta":{"_host_meta":{}}}]}`),
    why: 'a host annotation key inside the manifest',
  },
  {
    code: 'EXTERNAL_REF',
    pointer: '/tools/0/inputSchema/properties/a/$ref',
    bytes: schemaCase({ type: 'object', properties: { a: { $ref: 'https://example.com/a.json' } } }),
    why: 'an https ref',
  },
  {
    code: 'UNSUPPORTED_REF',
    pointer: '/tools/0/inputSchema/items/$dynamicRef',
    bytes: schemaCase({ type: 'object', items: { $dynamicRef: '#meta' } }),
    why: 'a $dynamicRef',
  },
  {
    code: 'CIRCULAR_REF',
    pointer: '/tools/0/inputSchema/$defs/b/$ref',
    bytes: schemaCase({
      type: 'object',
      properties: { a: { $ref: '#/$defs/a' } },
      $defs: { a: { not: { $ref: '#/$defs/b' } }, b: { $ref: '#/$defs/a' } },
    }),
    why: 'A → B → A',
  },
  {
    code: 'MISSING_REF',
    pointer: '/tools/0/inputSchema/properties/a/$ref',
    bytes: schemaCase({ type: 'object', properties: { a: { $ref: '#/$defs/gone' } } }),
    why: 'a ref to a missing definition',
  },
  {
    code: 'REF_SIBLINGS',
    pointer: '/tools/0/inputSchema/properties/a/maxLength',
    bytes: schemaCase({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { a: { $ref: '#/definitions/s', maxLength: 3 } },
      definitions: { s: { type: 'string' } },
    }),
    why: 'an assertion beside $ref under draft-07',
  },
  {
    code: 'EXPANSION_LIMIT',
    pointer: '/tools/0/inputSchema/properties/c/$ref',
    bytes: schemaCase({
      type: 'object',
      properties: { a: { $ref: '#/$defs/x' }, b: { $ref: '#/$defs/x' }, c: { $ref: '#/$defs/x' } },
      $defs: { x: {} },
    }),
    limits: { maxRefsPerSchema: 2 },
    why: 'more refs than maxRefsPerSchema',
  },
  {
    code: 'NAME_COLLISION',
    pointer: '/tools/1/name',
    bytes: value(manifest([tool('caf\u00e9'), tool('cafe\u0301')])),
    why: 'two names equal after NFC',
  },
  {
    code: 'NOT_NFC',
    pointer: '/tools/0/inputSchema/properties/x/enum/1',
    bytes: schemaCase({ type: 'object', properties: { x: { enum: ['a', 'cafe\u0301'] } } }),
    why: 'an NFD enum string',
  },
  {
    code: 'HIDDEN_CHARACTER',
    pointer: '/tools/0/description',
    bytes: value(manifest([tool('t', { type: 'object' }, { description: 'Refund.\u{e0069}\u{e0067}' })])),
    why: 'Unicode tag characters in a description',
  },
];

/** Strings that must never appear in an error message: where the code runs and where its files are. */
const privatePaths = [repoRoot, tmpdir(), process.cwd()].filter(
  (path, index, all) => path.length > 1 && all.indexOf(path) === index,
);

describe('every pipeline error code, with its exact pointer', () => {
  it('the cases cover every pipeline code exactly once, and each code has an HTTP status', () => {
    expect(cases.map((c) => c.code)).toEqual(pipelineCodes);
    for (const code of pipelineCodes) expect([413, 422]).toContain(httpStatusByCode[code]);
  });

  for (const c of cases) {
    it(`${c.code} at ${c.pointer === undefined ? '(no pointer)' : JSON.stringify(c.pointer)}: ${c.why}`, () => {
      const refusal = expectRefusal(() => runPipeline(c.bytes(), c.limits), c.code, c.pointer);
      expect(refusal.message.length).toBeGreaterThan(10);
      for (const path of privatePaths) expect(refusal.message).not.toContain(path);
    });
  }

  it('TOO_LARGE is decided on the byte count before anything is parsed (even invalid JSON)', () => {
    expectRefusal(() => runPipeline(utf8(`{${' '.repeat(200)}`), { maxBytes: 100 }), 'TOO_LARGE', undefined);
  });

  it('refusals are ToolsealErrors whose toJSON is exactly {code, message, pointer?}', () => {
    for (const c of cases) {
      try {
        runPipeline(c.bytes(), c.limits);
        throw new Error('not refused');
      } catch (error) {
        const json = (error as { toJSON(): unknown }).toJSON() as Record<string, unknown>;
        expect(Object.keys(json)).toEqual(
          c.pointer === undefined ? ['code', 'message'] : ['code', 'message', 'pointer'],
        );
        expect(json['code']).toBe(c.code);
        expect(JSON.stringify(error)).toBe(JSON.stringify(json));
      }
    }
  });
});

describe('no error message leaks a server path', () => {
  let dir = '';

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolseal-leak-'));
    mkdirSync(join(dir, 'nested', 'deeper'), { recursive: true });
    writeFileSync(
      join(dir, 'nested', 'deeper', 'dup.json'),
      `${HEAD}[{"name":"a","inputSchema":{"type":"object"},"name":"b"}]}`,
    );
    writeFileSync(
      join(dir, 'nested', 'deeper', 'bad-utf8.json'),
      Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    );
    writeFileSync(
      join(dir, 'nested', 'deeper', 'external.json'),
      `${HEAD}[{"name":"a","inputSchema":{"type":"object","$ref":"./sibling.json"}}]}`,
    );
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cli = (args: string[]) =>
    spawnSync(process.execPath, [repoPath('bin', 'toolseal.js'), ...args], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 30_000,
    });

  it('the CLI names no directory in its stderr JSON beyond the argument it was given: refusals, a missing file, a directory', () => {
    const runs: { file: string; status: number; code: string }[] = [
      { file: join(dir, 'nested', 'deeper', 'dup.json'), status: 1, code: 'DUPLICATE_KEY' },
      { file: join(dir, 'nested', 'deeper', 'bad-utf8.json'), status: 1, code: 'INVALID_UTF8' },
      { file: join(dir, 'nested', 'deeper', 'external.json'), status: 1, code: 'EXTERNAL_REF' },
      { file: join(dir, 'nested', 'deeper', 'missing.json'), status: 1, code: 'FILE_NOT_FOUND' },
      { file: join(dir, 'nested'), status: 1, code: 'FILE_NOT_FOUND' },
    ];
    for (const run of runs) {
      const result = cli(['canonicalize', run.file]);
      expect(result.status, run.file).toBe(run.status);
      expect(result.stdout).toBe('');
      const lines = result.stderr.split('\n').filter((line) => line !== '');
      expect(lines, result.stderr).toHaveLength(1);
      const body = JSON.parse(lines[0]!) as Record<string, unknown>;
      expect(body['code']).toBe(run.code);
      // FILE_NOT_FOUND names the path the user gave (and only that); refusals name none.
      const stderr = result.stderr.split(run.file).join('');
      expect(stderr).not.toContain(dir);
      expect(stderr).not.toContain('nested');
      for (const path of privatePaths) expect(stderr).not.toContain(path);
    }
  }, 60_000);

  it('an error thrown with a cause never exposes the cause in its JSON form', () => {
    let caught: unknown;
    try {
      runPipeline(Uint8Array.from([0x22, 0xff, 0x22]));
    } catch (error) {
      caught = error;
    }
    const error = caught as Error & { code: string };
    expect(error.code).toBe('INVALID_UTF8');
    expect(error.cause).toBeInstanceOf(Error); // the decoder's own error, kept for logs
    const json = JSON.stringify(error);
    expect(JSON.parse(json)).toEqual({ code: 'INVALID_UTF8', message: error.message });
    expect(json).not.toContain(String((error.cause as Error).message));
  });
});

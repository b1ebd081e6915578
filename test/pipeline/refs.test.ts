// Stage 3 through runPipeline: local refs inlined, everything else refused — and never any I/O.

import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  inlineSchemaRefs,
  parseStrict,
  runPipeline,
  type JsonObject,
  type JsonValue,
  type PipelineResult,
} from '../../src/pipeline/index.ts';
import {
  encodeJson,
  expectRefusal,
  fromUtf8,
  manifest,
  oneToolBytes,
  repoPath,
  tool,
} from '../helpers/pipeline-helpers.ts';

const draft07 = 'http://json-schema.org/draft-07/schema#';
const IN = '/tools/0/inputSchema';

const run = (inputSchema: JsonObject, toolExtra: JsonObject = {}): PipelineResult =>
  runPipeline(oneToolBytes(inputSchema, toolExtra));
const inlined = (inputSchema: JsonObject): JsonValue => run(inputSchema).manifest.tools[0]!.inputSchema as JsonValue;
const refuses = (
  inputSchema: JsonObject,
  code: Parameters<typeof expectRefusal>[1],
  pointer: string,
  toolExtra: JsonObject = {},
) => expectRefusal(() => run(inputSchema, toolExtra), code, pointer);

/** Every key anywhere in a value (to assert that no reference keyword survives). */
function allKeys(value: JsonValue, into: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) allKeys(item, into);
  } else if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) {
      into.add(key);
      allKeys(value[key] as JsonValue, into);
    }
  }
  return into;
}

/** Nesting depth of a value (a scalar is 0, the root container is 1). */
function depthOf(value: JsonValue): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((max, child) => Math.max(max, depthOf(child)), 0);
}

describe('local refs are inlined', () => {
  it('#/$defs/x is inlined and the root $defs is dropped', () => {
    expect(
      inlined({
        type: 'object',
        properties: { a: { $ref: '#/$defs/x' } },
        $defs: { x: { type: 'string', minLength: 1 } },
      }),
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'string', minLength: 1 } },
    });
  });

  it('#/definitions/x (draft-07 style) is inlined and the root definitions is dropped', () => {
    expect(
      inlined({
        type: 'object',
        properties: { a: { $ref: '#/definitions/x' } },
        definitions: { x: { type: 'integer' } },
      }),
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'integer' } },
    });
  });

  it('exact canonical bytes of an inlined schema', () => {
    const result = run({
      type: 'object',
      required: ['a'],
      properties: { a: { $ref: '#/$defs/x' } },
      $defs: { x: { enum: ['b', 'a'] } },
    });
    expect(fromUtf8(result.canonicalBytes)).toBe(
      '{"name":"io.example.test/pipeline","tools":[{"inputSchema":{"properties":{"a":{"enum":["b","a"]}},"required":["a"],"type":"object"},"name":"t"}],"version":"1.0.0"}',
    );
  });

  it('an $anchor ref (#name) is resolved, and the inlined copy carries no $anchor or $id', () => {
    // A pointer ref may name an embedded resource (its $id goes); a plain-name ref reaches anchors of `#` itself.
    const schema = {
      type: 'object',
      properties: { a: { $ref: '#addr' }, b: { $ref: '#addr' }, c: { $ref: '#/$defs/located' } },
      $defs: {
        address: { $anchor: 'addr', type: 'object', properties: { street: { type: 'string' } } },
        located: { $id: 'https://example.com/address', type: 'object', properties: { street: { type: 'string' } } },
      },
    };
    const out = inlined(schema);
    const address = { type: 'object', properties: { street: { type: 'string' } } };
    expect(out).toEqual({ type: 'object', properties: { a: address, b: address, c: address } });
    expect(allKeys(out).has('$anchor')).toBe(false);
    expect(allKeys(out).has('$id')).toBe(false);
  });

  it('an anchor on a non-root schema that is not referenced stays where it is', () => {
    expect(
      inlined({
        type: 'object',
        properties: { a: { $anchor: 'keep', type: 'string' }, b: { $ref: '#/$defs/n' } },
        $defs: { n: { type: 'null' } },
      }),
    ).toEqual({
      type: 'object',
      properties: { a: { $anchor: 'keep', type: 'string' }, b: { type: 'null' } },
    });
  });

  it('nested refs (a def that refers to another def, through items and properties) are all inlined', () => {
    const out = inlined({
      type: 'object',
      properties: { list: { $ref: '#/$defs/list' } },
      $defs: {
        list: { type: 'array', items: { $ref: '#/$defs/item' } },
        item: { type: 'object', properties: { id: { $ref: '#/$defs/id' } } },
        id: { type: 'string', pattern: '^[a-z]+$' },
      },
    });
    expect(out).toEqual({
      type: 'object',
      properties: {
        list: { type: 'array', items: { type: 'object', properties: { id: { type: 'string', pattern: '^[a-z]+$' } } } },
      },
    });
    expect(allKeys(out).has('$ref')).toBe(false);
  });

  it('refs in every subschema position are inlined (allOf/anyOf/oneOf/not/if/then/else/prefixItems/additionalProperties/patternProperties/dependentSchemas)', () => {
    const r = { $ref: '#/$defs/s' };
    const s = { type: 'string' };
    const out = inlined({
      type: 'object',
      allOf: [r],
      anyOf: [r, { type: 'null' }],
      oneOf: [r],
      not: r,
      if: r,
      then: r,
      else: r,
      additionalProperties: r,
      patternProperties: { '^x': r },
      dependentSchemas: { a: r },
      properties: { t: { type: 'array', prefixItems: [r], contains: r } },
      $defs: { s },
    });
    expect(out).toEqual({
      type: 'object',
      allOf: [s],
      anyOf: [s, { type: 'null' }],
      oneOf: [s],
      not: s,
      if: s,
      then: s,
      else: s,
      additionalProperties: s,
      patternProperties: { '^x': s },
      dependentSchemas: { a: s },
      properties: { t: { type: 'array', prefixItems: [s], contains: s } },
    });
  });

  it('percent-encoded and ~-escaped pointer tokens are decoded (RFC 6901 §6)', () => {
    expect(
      inlined({
        type: 'object',
        properties: { a: { $ref: '#/$defs/a%20b' }, b: { $ref: '#/$defs/c~1d~0e' } },
        $defs: { 'a b': { type: 'null' }, 'c/d~e': { type: 'boolean' } },
      }),
    ).toEqual({ type: 'object', properties: { a: { type: 'null' }, b: { type: 'boolean' } } });
  });

  it('a ref to a boolean schema inlines the boolean', () => {
    expect(inlined({ type: 'object', properties: { a: { $ref: '#/$defs/no' } }, $defs: { no: false } })).toEqual({
      type: 'object',
      properties: { a: false },
    });
  });

  it('outputSchema is its own document: its # is its own root', () => {
    const result = run(
      { type: 'object', properties: { q: { $ref: '#/$defs/q' } }, $defs: { q: { type: 'string' } } },
      { outputSchema: { type: 'object', properties: { r: { $ref: '#/$defs/q' } }, $defs: { q: { type: 'number' } } } },
    );
    expect(result.manifest.tools[0]!.inputSchema).toEqual({ type: 'object', properties: { q: { type: 'string' } } });
    expect(result.manifest.tools[0]!.outputSchema).toEqual({ type: 'object', properties: { r: { type: 'number' } } });
  });

  it('a ref in one tool cannot reach another tool’s definitions', () => {
    const bytes = encodeJson(
      manifest([
        tool('a', { type: 'object', $defs: { shared: { type: 'string' } } }),
        tool('b', { type: 'object', properties: { x: { $ref: '#/$defs/shared' } } }),
      ]),
    );
    expectRefusal(() => runPipeline(bytes), 'MISSING_REF', '/tools/1/inputSchema/properties/x/$ref');
  });

  it('a $ref inside const, enum, default or examples is data: left untouched, byte for byte', () => {
    const result = run({
      type: 'object',
      properties: {
        a: {
          const: { $ref: '#/nowhere' },
          enum: [{ $ref: 'http://127.0.0.1:9/x.json' }, 1],
          default: { $ref: '#' },
          examples: [{ $ref: 'file:///etc/passwd' }, { $dynamicRef: '#x' }],
        },
      },
    });
    expect(fromUtf8(result.canonicalBytes)).toBe(
      '{"name":"io.example.test/pipeline","tools":[{"inputSchema":{"properties":{"a":{"const":{"$ref":"#/nowhere"},"default":{"$ref":"#"},' +
        '"enum":[{"$ref":"http://127.0.0.1:9/x.json"},1],"examples":[{"$ref":"file:///etc/passwd"},{"$dynamicRef":"#x"}]}},"type":"object"},"name":"t"}],"version":"1.0.0"}',
    );
  });

  it('a schema without any ref keeps its $defs (nothing to inline, nothing dropped)', () => {
    expect(inlined({ type: 'object', $defs: { x: { type: 'string' } } })).toEqual({
      type: 'object',
      $defs: { x: { type: 'string' } },
    });
  });
});

describe('$ref siblings', () => {
  it('2020-12 (the default dialect): {"$ref": R, ...s} becomes {...s, "allOf": [inline(R)]}', () => {
    expect(
      inlined({
        type: 'object',
        properties: { a: { $ref: '#/$defs/x', description: 'D', minLength: 2 } },
        $defs: { x: { type: 'string', maxLength: 5 } },
      }),
    ).toEqual({
      type: 'object',
      properties: { a: { description: 'D', minLength: 2, allOf: [{ type: 'string', maxLength: 5 }] } },
    });
  });

  it('2020-12: an existing allOf sibling gets the inlined target appended', () => {
    expect(
      inlined({
        type: 'object',
        properties: { a: { $ref: '#/$defs/x', allOf: [{ minLength: 1 }] } },
        $defs: { x: { type: 'string' } },
      }),
    ).toEqual({ type: 'object', properties: { a: { allOf: [{ minLength: 1 }, { type: 'string' }] } } });
  });

  it('2020-12: a $ref at the schema root keeps the root’s own keywords as siblings', () => {
    expect(inlined({ type: 'object', $ref: '#/$defs/base', $defs: { base: { required: ['id'] } } })).toEqual({
      type: 'object',
      allOf: [{ required: ['id'] }],
    });
  });

  it('2020-12: "sibling wins" merging never happens (a conflicting sibling stays a separate constraint)', () => {
    const out = inlined({
      type: 'object',
      properties: { a: { $ref: '#/$defs/x', type: 'integer' } },
      $defs: { x: { type: 'string' } },
    });
    expect(out).toEqual({ type: 'object', properties: { a: { type: 'integer', allOf: [{ type: 'string' }] } } });
  });

  it('draft-07: annotation-only siblings (title, description, default, examples, $comment) take the allOf form', () => {
    expect(
      inlined({
        $schema: draft07,
        type: 'object',
        properties: {
          a: { $ref: '#/definitions/x', title: 'T', description: 'D', default: 'v', examples: ['e'], $comment: 'c' },
        },
        definitions: { x: { type: 'string' } },
      }),
    ).toEqual({
      $schema: draft07,
      type: 'object',
      properties: {
        a: { title: 'T', description: 'D', default: 'v', examples: ['e'], $comment: 'c', allOf: [{ type: 'string' }] },
      },
    });
  });

  it.each([
    ['type', { type: 'string' }],
    ['minimum', { minimum: 2 }],
    ['properties', { properties: {} }],
    ['enum', { enum: [1] }],
  ])('draft-07: an assertion sibling (%s) is refused with REF_SIBLINGS at the sibling', (keyword, sibling) => {
    const refusal = refuses(
      {
        $schema: draft07,
        type: 'object',
        properties: { a: { $ref: '#/definitions/x', description: 'D', ...sibling } },
        definitions: { x: { type: 'string' } },
      },
      'REF_SIBLINGS',
      `${IN}/properties/a/${keyword}`,
    );
    expect(refusal.message).toContain(JSON.stringify(keyword));
  });

  it('draft-07 is recognised from draft-04 and draft-06 $schema URIs too, and a 2019-09 $schema keeps the allOf form', () => {
    for (const uri of ['http://json-schema.org/draft-04/schema#', 'http://json-schema.org/draft-06/schema#']) {
      refuses(
        {
          $schema: uri,
          type: 'object',
          properties: { a: { $ref: '#/definitions/x', minimum: 1 } },
          definitions: { x: {} },
        },
        'REF_SIBLINGS',
        `${IN}/properties/a/minimum`,
      );
    }
    expect(
      inlined({
        $schema: 'https://json-schema.org/draft/2019-09/schema',
        type: 'object',
        properties: { a: { $ref: '#/$defs/x', minimum: 1 } },
        $defs: { x: { type: 'integer' } },
      }),
    ).toEqual({
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      type: 'object',
      properties: { a: { minimum: 1, allOf: [{ type: 'integer' }] } },
    });
  });

  it('draft-07: an assertion sibling inside a definition reached through a ref points at the definition', () => {
    refuses(
      {
        $schema: draft07,
        type: 'object',
        properties: { a: { $ref: '#/definitions/x' } },
        definitions: { x: { $ref: '#/definitions/y', maxLength: 3 }, y: { type: 'string' } },
      },
      'REF_SIBLINGS',
      `${IN}/definitions/x/maxLength`,
    );
  });
});

describe('refs that cannot be inlined are refused', () => {
  it('a self-referencing definition → CIRCULAR_REF at the ref, naming the cycle', () => {
    const refusal = refuses(
      {
        type: 'object',
        properties: { tree: { $ref: '#/$defs/node' } },
        $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } } },
      },
      'CIRCULAR_REF',
      `${IN}/$defs/node/properties/child/$ref`,
    );
    expect(refusal.message).toContain('#/$defs/node → #/$defs/node');
  });

  it('A → B → A → CIRCULAR_REF at the ref that closes the cycle, naming every step', () => {
    const refusal = refuses(
      {
        type: 'object',
        properties: { a: { $ref: '#/$defs/a' } },
        $defs: { a: { type: 'array', items: { $ref: '#/$defs/b' } }, b: { anyOf: [{ $ref: '#/$defs/a' }] } },
      },
      'CIRCULAR_REF',
      `${IN}/$defs/b/anyOf/0/$ref`,
    );
    expect(refusal.message).toContain('#/$defs/a → #/$defs/b → #/$defs/a');
  });

  it('a ref to the document root (#) → CIRCULAR_REF', () => {
    const refusal = refuses(
      { type: 'object', properties: { self: { $ref: '#' } } },
      'CIRCULAR_REF',
      `${IN}/properties/self/$ref`,
    );
    expect(refusal.message).toMatch(/circular.*#/);
  });

  it('a cycle through anchors → CIRCULAR_REF', () => {
    refuses(
      { type: 'object', properties: { a: { $ref: '#n' } }, $defs: { n: { $anchor: 'n', items: { $ref: '#n' } } } },
      'CIRCULAR_REF',
      `${IN}/$defs/n/items/$ref`,
    );
  });

  it('a ref to an ancestor schema (not via $defs) → CIRCULAR_REF', () => {
    refuses(
      { type: 'object', properties: { a: { type: 'object', properties: { b: { $ref: '#/properties/a' } } } } },
      'CIRCULAR_REF',
      `${IN}/properties/a/properties/b/$ref`,
    );
  });

  it.each([
    ['a missing definition', '#/$defs/nope'],
    ['a path through a missing member', '#/properties/x/items'],
    ['an array index out of range', '#/allOf/5'],
    ['a missing anchor', '#nope'],
  ])('%s → MISSING_REF at the ref', (_label, ref) => {
    refuses(
      { type: 'object', allOf: [{}], properties: { a: { $ref: ref } } },
      'MISSING_REF',
      `${IN}/properties/a/$ref`,
    );
  });

  it('a ref may only point at a schema position: into data or an unknown keyword is UNSUPPORTED_REF (nothing unchecked is inlined)', () => {
    refuses(
      {
        type: 'object',
        'x-lib': { $dynamicRef: 'https://evil.example/s.json#meta' },
        properties: { a: { $ref: '#/x-lib' } },
      },
      'UNSUPPORTED_REF',
      `${IN}/properties/a/$ref`,
    );
    refuses(
      { type: 'object', 'x-lib': { enum: ['e\u0301'] }, properties: { a: { $ref: '#/x-lib' } } },
      'UNSUPPORTED_REF',
      `${IN}/properties/a/$ref`,
    );
    refuses(
      { type: 'object', properties: { a: { const: { type: 'string' } }, b: { $ref: '#/properties/a/const' } } },
      'UNSUPPORTED_REF',
      `${IN}/properties/b/$ref`,
    );
    // Schema positions all the way down still resolve: a map, an array of schemas, draft-07 array items.
    expect(
      inlined({
        type: 'object',
        properties: { a: { anyOf: [{ type: 'string' }] }, b: { $ref: '#/properties/a/anyOf/0' } },
      }),
    ).toEqual({
      type: 'object',
      properties: { a: { anyOf: [{ type: 'string' }] }, b: { type: 'string' } },
    });
  });

  it('a plain-name ref does not reach an $anchor inside an embedded resource (nested $id): MISSING_REF', () => {
    refuses(
      {
        type: 'object',
        $defs: { emb: { $id: 'https://other.example/s', $defs: { inner: { $anchor: 'foo', type: 'string' } } } },
        properties: { a: { $ref: '#foo' } },
      },
      'MISSING_REF',
      `${IN}/properties/a/$ref`,
    );
  });

  it('a dangling ref inside an unused root definition is refused too (MISSING_REF), not silently dropped', () => {
    refuses(
      {
        type: 'object',
        properties: { a: { $ref: '#/$defs/used' } },
        $defs: { used: { type: 'string' }, unused: { $ref: '#/$defs/gone' } },
      },
      'MISSING_REF',
      `${IN}/$defs/unused/$ref`,
    );
  });

  it('$dynamicRef and $recursiveRef → UNSUPPORTED_REF at the keyword', () => {
    refuses(
      { type: 'object', properties: { a: { $dynamicRef: '#meta' } } },
      'UNSUPPORTED_REF',
      `${IN}/properties/a/$dynamicRef`,
    );
    refuses({ type: 'object', items: { $recursiveRef: '#' } }, 'UNSUPPORTED_REF', `${IN}/items/$recursiveRef`);
  });

  it.each([
    ['a number', 5],
    ['null', null],
    ['an object', { $ref: '#' }],
    ['an array', ['#/$defs/x']],
  ])('a non-string $ref (%s) → UNSUPPORTED_REF', (_label, ref) => {
    refuses(
      { type: 'object', properties: { a: { $ref: ref } }, $defs: { x: {} } },
      'UNSUPPORTED_REF',
      `${IN}/properties/a/$ref`,
    );
  });

  it('a $ref under an embedded $id (a resource inside the schema) → UNSUPPORTED_REF', () => {
    refuses(
      {
        type: 'object',
        properties: {
          a: {
            $id: 'https://example.com/inner',
            type: 'object',
            properties: { b: { $ref: '#/$defs/x' } },
            $defs: { x: {} },
          },
        },
      },
      'UNSUPPORTED_REF',
      `${IN}/properties/a/properties/b/$ref`,
    );
  });

  it('a fragment that is neither a pointer nor a plain name, or bad percent-encoding → UNSUPPORTED_REF', () => {
    refuses({ type: 'object', properties: { a: { $ref: '#9lives' } } }, 'UNSUPPORTED_REF', `${IN}/properties/a/$ref`);
    refuses(
      { type: 'object', properties: { a: { $ref: '#/$defs/%E0%A4%A' } } },
      'UNSUPPORTED_REF',
      `${IN}/properties/a/$ref`,
    );
  });

  it('a ref to a value that is not a schema → UNSUPPORTED_REF', () => {
    refuses(
      { type: 'object', required: ['a'], properties: { a: { $ref: '#/required' } } },
      'UNSUPPORTED_REF',
      `${IN}/properties/a/$ref`,
    );
  });

  it('refs are checked in unused definitions too (an external ref there is refused)', () => {
    refuses(
      { type: 'object', $defs: { unused: { $ref: 'https://example.com/x.json' } } },
      'EXTERNAL_REF',
      `${IN}/$defs/unused/$ref`,
    );
  });
});

describe('external refs are refused (EXTERNAL_REF), never followed', () => {
  it.each([
    'http://127.0.0.1:9/schema.json',
    'https://example.com/schemas/address.json',
    'https://example.com/schemas/address.json#/$defs/x',
    'file:///etc/passwd',
    '/etc/passwd',
    'other.json#/x',
    'other.json',
    '../x.json',
    './x.json',
    '//example.com/x.json',
    'urn:example:x',
    'data:application/json,{}',
    '',
  ])('%j', (ref) => {
    refuses({ type: 'object', properties: { a: { $ref: ref } } }, 'EXTERNAL_REF', `${IN}/properties/a/$ref`);
  });
});

describe('THE NO-I/O TEST: a manifest never makes the pipeline open a connection or read a file', () => {
  let server: Server;
  let hits = 0;
  let base = '';

  beforeAll(async () => {
    server = createServer((request, response) => {
      hits++;
      request.resume();
      response.writeHead(200, { 'content-type': 'application/schema+json' });
      response.end('{"type":"string"}');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  it('refs to a live local HTTP server (top-level and nested, inputSchema and outputSchema) are refused and the server is never hit', async () => {
    const url = `${base}/schema.json`;
    const cases: { inputSchema: JsonObject; outputSchema?: JsonObject; pointer: string }[] = [
      { inputSchema: { type: 'object', $ref: url }, pointer: `${IN}/$ref` },
      {
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'object', properties: { b: { $ref: `${url}#/x` } } } },
        },
        pointer: `${IN}/properties/a/properties/b/$ref`,
      },
      {
        inputSchema: {
          type: 'object',
          properties: { a: { $ref: '#/$defs/x' } },
          $defs: { x: { items: { $ref: url } } },
        },
        pointer: `${IN}/$defs/x/items/$ref`,
      },
      { inputSchema: { type: 'object' }, outputSchema: { $ref: url }, pointer: '/tools/0/outputSchema/$ref' },
      {
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object', properties: { r: { allOf: [{ $ref: `${base}/other.json` }] } } },
        pointer: '/tools/0/outputSchema/properties/r/allOf/0/$ref',
      },
    ];
    for (const { inputSchema, outputSchema, pointer } of cases) {
      const refusal = expectRefusal(
        () => run(inputSchema, outputSchema === undefined ? {} : { outputSchema }),
        'EXTERNAL_REF',
        pointer,
      );
      expect(refusal.message).not.toContain('{"type":"string"}');
    }
    await sleep(250); // any fetch the pipeline might have started would have arrived by now
    expect(hits).toBe(0);

    // The counter works: one real request is counted (so hits === 0 above means something).
    const response = await fetch(url);
    expect(await response.text()).toBe('{"type":"string"}');
    expect(hits).toBe(1);
  });

  describe('file refs', () => {
    let dir = '';
    let secretPath = '';
    const secret = 'TOPSECRET-4f1c2d-should-never-be-read';

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'toolseal-refs-'));
      secretPath = join(dir, 'secret.json');
      writeFileSync(secretPath, JSON.stringify({ type: 'string', description: secret }));
    });

    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('refs to an existing temp file (file: URL, absolute path, relative path, with fragments) are refused; its content appears nowhere', () => {
      const refs = [
        `file://${secretPath}`,
        secretPath,
        `${secretPath}#/description`,
        relative(process.cwd(), secretPath),
        `file://${secretPath}#/type`,
      ];
      for (const ref of refs) {
        const refusal = expectRefusal(
          () => run({ type: 'object', properties: { a: { $ref: ref } } }),
          'EXTERNAL_REF',
          `${IN}/properties/a/$ref`,
        );
        expect(refusal.message).not.toContain(secret);
      }
    });

    it('a defs chain that would end in the file is refused before anything is inlined', () => {
      const refusal = expectRefusal(
        () => run({ type: 'object', properties: { a: { $ref: '#/$defs/x' } }, $defs: { x: { $ref: secretPath } } }),
        'EXTERNAL_REF',
        `${IN}/$defs/x/$ref`,
      );
      expect(refusal.message).not.toContain(secret);
    });
  });

  it('no pipeline module imports anything that can do I/O', () => {
    const dir = repoPath('src', 'pipeline');
    const forbidden =
      /from\s+['"](node:)?(fs|fs\/promises|http|https|http2|net|tls|dns|dgram|child_process|worker_threads|undici|@apidevtools\/json-schema-ref-parser)['"]/;
    for (const file of readdirSync(dir).filter((name) => name.endsWith('.ts'))) {
      const source = readFileSync(join(dir, file), 'utf8');
      expect(source, file).not.toMatch(forbidden);
      // The one module load: envelope.ts requires the shipped schema by a constant path (no input reaches it).
      const loads = source.replace("createRequire(import.meta.url)('../../schema/manifest-v1.schema.json')", '');
      expect(loads, file).not.toMatch(/\bfetch\s*\(|\brequire\s*\(|\bRequire\s*\(|\bimport\s*\(/);
    }
  });
});

describe('expansion is bounded before anything is serialised', () => {
  /** $defs a0..a25, each referring to the previous one twice: ~1.5 KB that would expand to gigabytes. */
  function bomb(): JsonObject {
    const defs: JsonObject = { a0: { type: 'string' } };
    for (let i = 1; i <= 25; i++)
      defs[`a${i}`] = { allOf: [{ $ref: `#/$defs/a${i - 1}` }, { $ref: `#/$defs/a${i - 1}` }] };
    return { type: 'object', properties: { x: { $ref: '#/$defs/a25' } }, $defs: defs };
  }

  it('a ~1.5 KB nested-ref bomb → EXPANSION_LIMIT', () => {
    const bytes = oneToolBytes(bomb());
    expect(bytes.byteLength).toBeGreaterThan(1400);
    expect(bytes.byteLength).toBeLessThan(2000);
    const refusal = expectRefusal(() => runPipeline(bytes), 'EXPANSION_LIMIT', `${IN}/$defs/a17`);
    expect(refusal.message).toMatch(/expand/);
  });

  it('the same shape at a harmless size is inlined in full', () => {
    const defs: JsonObject = { a0: { type: 'string' } };
    for (let i = 1; i <= 3; i++)
      defs[`a${i}`] = { allOf: [{ $ref: `#/$defs/a${i - 1}` }, { $ref: `#/$defs/a${i - 1}` }] };
    const out = inlined({ type: 'object', properties: { x: { $ref: '#/$defs/a3' } }, $defs: defs });
    const a1 = { allOf: [{ type: 'string' }, { type: 'string' }] };
    const a2 = { allOf: [a1, a1] };
    expect(out).toEqual({ type: 'object', properties: { x: { allOf: [a2, a2] } } });
  });

  it('more than maxRefsPerSchema (1000) refs → EXPANSION_LIMIT at the 1001st', () => {
    const props: JsonObject = {};
    for (let i = 0; i <= 1000; i++) props[`p${i}`] = { $ref: '#/$defs/x' };
    refuses(
      { type: 'object', properties: props, $defs: { x: { type: 'string' } } },
      'EXPANSION_LIMIT',
      `${IN}/properties/p1000/$ref`,
    );
    delete props['p1000'];
    expect(
      Object.keys(
        (inlined({ type: 'object', properties: props, $defs: { x: { type: 'string' } } }) as JsonObject)[
          'properties'
        ] as JsonObject,
      ),
    ).toHaveLength(1000);
  });

  it('the size budget is per manifest, shared by all its schemas', () => {
    const schema = {
      type: 'object',
      properties: { a: { $ref: '#/$defs/x' }, b: { $ref: '#/$defs/x' } },
      $defs: { x: { type: 'string', description: 'x'.repeat(40) } },
    };
    const one = encodeJson(manifest([tool('a', schema)]));
    const two = encodeJson(manifest([tool('a', schema), tool('b', schema)]));
    const limits = { maxExpandedSize: 250 };
    expect(runPipeline(one, limits).manifest.tools).toHaveLength(1);
    expectRefusal(() => runPipeline(two, limits), 'EXPANSION_LIMIT', '/tools/1/inputSchema');
  });

  it('nesting deeper than 128 after inlining → DEPTH_LIMIT at the schema', () => {
    const chain = (levels: number): JsonObject => {
      const defs: JsonObject = { [`d${levels}`]: { type: 'string' } };
      for (let i = 0; i < levels; i++)
        defs[`d${i}`] = { type: 'object', properties: { p: { $ref: `#/$defs/d${i + 1}` } } };
      return { type: 'object', properties: { p: { $ref: '#/$defs/d0' } }, $defs: defs };
    };
    // Inlined, chain(n) nests: manifest, tools, tool, inputSchema, properties, then 2 levels per def: 6 + 2n levels.
    const refusal = refuses(chain(70), 'DEPTH_LIMIT', IN);
    expect(refusal.message).toContain('128');
    expect(depthOf(run(chain(20)).manifest as unknown as JsonValue)).toBe(6 + 2 * 20);
  });

  // KNOWN BUG (reported, not fixed here): refs.ts measure() counts every $ref as an allOf wrapper (+2 levels) even
  // when it has no siblings and is replaced by its target, so the expanded depth is over-estimated by 2 per ref.
  it('a schema whose inlined depth is within 128 is accepted (chain of 50 refs → depth 106)', () => {
    const defs: JsonObject = { d50: { type: 'string' } };
    for (let i = 0; i < 50; i++) defs[`d${i}`] = { type: 'object', properties: { p: { $ref: `#/$defs/d${i + 1}` } } };
    const result = run({ type: 'object', properties: { p: { $ref: '#/$defs/d0' } }, $defs: defs });
    expect(depthOf(result.manifest as unknown as JsonValue)).toBe(106);
  });
});

describe('purity', () => {
  it('inlining does not modify its input, and inlined copies share no identity', () => {
    const bytes = oneToolBytes({
      type: 'object',
      properties: { a: { $ref: '#/$defs/x', description: 'first' }, b: { $ref: '#/$defs/x' }, c: { $ref: '#anchor' } },
      $defs: {
        x: { type: 'object', properties: { n: { type: 'integer' } } },
        y: { $anchor: 'anchor', enum: [1] },
        z: { $id: 'https://e/z', enum: [2] },
      },
    });
    const input = (parseStrict(bytes).value as { tools: JsonObject[] }).tools[0]!['inputSchema'] as JsonObject;
    const before = JSON.stringify(input);
    const out = inlineSchemaRefs(input, ['tools', 0, 'inputSchema'], 3, { remaining: 1e9 }) as JsonObject;
    expect(JSON.stringify(input)).toBe(before);

    const props = out['properties'] as Record<string, JsonObject>;
    const a = (props['a']!['allOf'] as JsonObject[])[0]!;
    const b = props['b']!;
    expect(a).toEqual(b);
    expect(a).not.toBe(b);
    expect(a['properties']).not.toBe(b['properties']);
    expect(b).not.toBe((input['$defs'] as JsonObject)['x']);
    (b['properties'] as JsonObject)['n'] = { type: 'string' };
    expect(a).toEqual({ type: 'object', properties: { n: { type: 'integer' } } });
    expect(JSON.stringify(input)).toBe(before);
  });

  it('the same bytes give the same result twice', () => {
    const bytes = oneToolBytes({
      type: 'object',
      properties: { a: { $ref: '#/$defs/x' } },
      $defs: { x: { type: 'string' } },
    });
    expect(runPipeline(bytes).digest).toBe(runPipeline(bytes).digest);
  });
});

// `buildManifest` over split folders: the built manifest goes through the pipeline to exactly the bytes of the same
// manifest merged inline by hand (whole file, pointer, $anchor, file → file → file, 2020-12 siblings); local and data
// refs are left alone; cycles across files are refused naming the files; problems inside a file name the file.

import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildManifest } from '../../src/build/build-manifest.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { expectBuildRefusal, manifestOf, pipelineOf, removeTrees, writeTree } from './helpers.ts';

afterAll(removeTrees);

/** Build `manifest.json` in a folder made of `files`, and compare with `inline` through the pipeline. */
async function expectSameAsInline(files: Record<string, JsonObject>, inline: JsonObject): Promise<void> {
  const root = writeTree(files);
  const built = await buildManifest(join(root, 'manifest.json'));
  const expected = pipelineOf(inline);
  expect(Buffer.from(built.result.canonicalBytes).toString('utf8')).toBe(
    Buffer.from(expected.canonicalBytes).toString('utf8'),
  );
  expect(built.result.digest).toBe(expected.digest);
  expect(built.text).not.toMatch(/"\$ref": "(?!#)/); // no ref leaves the manifest
}

const address = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://acme.example/schemas/address.json',
  type: 'object',
  properties: { city: { type: 'string' }, country: { $ref: '#/$defs/country' } },
  required: ['city'],
  $defs: { country: { type: 'string', pattern: '^[A-Z]{2}$' }, unused: { type: 'null' } },
};

describe('split folder → build → pipeline equals the inline manifest', () => {
  it('a $ref to a whole file (its $schema, $id and $defs become entries of their own)', async () => {
    await expectSameAsInline(
      {
        'manifest.json': manifestOf({ type: 'object', properties: { home: { $ref: 'schemas/address.json' } } }),
        'schemas/address.json': address,
      },
      manifestOf({
        type: 'object',
        properties: { home: { $ref: '#/$defs/address' } },
        $defs: {
          address: {
            type: 'object',
            properties: { city: { type: 'string' }, country: { $ref: '#/$defs/country' } },
            required: ['city'],
          },
          country: { type: 'string', pattern: '^[A-Z]{2}$' },
        },
      }),
    );
  });

  it('a $ref to a JSON pointer inside a file, whose own local refs follow it', async () => {
    const money = {
      $defs: {
        amount: { type: 'object', properties: { minor: { type: 'integer' }, currency: { $ref: '#/$defs/currency' } } },
        currency: { type: 'string', enum: ['USD', 'EUR'] },
      },
    };
    await expectSameAsInline(
      {
        'manifest.json': manifestOf({ type: 'object', properties: { price: { $ref: 'money.json#/$defs/amount' } } }),
        'money.json': money,
      },
      manifestOf({ type: 'object', properties: { price: { $ref: '#/$defs/amount' } }, $defs: money.$defs }),
    );
  });

  it('a $ref to an $anchor in a file', async () => {
    const shapes = { $defs: { point: { $anchor: 'point', type: 'object', required: ['x', 'y'] } } };
    await expectSameAsInline(
      {
        'manifest.json': manifestOf({
          type: 'object',
          properties: { at: { $ref: 'shapes.json#point' }, again: { $ref: 'shapes.json#/$defs/point' } },
        }),
        'shapes.json': shapes,
      },
      manifestOf({
        type: 'object',
        properties: { at: { $ref: '#point' }, again: { $ref: '#/$defs/point' } },
        $defs: shapes.$defs,
      }),
    );
  });

  it('nested refs file → file → file, across folders, each relative to the file that holds it', async () => {
    await expectSameAsInline(
      {
        'manifest.json': manifestOf({ type: 'object', properties: { order: { $ref: 'schemas/order.json' } } }),
        'schemas/order.json': { type: 'object', properties: { total: { $ref: '../common/money.json#/$defs/amount' } } },
        'common/money.json': { $defs: { amount: { $ref: 'deep/number.json', minimum: 0 } } },
        'common/deep/number.json': { type: 'integer', description: 'minor units' },
      },
      manifestOf({
        type: 'object',
        properties: { order: { $ref: '#/$defs/order' } },
        $defs: {
          order: { type: 'object', properties: { total: { $ref: '#/$defs/amount' } } },
          amount: { $ref: '#/$defs/number', minimum: 0 },
          number: { type: 'integer', description: 'minor units' },
        },
      }),
    );
  });

  it('keeps 2020-12 sibling meaning: siblings beside an external $ref are applied with it, never "sibling wins"', async () => {
    const files = {
      'manifest.json': manifestOf({
        type: 'object',
        properties: { to: { $ref: 'address.json', description: 'Destination', required: ['country'] } },
      }),
      'address.json': { type: 'object', description: 'An address', required: ['city'] },
    };
    await expectSameAsInline(
      files,
      manifestOf({
        type: 'object',
        properties: { to: { $ref: '#/$defs/address', description: 'Destination', required: ['country'] } },
        $defs: { address: files['address.json'] },
      }),
    );
    const built = await buildManifest(join(writeTree(files), 'manifest.json'));
    const to = (built.result.manifest.tools[0]!.inputSchema as JsonObject)['properties'] as JsonObject;
    expect(to['to']).toEqual({
      description: 'Destination',
      required: ['country'],
      allOf: [{ type: 'object', description: 'An address', required: ['city'] }],
    });
  });

  it('each tool schema is its own document: both get their own copy, and outputSchema is bundled too', async () => {
    const root = writeTree({
      'manifest.json': {
        name: 'io.example.test/build',
        version: '1.0.0',
        tools: [
          { name: 'a', inputSchema: { type: 'object', properties: { x: { $ref: 'x.json' } } } },
          {
            name: 'b',
            inputSchema: { type: 'object', properties: { x: { $ref: 'x.json' } } },
            outputSchema: { type: 'object', properties: { y: { $ref: 'x.json' } } },
          },
        ],
      },
      'x.json': { type: 'string' },
    });
    const built = await buildManifest(join(root, 'manifest.json'));
    const tools = built.manifest['tools'] as JsonObject[];
    const defsOf = (tool: JsonObject, field: string) => (tool[field] as JsonObject)['$defs'] as JsonObject;
    expect(defsOf(tools[0]!, 'inputSchema')).toEqual({ x: { type: 'string' } });
    expect(defsOf(tools[1]!, 'outputSchema')).toEqual({ x: { type: 'string' } });
    expect(defsOf(tools[0]!, 'inputSchema')['x']).not.toBe(defsOf(tools[1]!, 'inputSchema')['x']);
    expect(built.text.endsWith('}\n')).toBe(true);
    expect(built.text).toBe(`${JSON.stringify(built.manifest, null, 2)}\n`);
  });
});

describe('draft-07 tool schemas', () => {
  it('get their copies under definitions, and build to the inline manifest', async () => {
    const draft07 = 'http://json-schema.org/draft-07/schema#';
    await expectSameAsInline(
      {
        'manifest.json': manifestOf({
          $schema: draft07,
          type: 'object',
          properties: { x: { $ref: 'x.json', description: 'X' } },
        }),
        'x.json': { $schema: draft07, type: 'string' },
      },
      manifestOf({
        $schema: draft07,
        type: 'object',
        properties: { x: { $ref: '#/definitions/x', description: 'X' } },
        definitions: { x: { type: 'string' } },
      }),
    );
  });
});

describe('what the build leaves as written', () => {
  it('local refs stay as they are, and $ref inside const/enum/default/examples is data, never read', async () => {
    const inputSchema = {
      type: 'object',
      properties: {
        local: { $ref: '#/$defs/name' },
        data: { const: { $ref: '../../etc/hostname' }, examples: [{ $ref: 'http://127.0.0.1:1/x.json' }] },
      },
      $defs: { name: { type: 'string' } },
    };
    const root = writeTree({ 'manifest.json': manifestOf(inputSchema) });
    const built = await buildManifest(join(root, 'manifest.json'));
    expect((built.manifest['tools'] as JsonObject[])[0]!['inputSchema']).toEqual(inputSchema);
    expect(built.result.digest).toBe(pipelineOf(manifestOf(inputSchema)).digest);
  });

  it('a manifest without any external ref builds to the same digest as itself', async () => {
    const root = writeTree({ 'manifest.json': manifestOf({ type: 'object' }) });
    const built = await buildManifest(join(root, 'manifest.json'));
    expect(built.result.digest).toBe(pipelineOf(manifestOf({ type: 'object' })).digest);
  });
});

describe('refusals that name the files', () => {
  it('a cycle across files becomes a local recursive ref, refused as CIRCULAR_REF naming both files', async () => {
    const root = writeTree({
      'manifest.json': manifestOf({ type: 'object', properties: { a: { $ref: 'schemas/a.json' } } }),
      'schemas/a.json': { type: 'object', properties: { b: { $ref: 'b.json' } } },
      'schemas/b.json': { type: 'object', properties: { a: { $ref: 'a.json' } } },
    });
    const refusal = await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json')),
      'CIRCULAR_REF',
      '/tools/0/inputSchema/$defs/b/properties/a/$ref',
    );
    expect(refusal.message).toContain('schemas/a.json → schemas/b.json → schemas/a.json');
    expect(refusal.message).toContain('local recursive ref');
  });

  it('a file that refers to itself (a recursive schema) is refused naming that file', async () => {
    const root = writeTree({
      'manifest.json': manifestOf({ type: 'object', properties: { tree: { $ref: 'tree.json' } } }),
      'tree.json': { type: 'object', properties: { children: { type: 'array', items: { $ref: '#' } } } },
    });
    const refusal = await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json')),
      'CIRCULAR_REF',
      '/tools/0/inputSchema/$defs/tree/properties/children/items/$ref',
    );
    expect(refusal.message).toContain('tree.json → tree.json');
  });

  it('a ref to nothing inside a file: MISSING_REF at the manifest ref, naming the file and its pointer', async () => {
    const root = writeTree({
      'manifest.json': manifestOf({ type: 'object', properties: { m: { $ref: 'money.json#/$defs/amount' } } }),
      'money.json': { $defs: { amount: { properties: { c: { $ref: '#/$defs/nope' } } } } },
    });
    const refusal = await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json')),
      'MISSING_REF',
      '/tools/0/inputSchema/properties/m/$ref',
    );
    expect(refusal.message).toContain('money.json at /$defs/amount/properties/c/$ref');
  });

  it('schema files are parsed strictly, like the manifest: a duplicate key names the file', async () => {
    const root = writeTree({
      'manifest.json': manifestOf({ type: 'object', properties: { x: { $ref: 'x.json' } } }),
      'x.json': { text: '{"type":"string","type":"integer"}' },
    });
    const refusal = await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json')),
      'DUPLICATE_KEY',
      '/tools/0/inputSchema/properties/x/$ref',
    );
    expect(refusal.message).toMatch(/^x\.json: /);
  });

  it('a problem the pipeline finds inside a bundled copy names the file it came from', async () => {
    const root = writeTree({
      'manifest.json': manifestOf({ type: 'object', properties: { x: { $ref: 'x.json' } } }),
      'x.json': { type: 'object', properties: { y: { $dynamicRef: '#meta' } } },
    });
    const refusal = await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json')),
      'UNSUPPORTED_REF',
      '/tools/0/inputSchema/properties/x/$ref',
    );
    expect(refusal.message).toContain('x.json at /properties/y/$dynamicRef');
  });

  it('a refusal of the pipeline inside a bundled copy names the file the copy came from', async () => {
    const root = writeTree({
      'manifest.json': manifestOf({ type: 'object', properties: { x: { $ref: 'x.json' } } }),
      'x.json': { type: 'object', properties: { y: { type: 'string', _host_meta: { note: 'host-only' } } } },
    });
    const refusal = await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json')),
      'RESERVED_KEY',
      '/tools/0/inputSchema/$defs/x/properties/y/_host_meta',
    );
    expect(refusal.message).toContain('(in the copy of x.json at /properties/y/_host_meta)');
  });

  it('an external ref under an embedded $id in the manifest cannot be bundled (its base would be that $id)', async () => {
    const root = writeTree({
      'manifest.json': manifestOf({
        type: 'object',
        properties: { x: { $id: 'https://acme.example/x', properties: { y: { $ref: 'y.json' } } } },
      }),
      'y.json': { type: 'string' },
    });
    await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json')),
      'UNSUPPORTED_REF',
      '/tools/0/inputSchema/properties/x/properties/y/$ref',
    );
  });

  it('a file of another dialect cannot be copied into a tool schema (its keywords would change meaning)', async () => {
    const root = writeTree({
      'manifest.json': manifestOf({ type: 'object', properties: { x: { $ref: 'old.json' } } }),
      'old.json': { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'string' }] },
    });
    const refusal = await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json')),
      'UNSUPPORTED_REF',
      '/tools/0/inputSchema/properties/x/$ref',
    );
    expect(refusal.message).toContain('old.json declares JSON Schema draft-07');
  });

  it('the manifest itself is checked by the envelope first, with its own pointers', async () => {
    const root = writeTree({
      'manifest.json': { name: 'io.example.test/build', version: '1.0.0', tools: [], extra: 1 },
    });
    await expectBuildRefusal(buildManifest(join(root, 'manifest.json')), 'UNKNOWN_FIELD', '/extra');
  });
});

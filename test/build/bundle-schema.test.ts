// `bundleSchema` over an in-memory DocumentSource: the input and the documents read are never modified (they are
// frozen here), and the output shares no object with them, nor two refs' copies with each other across schemas.

import { describe, expect, it } from 'vitest';
import { bundleSchema } from '../../src/build/bundle-schema.ts';
import type { DocumentRef, DocumentSource } from '../../src/build/documents.ts';
import type { JsonObject, JsonValue } from '../../src/core/json.ts';
import { deepFreeze } from './helpers.ts';

function documentRef(name: string): DocumentRef {
  const url = new URL(`file:///split/${name}`);
  return { id: url.href, kind: 'file', url, label: name };
}

/** Documents by file name, frozen; records what was loaded. */
function memorySource(documents: Record<string, JsonValue>): DocumentSource & { loads: string[] } {
  const loads: string[] = [];
  return {
    loads,
    resolve: async (ref, from) => documentRef(new URL(ref, from.url).pathname.replace('/split/', '')),
    load: async (doc) => {
      loads.push(doc.label);
      const value = documents[doc.label];
      if (value === undefined) throw new Error(`no ${doc.label}`);
      return value;
    },
  };
}

/** Every object and array reachable from `value`. */
function nodesOf(value: JsonValue, into: object[] = []): object[] {
  if (typeof value === 'object' && value !== null) {
    into.push(value);
    for (const child of Object.values(value)) nodesOf(child as JsonValue, into);
  }
  return into;
}

describe('bundleSchema', () => {
  const shared = deepFreeze({
    $defs: { amount: { type: 'integer', minimum: 0 }, ccy: { $anchor: 'ccy', enum: ['USD'] } },
  } as JsonObject);
  const documents = { 'money.json': shared };

  it('modifies neither the schema nor the documents (all frozen) and aliases none of their objects', async () => {
    const schema = deepFreeze({
      type: 'object',
      properties: {
        a: { $ref: 'money.json#/$defs/amount' },
        b: { $ref: 'money.json#/$defs/amount', description: 'again' },
        c: { $ref: 'money.json#ccy' },
      },
      $defs: { own: { type: 'string' } },
    } as JsonObject);
    const input = { basePointer: ['tools', 0, 'inputSchema'], manifest: documentRef('manifest.json') };
    const source = memorySource(documents);
    const bundled = await bundleSchema({ ...input, schema, source, budget: { remaining: 1e6 }, maxTargets: 10 });
    expect(bundled.schema).toEqual({
      type: 'object',
      properties: {
        a: { $ref: '#/$defs/money.amount' },
        b: { $ref: '#/$defs/money.amount', description: 'again' },
        c: { $ref: '#/$defs/money.ccy' },
      },
      $defs: {
        own: { type: 'string' },
        'money.amount': { type: 'integer', minimum: 0 },
        'money.ccy': { enum: ['USD'] },
      },
    });
    const inputs = new Set([...nodesOf(schema), ...nodesOf(shared)]);
    for (const node of nodesOf(bundled.schema)) {
      expect(inputs.has(node)).toBe(false);
      expect(Object.isFrozen(node)).toBe(false);
    }
    expect(bundled.definitions.map((entry) => entry.label)).toEqual([
      'money.json#/$defs/amount',
      'money.json#/$defs/ccy',
    ]);
  });

  it('two schemas that use one file each get their own copy', async () => {
    const run = (index: number) =>
      bundleSchema({
        schema: { type: 'object', properties: { a: { $ref: 'money.json#/$defs/amount' } } },
        basePointer: ['tools', index, 'inputSchema'],
        manifest: documentRef('manifest.json'),
        source: memorySource(documents),
        budget: { remaining: 1e6 },
        maxTargets: 10,
      });
    const [first, second] = [await run(0), await run(1)];
    const defs = (value: JsonValue) => (value as JsonObject)['$defs'] as JsonObject;
    expect(defs(first.schema)['money.amount']).toEqual(defs(second.schema)['money.amount']);
    expect(defs(first.schema)['money.amount']).not.toBe(defs(second.schema)['money.amount']);
  });

  it('a generated key never takes the name of a definition the schema already has', async () => {
    const bundled = await bundleSchema({
      schema: { properties: { a: { $ref: 'money.json#/$defs/amount' } }, $defs: { 'money.amount': { type: 'null' } } },
      basePointer: ['tools', 0, 'inputSchema'],
      manifest: documentRef('manifest.json'),
      source: memorySource(documents),
      budget: { remaining: 1e6 },
      maxTargets: 10,
    });
    expect(Object.keys((bundled.schema as JsonObject)['$defs'] as JsonObject)).toEqual([
      'money.amount',
      'money.amount-2',
    ]);
  });

  it('bounds the targets copied into one schema and the size copied into the manifest', async () => {
    const schema = {
      properties: { a: { $ref: 'money.json#/$defs/amount' }, b: { $ref: 'money.json#ccy' } },
    } as JsonObject;
    const base = { schema, basePointer: ['tools', 0, 'inputSchema'], manifest: documentRef('manifest.json') };
    await expect(
      bundleSchema({ ...base, source: memorySource(documents), budget: { remaining: 1e6 }, maxTargets: 1 }),
    ).rejects.toMatchObject({ code: 'EXPANSION_LIMIT', pointer: '/tools/0/inputSchema/properties/b/$ref' });
    await expect(
      bundleSchema({ ...base, source: memorySource(documents), budget: { remaining: 10 }, maxTargets: 10 }),
    ).rejects.toMatchObject({ code: 'EXPANSION_LIMIT' });
  });
});

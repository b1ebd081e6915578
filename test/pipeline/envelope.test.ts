import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolsealError, type ErrorCode } from '../../src/core/errors.ts';
import { MANIFEST_SCHEMA_V1_ID, checkEnvelope, manifestSchemaV1 } from '../../src/pipeline/envelope.ts';
import { parseStrict, type ParseResult } from '../../src/pipeline/parse.ts';
import { buildLargeManifest } from '../../scripts/generate-large-manifest.ts';
import { vectorPath } from '../helpers/pipeline-helpers.ts';

// The real-world corpus (MCP tools/list captures) lives in test/vectors/corpus.
const corpusDir = `${vectorPath('corpus')}/`;
const manifestsDir = new URL('../../manifests/', import.meta.url);

function parse(value: unknown): ParseResult {
  return parseStrict(new TextEncoder().encode(JSON.stringify(value)));
}

/** A small valid manifest; each refusal case below changes exactly one thing in a fresh copy. */
function valid(): Record<string, unknown> & { tools: Record<string, unknown>[] } {
  return {
    name: 'io.github.acme/payments',
    version: '1.2.0',
    description: 'Acme payments',
    tools: [
      {
        name: 'create_payment',
        title: 'Create payment',
        description: 'Charge a customer',
        inputSchema: {
          type: 'object',
          properties: {
            amount_minor: { type: 'integer', minimum: 1, maximum: 50000 },
            currency: { enum: ['USD', 'EUR'] },
          },
          required: ['amount_minor', 'currency'],
          additionalProperties: false,
        },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
        capabilities: {
          network: { hosts: ['api.stripe.com'] },
          filesystem: { read: [], write: [] },
          secrets: { env: ['STRIPE_API_KEY'] },
          money: { currencies: ['USD', 'EUR'], maxAmountMinorPerCall: 50000 },
        },
      },
      { name: 'get_payment', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } },
    ],
  };
}

function withTool0(change: (tool: Record<string, unknown>) => void): unknown {
  const manifest = valid();
  change(manifest.tools[0]!);
  return manifest;
}

function withCapabilities(capabilities: unknown): unknown {
  return withTool0((tool) => {
    tool['capabilities'] = capabilities;
  });
}

function refusal(value: unknown): ToolsealError {
  try {
    checkEnvelope(parse(value));
  } catch (error) {
    if (error instanceof ToolsealError) return error;
    throw error;
  }
  throw new Error('expected the envelope check to refuse');
}

function expectRefused(value: unknown, code: ErrorCode, pointer: string): ToolsealError {
  const error = refusal(value);
  expect({ code: error.code, pointer: error.pointer }).toEqual({ code, pointer });
  // Our own words: never ajv's text, never a file path.
  expect(error.message).not.toMatch(/must NOT|ajv|node_modules|\/work\/|\.json\b|\.ts\b/);
  return error;
}

describe('checkEnvelope: accepts', () => {
  const corpusFiles = readdirSync(corpusDir).filter((file) => file.endsWith('.tools.json'));

  it('finds the corpus', () => {
    expect(corpusFiles.length).toBeGreaterThanOrEqual(10);
  });

  it.each(corpusFiles)('every tool of corpus file %s, wrapped as one manifest', (file) => {
    const tools = (JSON.parse(readFileSync(corpusDir + file, 'utf8')) as { tools: unknown[] }).tools;
    const stem = file.replace(/\.tools\.json$/, '');
    const parsed = parse({ name: `io.github.acme/${stem}`, version: '1.0.0', tools });
    const manifest = checkEnvelope(parsed);
    expect(manifest.tools).toHaveLength(tools.length);
  });

  const manifestFiles = readdirSync(manifestsDir).filter((file) => file.endsWith('.json'));

  it('ships at least five example manifests, one of them with 100+ tools', () => {
    expect(manifestFiles.length).toBeGreaterThanOrEqual(5);
    const large = JSON.parse(readFileSync(new URL('large-catalog.json', manifestsDir), 'utf8')) as { tools: unknown[] };
    expect(large.tools.length).toBeGreaterThanOrEqual(100);
  });

  it.each(manifestFiles)('example manifest %s (its exact bytes, 2-space formatted)', (file) => {
    const bytes = readFileSync(new URL(file, manifestsDir));
    const manifest = checkEnvelope(parseStrict(bytes));
    expect(manifest.name).toMatch(/^io\.github\.acme\//);
    const text = bytes.toString('utf8');
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
  });

  it('large-catalog.json is exactly what the generator produces', () => {
    const text = readFileSync(new URL('large-catalog.json', manifestsDir), 'utf8');
    expect(text).toBe(`${JSON.stringify(buildLargeManifest(), null, 2)}\n`);
  });

  it('the NFD tool name passes untouched (NFC is a later stage)', () => {
    const bytes = readFileSync(new URL('cafe-guide.json', manifestsDir));
    expect(bytes.includes(Buffer.from('cafe\u0301_lookup', 'utf8'))).toBe(true);
    const manifest = checkEnvelope(parseStrict(bytes));
    expect(manifest.tools[0]!.name).toBe('cafe\u0301_lookup');
    expect(manifest.tools[0]!.name).not.toBe(manifest.tools[0]!.name.normalize('NFC'));
  });

  it('returns the parsed object itself: no copy, no rewriting', () => {
    const parsed = parse(valid());
    const before = JSON.stringify(parsed.value);
    expect(checkEnvelope(parsed)).toBe(parsed.value);
    expect(JSON.stringify(parsed.value)).toBe(before);
  });

  it('accepts every MCP Tool field and the whole capabilities vocabulary', () => {
    const manifest = withTool0((tool) => {
      tool['outputSchema'] = { type: 'array', items: { type: 'string' } };
      tool['icons'] = [
        { src: 'data:image/png;base64,iVBORw0KGgo=', mimeType: 'image/png', theme: 'light' },
        { src: 'https://acme.example/icon.svg', mimeType: 'image/svg+xml', sizes: ['any', '48x48'], theme: 'dark' },
        { src: 'https://acme.example/icon.png' },
      ];
      tool['execution'] = { taskSupport: 'optional' };
      tool['_meta'] = {
        ui: { resourceUri: 'ui://acme/pay', visibility: ['model', 'app'] },
        anything: [1, { deep: true }],
      };
      tool['annotations'] = {
        title: 'Pay',
        readOnlyHint: false,
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: true,
      };
      tool['capabilities'] = {
        network: {
          hosts: [
            '*',
            'api.stripe.com',
            '*.example.com:443',
            'localhost:8080',
            '10.0.0.1',
            '[::1]:5432',
            'xn--caf-dma.example',
          ],
        },
        filesystem: {
          read: ['/', '/**', '/data/**', '/data/*.csv', '/home/*/.config/acme'],
          write: ['/tmp/out', '/var/acme/exports/**/*.csv'],
        },
        secrets: { env: ['STRIPE_API_KEY', '_PRIVATE', 'A1'] },
        money: { currencies: ['USD', 'EUR', 'JPY'], maxAmountMinorPerCall: 9007199254740991 },
      };
    });
    expect(() => checkEnvelope(parse(manifest))).not.toThrow();
  });

  it.each([
    ['capabilities absent', undefined],
    ['capabilities empty (no claims)', {}],
    [
      'every list empty (explicitly none)',
      { network: { hosts: [] }, filesystem: { read: [], write: [] }, secrets: { env: [] }, money: { currencies: [] } },
    ],
    ['a zero money ceiling', { money: { currencies: ['EUR'], maxAmountMinorPerCall: 0 } }],
    ['money currencies without a ceiling', { money: { currencies: ['GBP'] } }],
  ])('%s', (_label, capabilities) => {
    const manifest = withCapabilities(capabilities);
    expect(() => checkEnvelope(parse(manifest))).not.toThrow();
  });

  it.each([
    ['a boolean outputSchema', { outputSchema: true }],
    ['an outputSchema with an array root', { outputSchema: { type: 'array', items: { type: 'integer' } } }],
    ['a non-ASCII tool name', { name: 'données_lister' }],
    ['a 128-character tool name', { name: 'x'.repeat(128) }],
    ['a tool name of one astral character', { name: '\u{1F4B8}' }],
    [
      'any 2020-12 keyword inside inputSchema',
      {
        inputSchema: {
          type: 'object',
          $defs: { a: { $anchor: 'a', type: 'string' } },
          properties: { x: { $ref: '#a' } },
          unevaluatedProperties: false,
          'x-vendor': 1,
        },
      },
    ],
    [
      'a draft-07 inputSchema',
      { inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', definitions: {} } },
    ],
    [
      'only the required tool fields',
      { title: undefined, description: undefined, annotations: undefined, capabilities: undefined },
    ],
  ])('%s', (_label, fields) => {
    const manifest = withTool0((tool) => Object.assign(tool, fields));
    expect(() => checkEnvelope(parse(manifest))).not.toThrow();
  });

  it.each([
    '1.2.0',
    '0.0.0',
    '10.20.30',
    '1.0.0-alpha',
    '1.0.0-rc.1+build.5',
    '2.0.0+20260101',
    '1.0.0-0.3.7',
    '1.0.0-x-y-z.--',
  ])('version %s', (version) => {
    expect(() => checkEnvelope(parse({ ...valid(), version }))).not.toThrow();
  });

  it.each([
    'io.github.acme/payments',
    'dev.toolseal/registry',
    'com.example.tools/pdf-render',
    'io.github.a-b/x',
    'org.acme/v2.client_sdk',
    'io.github.acme/a',
  ])('manifest name %s', (name) => {
    expect(() => checkEnvelope(parse({ ...valid(), name }))).not.toThrow();
  });
});

describe('checkEnvelope: refuses unknown fields with UNKNOWN_FIELD at the member itself', () => {
  it('at the top level', () => {
    expectRefused({ ...valid(), homepage: 'https://acme.example' }, 'UNKNOWN_FIELD', '/homepage');
  });

  it('at the tool level', () => {
    const manifest = valid();
    manifest.tools[1]!['outputschema'] = { type: 'object' };
    expectRefused(manifest, 'UNKNOWN_FIELD', '/tools/1/outputschema');
  });

  it('inside annotations', () => {
    expectRefused(
      withTool0((tool) => {
        tool['annotations'] = { readOnlyHint: true, foo: true };
      }),
      'UNKNOWN_FIELD',
      '/tools/0/annotations/foo',
    );
  });

  it('inside capabilities (first level)', () => {
    expectRefused(
      withCapabilities({ network: { hosts: [] }, database: { tables: ['users'] } }),
      'UNKNOWN_FIELD',
      '/tools/0/capabilities/database',
    );
  });

  it('inside capabilities (second level)', () => {
    expectRefused(
      withCapabilities({ network: { hosts: ['api.stripe.com'], ports: [443] } }),
      'UNKNOWN_FIELD',
      '/tools/0/capabilities/network/ports',
    );
    expectRefused(
      withCapabilities({ money: { currencies: ['USD'], maxAmount: 1 } }),
      'UNKNOWN_FIELD',
      '/tools/0/capabilities/money/maxAmount',
    );
    expectRefused(
      withCapabilities({ filesystem: { read: [], execute: [] } }),
      'UNKNOWN_FIELD',
      '/tools/0/capabilities/filesystem/execute',
    );
    expectRefused(
      withCapabilities({ secrets: { env: [], files: [] } }),
      'UNKNOWN_FIELD',
      '/tools/0/capabilities/secrets/files',
    );
  });

  it('inside icons and execution', () => {
    expectRefused(
      withTool0((tool) => {
        tool['icons'] = [{ src: 'https://acme.example/i.png', size: '48x48' }];
      }),
      'UNKNOWN_FIELD',
      '/tools/0/icons/0/size',
    );
    expectRefused(
      withTool0((tool) => {
        tool['execution'] = { taskHint: 'never' };
      }),
      'UNKNOWN_FIELD',
      '/tools/0/execution/taskHint',
    );
  });

  it('escapes the member name in the pointer (RFC 6901)', () => {
    const error = expectRefused({ ...valid(), 'a/b~c': 1 }, 'UNKNOWN_FIELD', '/a~1b~0c');
    expect(error.message).toContain('"a/b~c"');
  });

  it('names the field and the allowed fields in the message', () => {
    const error = expectRefused(
      withTool0((tool) => {
        tool['annotations'] = { foo: 1 };
      }),
      'UNKNOWN_FIELD',
      '/tools/0/annotations/foo',
    );
    expect(error.message).toContain('"foo"');
    expect(error.message).toContain('readOnlyHint');
  });

  it('any unknown tool member (property)', () => {
    const known = new Set([
      'name',
      'title',
      'description',
      'inputSchema',
      'outputSchema',
      'annotations',
      'icons',
      'execution',
      '_meta',
      'capabilities',
      '_host_meta',
    ]);
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 12 }).filter((key) => !known.has(key)),
        (key) => {
          const manifest = withTool0((tool) => {
            Object.defineProperty(tool, key, { value: 1, enumerable: true, writable: true, configurable: true });
          });
          const error = refusal(manifest);
          expect(error.code).toBe('UNKNOWN_FIELD');
          expect(error.pointer).toBe(`/tools/0/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('checkEnvelope: refuses _host_meta with RESERVED_KEY at its pointer', () => {
  it('at the top level', () => {
    expectRefused({ ...valid(), _host_meta: { pinned: true } }, 'RESERVED_KEY', '/_host_meta');
  });

  it('deep inside a schema', () => {
    expectRefused(
      withTool0((tool) => {
        tool['inputSchema'] = {
          type: 'object',
          properties: { amount: { type: 'integer', _host_meta: { injected: true } } },
        };
      }),
      'RESERVED_KEY',
      '/tools/0/inputSchema/properties/amount/_host_meta',
    );
  });

  it('inside the free-form _meta', () => {
    expectRefused(
      withTool0((tool) => {
        tool['_meta'] = { _host_meta: 1 };
      }),
      'RESERVED_KEY',
      '/tools/0/_meta/_host_meta',
    );
  });

  it('before any other problem', () => {
    expectRefused({ version: 'latest', tools: [], foo: 1, _host_meta: 1 }, 'RESERVED_KEY', '/_host_meta');
  });
});

describe('checkEnvelope: refuses everything else with INVALID_MANIFEST at the first problem', () => {
  it.each([
    ['an array', []],
    ['a string', 'io.github.acme/payments'],
    ['a number', 42],
    ['null', null],
    ['true', true],
  ])('a non-object document: %s', (_label, document) => {
    expectRefused(document, 'INVALID_MANIFEST', '');
  });

  it('a missing name', () => {
    const { name: _name, ...rest } = valid();
    const error = expectRefused(rest, 'INVALID_MANIFEST', '/name');
    expect(error.message).toContain('"name"');
  });

  it.each([
    ['uppercase', 'io.github.acme/Payments'],
    ['uppercase namespace', 'IO.github.acme/payments'],
    ['no namespace', 'payments'],
    ['non-reverse-DNS namespace (one label)', 'acme/payments'],
    ['namespace label starting with a hyphen', 'io.-acme/payments'],
    ['empty namespace label', 'io..acme/payments'],
    ['namespace with a TLD starting with a digit', '1io.acme/payments'],
    ['empty name after the slash', 'io.github.acme/'],
    ['two slashes', 'io.github.acme/payments/v2'],
    ['non-ASCII', 'io.github.acme/paiements-é'],
    ['whitespace', 'io.github.acme/pay ments'],
    ['too long', `io.github.acme/${'a'.repeat(200)}`],
  ])('a bad manifest name: %s', (_label, name) => {
    const error = expectRefused({ ...valid(), name }, 'INVALID_MANIFEST', '/name');
    expect(error.message).toContain('reverse-DNS');
  });

  it('a name that is not a string', () => {
    expectRefused({ ...valid(), name: 7 }, 'INVALID_MANIFEST', '/name');
  });

  it.each([
    'latest',
    '^1.2.0',
    '1.2',
    '~1.2.0',
    '>=1.0.0',
    'v1.2.0',
    '01.2.0',
    '1.2.0.0',
    '1.2.0-',
    '1.2.0-01',
    '',
    ' 1.2.0',
  ])('a bad version: %j', (version) => {
    const error = expectRefused({ ...valid(), version }, 'INVALID_MANIFEST', '/version');
    expect(error.message).toContain('Semantic Versioning 2.0.0');
  });

  it('a version that is a number', () => {
    expectRefused({ ...valid(), version: 1.2 }, 'INVALID_MANIFEST', '/version');
  });

  it('an empty tools array', () => {
    const error = expectRefused({ ...valid(), tools: [] }, 'INVALID_MANIFEST', '/tools');
    expect(error.message).toContain('at least 1');
  });

  it('missing tools, or tools not an array', () => {
    const { tools: _tools, ...rest } = valid();
    expectRefused(rest, 'INVALID_MANIFEST', '/tools');
    expectRefused({ ...valid(), tools: { create_payment: {} } }, 'INVALID_MANIFEST', '/tools');
  });

  it('a tool that is not an object', () => {
    const manifest = valid();
    (manifest.tools as unknown[])[1] = 'get_payment';
    expectRefused(manifest, 'INVALID_MANIFEST', '/tools/1');
  });

  it.each([
    ['type "array"', { type: 'array', items: {} }, '/tools/1/inputSchema/type'],
    ['type ["object"]', { type: ['object'] }, '/tools/1/inputSchema/type'],
    ['type ["object", "null"]', { type: ['object', 'null'] }, '/tools/1/inputSchema/type'],
    ['no type', { properties: { id: { type: 'string' } } }, '/tools/1/inputSchema/type'],
    ['a boolean schema', true, '/tools/1/inputSchema'],
    ['null', null, '/tools/1/inputSchema'],
  ])('an inputSchema root without "type": "object": %s', (_label, inputSchema, pointer) => {
    const manifest = valid();
    manifest.tools[1]!['inputSchema'] = inputSchema;
    const error = expectRefused(manifest, 'INVALID_MANIFEST', pointer);
    expect(error.message).toContain('"type": "object"');
  });

  it('a missing inputSchema', () => {
    const manifest = valid();
    delete manifest.tools[1]!['inputSchema'];
    expectRefused(manifest, 'INVALID_MANIFEST', '/tools/1/inputSchema');
  });

  it.each([
    ['an empty tool name', ''],
    ['a 129-character tool name', 'x'.repeat(129)],
    ['a tool name that is not a string', 12],
  ])('%s', (_label, name) => {
    expectRefused(
      withTool0((tool) => {
        tool['name'] = name;
      }),
      'INVALID_MANIFEST',
      '/tools/0/name',
    );
  });

  it('a money ceiling that is a float', () => {
    const error = expectRefused(
      withCapabilities({ money: { currencies: ['USD'], maxAmountMinorPerCall: 1.5 } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/money/maxAmountMinorPerCall',
    );
    expect(error.message).toContain('integer');
  });

  it('a money ceiling that is negative', () => {
    expectRefused(
      withCapabilities({ money: { currencies: ['USD'], maxAmountMinorPerCall: -1 } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/money/maxAmountMinorPerCall',
    );
  });

  it('a money ceiling that is a string', () => {
    expectRefused(
      withCapabilities({ money: { currencies: ['USD'], maxAmountMinorPerCall: '500.00' } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/money/maxAmountMinorPerCall',
    );
  });

  it('a money ceiling without currencies', () => {
    expectRefused(
      withCapabilities({ money: { maxAmountMinorPerCall: 100 } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/money/currencies',
    );
  });

  it.each([
    ['usd', '/tools/0/capabilities/money/currencies/0'],
    ['US', '/tools/0/capabilities/money/currencies/0'],
    ['EURO', '/tools/0/capabilities/money/currencies/0'],
  ])('a bad currency %j', (currency, pointer) => {
    const error = expectRefused(
      withCapabilities({ money: { currencies: [currency], maxAmountMinorPerCall: 100 } }),
      'INVALID_MANIFEST',
      pointer,
    );
    expect(error.message).toContain('ISO 4217');
  });

  it('a currency listed twice', () => {
    expectRefused(
      withCapabilities({ money: { currencies: ['USD', 'USD'] } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/money/currencies',
    );
  });

  it.each([
    'API.stripe.com',
    'https://api.stripe.com',
    'api.stripe.com/v1',
    'api.stripe.com:0',
    'api.stripe.com:65536',
    '*example.com',
    'a.*.example.com',
    '*.',
    'api.stripe.com.',
    '',
    '-bad.example',
    'api_stripe.com',
  ])('a bad host pattern %j', (host) => {
    expectRefused(
      withCapabilities({ network: { hosts: ['ok.example', host] } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/network/hosts/1',
    );
  });

  it.each([
    'data/**',
    '/data/',
    '//data',
    '/data/../etc',
    '/data/./x',
    '/..',
    '/data/**.csv',
    '/data/a**',
    '/data/***',
    '/data/file?.txt',
    '/data/[ab]',
    '/data/{a,b}',
    'C:\\data',
    '/data/a\nb',
    '~/data',
  ])('a bad filesystem path %j', (path) => {
    expectRefused(
      withCapabilities({ filesystem: { read: ['/ok'], write: [path] } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/filesystem/write/0',
    );
  });

  it.each(['stripe_api_key', '1KEY', 'STRIPE-KEY', 'KEY NAME', ''])('a bad environment variable name %j', (name) => {
    expectRefused(
      withCapabilities({ secrets: { env: [name] } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/secrets/env/0',
    );
  });

  it.each([
    ['capabilities', [], '/tools/0/capabilities'],
    ['network', { hosts: 'api.stripe.com' }, '/tools/0/capabilities/network/hosts'],
    ['filesystem', { read: '/data' }, '/tools/0/capabilities/filesystem/read'],
  ])('a capabilities member of the wrong type: %s', (_label, value, pointer) => {
    const capabilities = _label === 'capabilities' ? value : { [_label]: value };
    expectRefused(withCapabilities(capabilities), 'INVALID_MANIFEST', pointer);
  });

  it.each([
    [
      'annotations.readOnlyHint as a string',
      { annotations: { readOnlyHint: 'true' } },
      '/tools/0/annotations/readOnlyHint',
    ],
    ['annotations as an array', { annotations: [] }, '/tools/0/annotations'],
    ['outputSchema as a number', { outputSchema: 1 }, '/tools/0/outputSchema'],
    ['_meta as an array', { _meta: [] }, '/tools/0/_meta'],
    ['an icon without src', { icons: [{ mimeType: 'image/png' }] }, '/tools/0/icons/0/src'],
    ['an icon theme that is not light or dark', { icons: [{ src: 'x', theme: 'sepia' }] }, '/tools/0/icons/0/theme'],
    ['icon sizes as a string', { icons: [{ src: 'x', sizes: '48x48' }] }, '/tools/0/icons/0/sizes'],
    ['execution.taskSupport "always"', { execution: { taskSupport: 'always' } }, '/tools/0/execution/taskSupport'],
    ['a title that is not a string', { title: 5 }, '/tools/0/title'],
  ])('a bad MCP Tool field: %s', (_label, fields, pointer) => {
    expectRefused(
      withTool0((tool) => Object.assign(tool, fields)),
      'INVALID_MANIFEST',
      pointer,
    );
  });

  it('a manifest description that is not a string', () => {
    expectRefused({ ...valid(), description: ['payments'] }, 'INVALID_MANIFEST', '/description');
  });
});

describe('manifestSchemaV1', () => {
  it('is the draft 2020-12 schema with its $id', () => {
    expect(manifestSchemaV1.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(manifestSchemaV1.$id).toBe(MANIFEST_SCHEMA_V1_ID);
    expect(manifestSchemaV1.additionalProperties).toBe(false);
  });

  it('is the file in schema/', () => {
    const file: unknown = JSON.parse(
      readFileSync(new URL('../../schema/manifest-v1.schema.json', import.meta.url), 'utf8'),
    );
    expect(manifestSchemaV1).toEqual(file);
  });
});

describe('checkEnvelope: approval classification and money arguments (issue 13 §1)', () => {
  const money = { currencies: ['USD'], maxAmountMinorPerCall: 50000, amountArgument: '/amount_minor' };
  const withApproval = (approval: unknown, capabilities: unknown = { money }): unknown =>
    withTool0((tool) => {
      tool['approval'] = approval;
      tool['capabilities'] = capabilities;
    });

  it('accepts a classification with wildcards and escaped tokens, and the money arguments', () => {
    const value = withApproval(
      { informational: ['/note', '/lines/*/memo', '/a~1b~0c'], unordered: ['/tags', '/lines/*/labels'] },
      { money: { ...money, currencyArgument: '/currency' } },
    );
    expect(() => checkEnvelope(parse(value))).not.toThrow();
    expect(() => checkEnvelope(parse(withApproval({})))).not.toThrow();
  });

  it('an unknown member of approval', () => {
    expectRefused(withApproval({ material: ['/amount'] }), 'UNKNOWN_FIELD', '/tools/0/approval/material');
  });

  it.each([['note'], [''], ['/a~2'], ['/a~']])('an informational pointer %j that is not a pointer', (pointer) => {
    expectRefused(withApproval({ informational: [pointer] }), 'INVALID_MANIFEST', '/tools/0/approval/informational/0');
  });

  it('a pointer listed twice', () => {
    expectRefused(withApproval({ unordered: ['/tags', '/tags'] }), 'INVALID_MANIFEST', '/tools/0/approval/unordered');
  });

  it('more than 256 pointers', () => {
    const many = Array.from({ length: 257 }, (_, i) => `/m${i}`);
    expectRefused(withApproval({ informational: many }), 'INVALID_MANIFEST', '/tools/0/approval/informational');
  });

  it('an amountArgument without a ceiling, and a currencyArgument without currencies', () => {
    expectRefused(
      withCapabilities({ money: { currencies: ['USD'], amountArgument: '/amount_minor' } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/money/maxAmountMinorPerCall',
    );
    expectRefused(
      withCapabilities({ money: { currencyArgument: '/currency' } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/money/currencies',
    );
  });

  it.each([['/lines/*'], ['*'], ['amount'], ['']])('a money pointer %j with a wildcard or not a pointer', (pointer) => {
    expectRefused(
      withCapabilities({ money: { ...money, amountArgument: pointer } }),
      'INVALID_MANIFEST',
      '/tools/0/capabilities/money/amountArgument',
    );
  });

  it.each([['/amount_minor'], ['/*']])('an informational pattern %j that covers the amount', (pattern) => {
    const error = expectRefused(
      withApproval({ informational: ['/note', pattern] }),
      'INVALID_MANIFEST',
      '/tools/0/approval/informational/1',
    );
    expect(error.message).toContain('material');
  });

  it('an informational pattern that covers the currency (a prefix of it)', () => {
    expectRefused(
      withApproval({ informational: ['/payment'] }, { money: { ...money, currencyArgument: '/payment/currency' } }),
      'INVALID_MANIFEST',
      '/tools/0/approval/informational/0',
    );
  });
});

// Generates manifests/large-catalog.json: one manifest of 120 tools (12 resources × 10 actions) for tests and benchmarks.
//
// How it was generated: `npx tsx scripts/generate-large-manifest.ts` (run from the repository root) wrote the
// committed file. The output is a pure function of the tables below (no randomness, no clock, no environment), so
// running the script again reproduces the file byte for byte; `--check` exits 1 if the committed file differs.
// The manifest passes the closed envelope check before it is written, and its schemas use local `$defs`/`$ref`
// (create and update tools), integer minor-unit amounts with a money ceiling (billing resources), explicit empty
// capability lists ("none") and filesystem write globs (export tools), so it exercises every later stage at size.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkEnvelope, type Manifest, type ManifestTool, type ToolCapabilities } from '../src/pipeline/envelope.ts';
import type { JsonObject } from '../src/core/json.ts';
import { parseStrict } from '../src/pipeline/parse.ts';

const OUTPUT = fileURLToPath(new URL('../manifests/large-catalog.json', import.meta.url));

interface Resource {
  /** snake_case singular, used in tool names. */
  name: string;
  plural: string;
  /** The fields of one record, as JSON Schemas. */
  fields: Record<string, JsonObject>;
  required: string[];
  /** Records carry money amounts: the tool moves money when it writes them. */
  money?: boolean;
}

const resources: Resource[] = [
  {
    name: 'invoice',
    plural: 'invoices',
    fields: {
      customer_id: { type: 'string', pattern: '^cus_[a-z0-9]{12}$' },
      currency: { type: 'string', enum: ['USD', 'EUR', 'GBP'] },
      amount_minor: {
        type: 'integer',
        minimum: 0,
        maximum: 250000,
        description: 'Total in minor units of the currency',
      },
      due_date: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' },
      memo: { type: 'string', maxLength: 500 },
    },
    required: ['customer_id', 'currency', 'amount_minor'],
    money: true,
  },
  {
    name: 'customer',
    plural: 'customers',
    fields: {
      display_name: { type: 'string', minLength: 1, maxLength: 200 },
      email: { type: 'string', maxLength: 320 },
      country: { type: 'string', pattern: '^[A-Z]{2}$' },
      tax_exempt: { type: 'boolean', default: false },
    },
    required: ['display_name'],
  },
  {
    name: 'ticket',
    plural: 'tickets',
    fields: {
      subject: { type: 'string', minLength: 1, maxLength: 200 },
      body: { type: 'string' },
      priority: { type: 'string', enum: ['low', 'normal', 'high', 'urgent'], default: 'normal' },
      assignee: { type: 'string' },
    },
    required: ['subject'],
  },
  {
    name: 'deployment',
    plural: 'deployments',
    fields: {
      service: { type: 'string', pattern: '^[a-z][a-z0-9-]{1,62}$' },
      image: { type: 'string' },
      replicas: { type: 'integer', minimum: 0, maximum: 64 },
      environment: { type: 'string', enum: ['staging', 'production'] },
    },
    required: ['service', 'image', 'environment'],
  },
  {
    name: 'incident',
    plural: 'incidents',
    fields: {
      title: { type: 'string', minLength: 1 },
      severity: { type: 'integer', minimum: 1, maximum: 5 },
      services: { type: 'array', items: { type: 'string' }, uniqueItems: true },
      status: { type: 'string', enum: ['open', 'mitigated', 'resolved'] },
    },
    required: ['title', 'severity'],
  },
  {
    name: 'repository',
    plural: 'repositories',
    fields: {
      owner: { type: 'string' },
      repo: { type: 'string' },
      private: { type: 'boolean' },
      default_branch: { type: 'string', default: 'main' },
    },
    required: ['owner', 'repo'],
  },
  {
    name: 'dataset',
    plural: 'datasets',
    fields: {
      title: { type: 'string' },
      format: { type: 'string', enum: ['csv', 'parquet', 'jsonl'] },
      row_count: { type: 'integer', minimum: 0 },
      license: { type: 'string' },
    },
    required: ['title', 'format'],
  },
  {
    name: 'report',
    plural: 'reports',
    fields: {
      title: { type: 'string' },
      period_start: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' },
      period_end: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' },
      sections: { type: 'array', items: { type: 'string' }, maxItems: 20 },
    },
    required: ['title', 'period_start', 'period_end'],
  },
  {
    name: 'alert',
    plural: 'alerts',
    fields: {
      metric: { type: 'string' },
      threshold: { type: 'number' },
      comparison: { type: 'string', enum: ['gt', 'gte', 'lt', 'lte'] },
      window_seconds: { type: 'integer', minimum: 60, maximum: 86400 },
    },
    required: ['metric', 'threshold', 'comparison'],
  },
  {
    name: 'bucket',
    plural: 'buckets',
    fields: {
      bucket_name: { type: 'string', pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' },
      region: { type: 'string', enum: ['eu-west-1', 'us-east-1', 'ap-southeast-2'] },
      versioning: { type: 'boolean', default: true },
    },
    required: ['bucket_name', 'region'],
  },
  {
    name: 'user',
    plural: 'users',
    fields: {
      login: { type: 'string', pattern: '^[a-z][a-z0-9_]{2,31}$' },
      full_name: { type: 'string' },
      role: { type: 'string', enum: ['viewer', 'editor', 'admin'], default: 'viewer' },
    },
    required: ['login'],
  },
  {
    name: 'order',
    plural: 'orders',
    fields: {
      customer_id: { type: 'string', pattern: '^cus_[a-z0-9]{12}$' },
      currency: { type: 'string', enum: ['USD', 'EUR', 'GBP'] },
      lines: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          properties: {
            sku: { type: 'string' },
            quantity: { type: 'integer', minimum: 1, maximum: 1000 },
            unit_price_minor: { type: 'integer', minimum: 0, maximum: 250000 },
          },
          required: ['sku', 'quantity', 'unit_price_minor'],
          additionalProperties: false,
        },
      },
    },
    required: ['customer_id', 'currency', 'lines'],
    money: true,
  },
];

type Action = 'list' | 'get' | 'search' | 'audit' | 'create' | 'update' | 'archive' | 'restore' | 'delete' | 'export';
const actions: Action[] = [
  'list',
  'get',
  'search',
  'audit',
  'create',
  'update',
  'archive',
  'restore',
  'delete',
  'export',
];

const readOnly = new Set<Action>(['list', 'get', 'search', 'audit']);
const MONEY_CEILING_MINOR = 250000;

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function idField(resource: Resource): JsonObject {
  return {
    type: 'string',
    pattern: `^${resource.name.slice(0, 3)}_[a-z0-9]{16}$`,
    description: `The ${resource.name} id`,
  };
}

function pagination(): Record<string, JsonObject> {
  return {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
    cursor: { type: 'string', description: 'Opaque cursor from the previous page' },
  };
}

function inputSchema(resource: Resource, action: Action): JsonObject & { type: 'object' } {
  const id = `${resource.name}_id`;
  switch (action) {
    case 'list':
      return { type: 'object', properties: { ...pagination() }, additionalProperties: false };
    case 'search':
      return {
        type: 'object',
        properties: { query: { type: 'string', minLength: 1 }, ...pagination() },
        required: ['query'],
        additionalProperties: false,
      };
    case 'get':
    case 'archive':
    case 'restore':
    case 'delete':
      return { type: 'object', properties: { [id]: idField(resource) }, required: [id], additionalProperties: false };
    case 'audit':
      return {
        type: 'object',
        properties: {
          [id]: idField(resource),
          since: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' },
        },
        required: [id],
        additionalProperties: false,
      };
    case 'create':
      return {
        type: 'object',
        properties: { [resource.name]: { $ref: `#/$defs/${resource.name}` } },
        required: [resource.name],
        additionalProperties: false,
        $defs: { [resource.name]: record(resource, resource.required) },
      };
    case 'update':
      return {
        type: 'object',
        properties: { [id]: idField(resource), changes: { $ref: `#/$defs/${resource.name}`, minProperties: 1 } },
        required: [id, 'changes'],
        additionalProperties: false,
        $defs: { [resource.name]: record(resource, []) },
      };
    case 'export':
      return {
        type: 'object',
        properties: {
          format: { type: 'string', enum: ['csv', 'jsonl'], default: 'csv' },
          include_archived: { type: 'boolean', default: false },
        },
        additionalProperties: false,
      };
  }
}

function record(resource: Resource, required: string[]): JsonObject {
  const schema: JsonObject = { type: 'object', properties: resource.fields, additionalProperties: false };
  if (required.length > 0) schema['required'] = required;
  return schema;
}

function outputSchema(resource: Resource, action: Action): JsonObject | undefined {
  const summary: JsonObject = {
    type: 'object',
    properties: { id: { type: 'string' }, updated_at: { type: 'string' } },
    required: ['id'],
  };
  switch (action) {
    case 'get':
      return { type: 'object', properties: { id: { type: 'string' }, ...resource.fields }, required: ['id'] };
    case 'list':
    case 'search':
      return {
        type: 'object',
        properties: { items: { type: 'array', items: summary }, next_cursor: { type: ['string', 'null'] } },
        required: ['items'],
      };
    case 'export':
      return {
        type: 'object',
        properties: { path: { type: 'string' }, rows: { type: 'integer', minimum: 0 } },
        required: ['path', 'rows'],
      };
    default:
      return undefined;
  }
}

function capabilities(resource: Resource, action: Action): ToolCapabilities {
  const movesMoney = resource.money === true && (action === 'create' || action === 'update' || action === 'restore');
  return {
    network: { hosts: [`${resource.plural}.api.acme.example:443`] },
    filesystem:
      action === 'export'
        ? {
            read: [],
            write: [`/var/acme/exports/${resource.plural}/*.csv`, `/var/acme/exports/${resource.plural}/*.jsonl`],
          }
        : { read: [], write: [] },
    secrets: { env: [`ACME_${resource.name.toUpperCase()}_TOKEN`] },
    money: movesMoney
      ? {
          currencies: ['USD', 'EUR', 'GBP'],
          maxAmountMinorPerCall: MONEY_CEILING_MINOR,
          ...moneyArguments(resource, action),
        }
      : { currencies: [] },
  };
}

/**
 * The money arguments a create call carries (docs/manifest-format.md "Money"): only where the record has one required
 * amount (an invoice's total); an order's amount is spread over its lines and an update may omit it, so those tools
 * declare none and a money policy always asks for approval.
 */
function moneyArguments(resource: Resource, action: Action): { amountArgument?: string; currencyArgument?: string } {
  if (action !== 'create' || !resource.required.includes('amount_minor')) return {};
  return { amountArgument: `/${resource.name}/amount_minor`, currencyArgument: `/${resource.name}/currency` };
}

const descriptions: Record<Action, (r: Resource) => string> = {
  list: (r) => `List ${r.plural}, newest first, one page at a time.`,
  get: (r) => `Fetch one ${r.name} by id.`,
  search: (r) => `Full-text search over ${r.plural}.`,
  audit: (r) => `Return the audit trail of one ${r.name}: who changed what, and when.`,
  create: (r) => `Create a ${r.name}.${r.money === true ? ' Amounts are integers in minor units.' : ''}`,
  update: (r) => `Change some fields of a ${r.name}; fields not listed keep their value.`,
  archive: (r) => `Archive a ${r.name}: it disappears from lists but can be restored.`,
  restore: (r) => `Restore an archived ${r.name}.`,
  delete: (r) => `Delete a ${r.name} permanently. This cannot be undone.`,
  export: (r) => `Export every ${r.name} to a file under /var/acme/exports/${r.plural}.`,
};

function tool(resource: Resource, action: Action): ManifestTool {
  const result: ManifestTool = {
    name: `${action}_${resource.name}`,
    title: `${capitalise(action)} ${resource.name}`,
    description: descriptions[action](resource),
    inputSchema: inputSchema(resource, action),
  };
  const output = outputSchema(resource, action);
  if (output !== undefined) result.outputSchema = output;
  result.annotations = readOnly.has(action)
    ? { readOnlyHint: true, openWorldHint: false }
    : {
        readOnlyHint: false,
        destructiveHint: action === 'delete' || action === 'update',
        idempotentHint: action !== 'create' && action !== 'export',
        openWorldHint: false,
      };
  if (action === 'export') result.execution = { taskSupport: 'optional' };
  result.capabilities = capabilities(resource, action);
  return result;
}

export function buildLargeManifest(): Manifest {
  const tools: ManifestTool[] = [];
  for (const resource of resources) for (const action of actions) tools.push(tool(resource, action));
  return {
    name: 'io.github.acme/ops-catalog',
    version: '3.1.0',
    description: `Acme operations catalog: ${tools.length} tools over ${resources.length} resources (generated by scripts/generate-large-manifest.ts).`,
    tools,
  };
}

function main(): void {
  const text = `${JSON.stringify(buildLargeManifest(), null, 2)}\n`;
  const bytes = new TextEncoder().encode(text);
  checkEnvelope(parseStrict(bytes)); // throws (with code and pointer) if the generator drifts from the format
  if (process.argv.includes('--check')) {
    const current = readFileSync(OUTPUT, 'utf8');
    if (current !== text) {
      process.stderr.write(
        'manifests/large-catalog.json is out of date: run `npx tsx scripts/generate-large-manifest.ts`\n',
      );
      process.exitCode = 1;
    }
    return;
  }
  writeFileSync(OUTPUT, text);
  process.stdout.write(`wrote manifests/large-catalog.json (${bytes.byteLength} bytes)\n`);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) main();

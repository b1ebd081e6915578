// The OpenAPI 3.1 document of the registry's API (GET /openapi.json), written from the operation table the routes are
// mounted from (operations.ts), the wire schemas (protocol/wire-schemas.ts, JSON Schema 2020-12, OpenAPI 3.1's
// dialect), the manifest's own JSON Schema and the code → status table (problem.ts): nothing in it is written twice.

import { createRequire } from 'node:module';
import { z } from 'zod';
import type { ErrorCode } from '../core/errors.ts';
import { PROBLEM_CONTENT_TYPE, problemTypeOf } from '../protocol/problem.ts';
import {
  actionEnvelopeSchema,
  approvalCreatedResponseSchema,
  approvalDecisionRequestSchema,
  approvalListResponseSchema,
  approvalResponseSchema,
  approvalTransitionResponseSchema,
  bindingsResponseSchema,
  consistencyProofResponseSchema,
  flattenedJwsSchema,
  healthResponseSchema,
  inclusionProofResponseSchema,
  jwksSchema,
  manifestListResponseSchema,
  officialNotFoundSchema,
  officialServerListSchema,
  officialServerResponseSchema,
  problemSchema,
  publishResponseSchema,
  versionListResponseSchema,
  whoamiResponseSchema,
  yankRequestSchema,
  yankResponseSchema,
} from '../protocol/wire-schemas.ts';
import {
  type AnswerSpec,
  type ComponentName,
  EVERY_ROUTE_CODES,
  type OperationSpec,
  type SchemaSpec,
} from './operation-spec.ts';
import { OPERATIONS } from './operations.ts';
import { httpStatusByCode } from './problem.ts';

type JsonSchema = Record<string, unknown>;

export const OPENAPI_VERSION = '3.1.1';
const COMPONENT_PREFIX = '#/components/schemas/';

/** The zod-described components (every ComponentName but those built otherwise below). */
const ZOD_COMPONENTS = {
  Problem: problemSchema,
  FlattenedJws: flattenedJwsSchema,
  PublishResponse: publishResponseSchema,
  ManifestListResponse: manifestListResponseSchema,
  VersionListResponse: versionListResponseSchema,
  YankRequest: yankRequestSchema,
  YankResponse: yankResponseSchema,
  BindingsResponse: bindingsResponseSchema,
  HealthResponse: healthResponseSchema,
  Jwks: jwksSchema,
  InclusionProofResponse: inclusionProofResponseSchema,
  ConsistencyProofResponse: consistencyProofResponseSchema,
  WhoamiResponse: whoamiResponseSchema,
  ActionEnvelope: actionEnvelopeSchema,
  ApprovalCreatedResponse: approvalCreatedResponseSchema,
  ApprovalResponse: approvalResponseSchema,
  ApprovalListResponse: approvalListResponseSchema,
  ApprovalDecisionRequest: approvalDecisionRequestSchema,
  ApprovalTransitionResponse: approvalTransitionResponseSchema,
  OfficialServerList: officialServerListSchema,
  OfficialServerResponse: officialServerResponseSchema,
  OfficialNotFound: officialNotFoundSchema,
} satisfies Record<Exclude<ComponentName, 'Manifest' | 'OpenApiDocument'>, z.ZodType>;

/** The document for a registry at `origin` (its `servers` entry). Pure: the same table gives the same document. */
export function buildOpenApiDocument(origin: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of Object.values(OPERATIONS) as OperationSpec[]) {
    const { path, parameters } = convertPath(operation);
    const item = paths[path] ?? {};
    paths[path] = item;
    if (item[operation.method] !== undefined) throw new Error(`two operations for ${operation.method} ${path}`);
    item[operation.method] = describeOperation(operation, parameters);
    if (operation.cors === true) item['options'] = describePreflight(operation, parameters);
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: 'toolseal registry API',
      version: '1',
      description:
        'A registry of signed MCP tool manifests. Every refusal is RFC 9457 application/problem+json with a stable ' +
        '`code`; each operation lists the codes it can answer, grouped by HTTP status. A known path asked with ' +
        'another method answers 405 METHOD_NOT_ALLOWED with Allow; an unknown path 404 NOT_FOUND. Every GET also ' +
        'answers HEAD.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: origin }],
    tags: [
      { name: 'registry', description: 'manifests: publish, read, yank' },
      { name: 'log', description: 'the transparency log (C2SP tlog-tiles, RFC 9162 proofs)' },
      { name: 'approvals', description: 'the approval service (docs/approvals.md)' },
      { name: 'mcp-registry', description: 'the MCP Registry read API (v0.1), for the official clients' },
      { name: 'meta', description: 'health, keys and this document' },
    ],
    paths,
    components: {
      schemas: buildComponents(),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            "A principal's token (publisher, operator or host; RFC 6750 §2.1). Publishing also takes a CI's OIDC ID " +
            'token when trusted publishing is on (docs/trusted-publishing.md).',
        },
      },
    },
  };
}

function buildComponents(): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(ZOD_COMPONENTS)) registry.add(schema, { id });
  const generated = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    uri: (id) => `${COMPONENT_PREFIX}${id}`,
  }).schemas as Record<string, JsonSchema>;
  const components: Record<string, JsonSchema> = {};
  for (const [id, schema] of Object.entries(generated)) {
    // Each is a schema of this document: no `$id` of its own (a fragment is no base URI) and the document's dialect.
    const { $id: _id, $schema: _schema, ...rest } = schema;
    components[id] = rest;
  }
  components['Manifest'] = readManifestSchema();
  components['OpenApiDocument'] = {
    type: 'object',
    required: ['openapi', 'info', 'paths'],
    properties: { openapi: { const: OPENAPI_VERSION } },
  };
  return components;
}

/** schema/manifest-v1.schema.json as shipped (its own `$id`, so its `#/$defs/…` refs resolve inside it). */
function readManifestSchema(): JsonSchema {
  const schema = createRequire(import.meta.url)('../../schema/manifest-v1.schema.json') as JsonSchema;
  return structuredClone(schema);
}

interface PathParameter {
  name: string;
  pattern: string | undefined;
}

/** A Hono pattern as an OpenAPI path template: `:name{regex}` → `{name}` (the regex its pattern), `*` → `{wildcard}`. */
export function convertPath(operation: OperationSpec): { path: string; parameters: PathParameter[] } {
  const parameters: PathParameter[] = [];
  const segments = operation.path.split('/').map((segment) => {
    if (segment === '*') {
      if (operation.wildcard === undefined) throw new Error(`${operation.path}: name its wildcard`);
      parameters.push({ name: operation.wildcard.name, pattern: undefined });
      return `{${operation.wildcard.name}}`;
    }
    if (!segment.startsWith(':')) return segment;
    const brace = segment.indexOf('{');
    const name = brace < 0 ? segment.slice(1) : segment.slice(1, brace);
    const regex = brace < 0 ? undefined : segment.slice(brace + 1, -1);
    parameters.push({ name, pattern: regex === undefined ? undefined : `^${regex}$` });
    return `{${name}}`;
  });
  return { path: segments.join('/'), parameters };
}

function describeOperation(operation: OperationSpec, pathParameters: PathParameter[]): JsonSchema {
  const parameters = [
    ...pathParameters.map((parameter) => describePathParameter(operation, parameter)),
    ...Object.entries(operation.query ?? {}).map(([name, spec]) => ({
      name,
      in: 'query',
      required: spec.required === true,
      description: spec.description,
      schema: spec.schema ?? { type: 'string' },
    })),
  ];
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    tags: [operation.tag],
    ...(operation.caller === 'anyone'
      ? { security: [] }
      : { security: [{ bearer: [] }], description: `Needs a bearer token: ${operation.caller}.` }),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(operation.body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            description:
              operation.body.maxBytes === undefined
                ? operation.body.description
                : `${operation.body.description}; at most ${operation.body.maxBytes} bytes (TOO_LARGE beyond)`,
            content: { 'application/json': { schema: referTo(operation.body.schema) } },
          },
        }),
    responses: describeResponses(operation),
  };
}

function describePathParameter(operation: OperationSpec, parameter: PathParameter): JsonSchema {
  const spec =
    operation.wildcard?.name === parameter.name ? operation.wildcard : operation.pathParams?.[parameter.name];
  if (spec === undefined) throw new Error(`${operation.path}: describe the path parameter ${parameter.name}`);
  const schema = {
    type: 'string',
    ...spec.schema,
    ...(parameter.pattern === undefined ? {} : { pattern: parameter.pattern }),
  };
  return { name: parameter.name, in: 'path', required: true, description: spec.description, schema };
}

/** The operation's answers, then one response per status of its problem codes (each narrowed to those codes). */
function describeResponses(operation: OperationSpec): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, answer] of Object.entries(operation.answers)) responses[status] = describeAnswer(answer);
  for (const [status, codes] of groupByStatus([...EVERY_ROUTE_CODES, ...operation.problems])) {
    if (responses[status] !== undefined)
      throw new Error(`${operation.operationId}: ${status} is both an answer and a problem`);
    responses[status] = describeProblems(status, codes);
  }
  return responses;
}

function describeAnswer(answer: AnswerSpec): JsonSchema {
  return {
    description: answer.description,
    ...(answer.headers === undefined ? {} : { headers: describeHeaders(answer.headers, true) }),
    ...(answer.content === undefined
      ? {}
      : {
          content: Object.fromEntries(
            Object.entries(answer.content).map(([mediaType, schema]) => [mediaType, { schema: referTo(schema) }]),
          ),
        }),
  };
}

/** Response headers; `required` when the answer always carries them (a problem's may depend on its code). */
function describeHeaders(headers: Readonly<Record<string, string>>, required = false): JsonSchema {
  return Object.fromEntries(
    Object.entries(headers).map(([name, description]) => [
      name,
      { description, ...(required ? { required: true } : {}), schema: { type: 'string' } },
    ]),
  );
}

/** The problem response for one status: the Problem schema with `status` and `code` narrowed to what is listed. */
function describeProblems(status: number, codes: readonly ErrorCode[]): JsonSchema {
  const headers: Record<string, string> = {};
  if (codes.includes('UNAUTHENTICATED')) headers['WWW-Authenticate'] = 'Bearer realm="toolseal"';
  if (codes.includes('SERVER_BUSY')) headers['Retry-After'] = 'SERVER_BUSY: seconds before asking again';
  return {
    description: codes.join(', '),
    ...(Object.keys(headers).length === 0 ? {} : { headers: describeHeaders(headers) }),
    content: {
      [PROBLEM_CONTENT_TYPE]: {
        schema: {
          allOf: [
            { $ref: `${COMPONENT_PREFIX}Problem` },
            {
              properties: {
                status: { const: status },
                code: { enum: [...codes] },
                type: { enum: codes.map(problemTypeOf) },
              },
            },
          ],
        },
      },
    },
  };
}

/** Codes by their HTTP status (problem.ts), each list in table order without repeats; statuses ascending. */
export function groupByStatus(codes: readonly ErrorCode[]): [number, ErrorCode[]][] {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = httpStatusByCode[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return [...byStatus].sort(([a], [b]) => a - b);
}

function describePreflight(operation: OperationSpec, pathParameters: PathParameter[]): JsonSchema {
  return {
    operationId: `${operation.operationId}Preflight`,
    summary: 'CORS preflight (Fetch standard §3.2)',
    tags: [operation.tag],
    security: [],
    ...(pathParameters.length > 0
      ? { parameters: pathParameters.map((parameter) => describePathParameter(operation, parameter)) }
      : {}),
    responses: {
      204: {
        description: 'the CORS headers, no body',
        headers: describeHeaders(
          {
            'Access-Control-Allow-Origin': '`*`',
            'Access-Control-Allow-Methods': '`GET, OPTIONS`',
            'Access-Control-Allow-Headers': '`Authorization, Content-Type`',
          },
          true,
        ),
      },
    },
  };
}

function referTo(schema: SchemaSpec): JsonSchema {
  return typeof schema === 'string' ? { $ref: `${COMPONENT_PREFIX}${schema}` } : { ...schema.inline };
}

// The vendored MCP Registry OpenAPI document (test/vectors/mcp-registry/openapi.yaml 2025-12-01) compiled with ajv as
// JSON Schema 2020-12 (the dialect the document declares): the validators the official read API tests share.

import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { load as loadYaml } from 'js-yaml';
import { expect } from 'vitest';
import { vectorPath } from './pipeline-helpers.ts';

export const openapi = loadYaml(readFileSync(vectorPath('mcp-registry', 'openapi.yaml'), 'utf8')) as Record<
  string,
  unknown
>;
const OPENAPI_ID = openapi['$id'] as string;
const ajv = new Ajv2020({ strict: false, allErrors: true });
formatsPlugin.default(ajv);
ajv.addSchema(openapi as object);

/** The compiled schema at a JSON pointer into the OpenAPI document. */
export function schemaAt(pointer: string): ValidateFunction {
  const validate = ajv.getSchema(`${OPENAPI_ID}#${pointer}`);
  if (validate === undefined) throw new Error(`no schema at ${pointer}`);
  return validate;
}

export const validateServerResponse = schemaAt('/components/schemas/ServerResponse');
export const validateServerList = schemaAt('/components/schemas/ServerList');
/** The 404 body schemas of the two per-server routes. */
export const notFoundPointers = [
  '/paths/~1v0.1~1servers~1{serverName}~1versions/get/responses/404/content/application~1json/schema',
  '/paths/~1v0.1~1servers~1{serverName}~1versions~1{version}/get/responses/404/content/application~1json/schema',
];

export function expectValid(validate: ValidateFunction, value: unknown): void {
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
}

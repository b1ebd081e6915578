// A call's arguments against the SIGNED inputSchema (issue §2), with ajv: the dialect from `$schema` (2020-12 when
// absent; 2019-09 and draft-07 too), formats as ajv-formats checks them, no defaults applied and no coercion (what
// is sent is what is approved). Refuses with ARGUMENTS_INVALID and the pointer (into `arguments`) of the first error.

import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { ToolsealError } from '../core/errors.ts';
import { escapePointerToken } from '../core/json-pointer.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';

const ajvOptions: Options = {
  strict: false, // a vendor's schema may use keywords ajv does not know: they are annotations, as in the spec
  allErrors: false,
  useDefaults: false,
  coerceTypes: false,
  removeAdditional: false,
  validateFormats: true,
  allowUnionTypes: true,
  logger: false,
};

type AjvClass = new (options: Options) => Ajv;

const dialects: ReadonlyMap<string, AjvClass> = new Map<string, AjvClass>([
  ['https://json-schema.org/draft/2020-12/schema', Ajv2020 as unknown as AjvClass],
  ['https://json-schema.org/draft/2019-09/schema', Ajv2019 as unknown as AjvClass],
  ['http://json-schema.org/draft-07/schema', Ajv],
]);

/** Compiled validators, by tool digest (bounded: the oldest goes first). */
const validators = new Map<string, ValidateFunction>();
const MAX_CACHED_VALIDATORS = 256;

/**
 * Assert that `args` is valid under `inputSchema`. `cacheKey` (the tool digest) names the schema: one compile per
 * signed tool. A schema ajv cannot compile, or of another dialect, refuses every call (fail closed).
 */
export function checkArguments(inputSchema: JsonObject, args: JsonValue, cacheKey: string): void {
  let validate = validators.get(cacheKey);
  if (validate === undefined) {
    validate = compileInputSchema(inputSchema);
    if (validators.size >= MAX_CACHED_VALIDATORS) validators.delete(validators.keys().next().value as string);
    validators.set(cacheKey, validate);
  }
  if (validate(args)) return;
  throw refusalFor(validate.errors?.[0]);
}

function compileInputSchema(inputSchema: JsonObject): ValidateFunction {
  const declared = inputSchema['$schema'];
  const dialect = typeof declared === 'string' ? declared.replace(/#$/, '') : dialects.keys().next().value;
  const AjvForDialect = dialect === undefined ? undefined : dialects.get(dialect);
  if (AjvForDialect === undefined) {
    throw new ToolsealError(
      'ARGUMENTS_INVALID',
      `the signed inputSchema declares $schema ${JSON.stringify(declared)}: arguments can be checked against 2020-12, 2019-09 or draft-07 only`,
      { pointer: '' },
    );
  }
  // One instance per schema: no `$id` of one tool's schema can collide with or resolve into another's.
  const ajv = new AjvForDialect(ajvOptions);
  formatsPlugin.default(ajv);
  try {
    return ajv.compile(inputSchema);
  } catch (cause) {
    throw new ToolsealError('ARGUMENTS_INVALID', 'the signed inputSchema cannot be compiled as a JSON Schema', {
      pointer: '',
      cause,
    });
  }
}

function refusalFor(error: ErrorObject | undefined): ToolsealError {
  if (error === undefined) {
    return new ToolsealError('ARGUMENTS_INVALID', 'the arguments do not match the signed inputSchema', {
      pointer: '',
    });
  }
  const params = error.params as Record<string, unknown>;
  const member =
    params['missingProperty'] ??
    params['additionalProperty'] ??
    params['unevaluatedProperty'] ??
    params['propertyName'];
  const pointer =
    typeof member === 'string' ? `${error.instancePath}/${escapePointerToken(member)}` : error.instancePath;
  const what = error.keyword === 'required' ? 'is required' : (error.message ?? 'is not valid');
  return new ToolsealError(
    'ARGUMENTS_INVALID',
    `arguments${pointer === '' ? '' : ` at ${pointer}`}: ${what} (inputSchema keyword ${error.keyword})`,
    { pointer },
  );
}

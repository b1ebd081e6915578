// An answer of the registry's API checked against its OpenAPI document (src/http/openapi.ts; issue 29 item 4): the
// operation a request reaches, its status documented for that operation, the media type listed for that status, the
// headers it always carries, and the body valid (ajv, JSON Schema 2020-12) against the document's schema. Used by
// test/http/openapi.test.ts and by createTestEnv, whose app checks every answer the suite's tests receive.

import { Ajv2020 } from 'ajv/dist/2020.js';
import formatsPlugin from 'ajv-formats';
import { expect } from 'vitest';
import { buildOpenApiDocument } from '../../src/http/openapi.ts';

type Json = Record<string, unknown>;
export interface DocumentedOperation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema: Json }[];
  requestBody?: { content: Record<string, { schema: Json }> };
  responses: Record<string, { content?: Record<string, { schema: Json }>; headers?: Record<string, Json> }>;
}
export type OpenApiDocument = Json & { paths: Record<string, Record<string, DocumentedOperation>> };

export interface FoundOperation {
  template: string;
  method: string;
  operation: DocumentedOperation;
  /** Path parameter values, percent-decoded. */
  values: Record<string, string>;
}

const DOCUMENT_ID = 'https://toolseal.test/openapi.json';

export class DocumentChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });

  constructor(readonly document: OpenApiDocument) {
    formatsPlugin.default(this.ajv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  }

  /** The operation a request reaches: whole segments first, then a last parameter spanning slashes (`*` routes). */
  findOperation(method: string, pathname: string): FoundOperation | undefined {
    const key = method === 'HEAD' ? 'get' : method.toLowerCase();
    for (const spanning of [false, true]) {
      for (const [template, item] of Object.entries(this.document.paths)) {
        const operation = item[key];
        if (operation === undefined) continue;
        const names: string[] = [];
        const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_, name: string) => {
          names.push(name);
          return '([^/]+)';
        });
        const match = new RegExp(`^${spanning ? source.replace(/\(\[\^\/\]\+\)$/, '(.+)') : source}$`).exec(pathname);
        if (match === null) continue;
        const values = Object.fromEntries(names.map((name, i) => [name, safeDecode(match[i + 1] ?? '')]));
        return { template, method: key, operation, values };
      }
    }
    return undefined;
  }

  /** Assert `value` is valid against the schema at `tokens` (a path from the document's root). */
  expectValidAt(tokens: string[], value: unknown, what: string): void {
    const pointer = tokens.map((token) => `/${token.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
    const validate = this.ajv.getSchema(`${DOCUMENT_ID}#${pointer}`);
    if (validate === undefined) throw new Error(`no schema at ${pointer}`);
    expect(validate(value), `${what}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }

  /**
   * Check an answer against the operation it came from: status, required headers, media type and JSON body. A HEAD
   * answer has no body to check.
   */
  expectAnswer(found: FoundOperation, requestMethod: string, response: Response, text: string, what: string): void {
    const { template, method, operation } = found;
    const documented = operation.responses[String(response.status)];
    expect(documented, `${what}: status not in the document for ${operation.operationId}`).toBeDefined();
    if (documented === undefined) return;
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      if (header['required'] === true) expect(response.headers.has(name), `${what}: header ${name}`).toBe(true);
    }
    if (documented.content === undefined) {
      expect(text, what).toBe('');
      return;
    }
    const contentType = response.headers.get('Content-Type') ?? '';
    const mediaType = Object.keys(documented.content).find(
      (listed) => listed === contentType || listed.split(';')[0] === contentType.split(';')[0],
    );
    expect(mediaType, `${what}: ${contentType} not among ${Object.keys(documented.content).join(', ')}`).toBeDefined();
    if (mediaType === undefined || requestMethod === 'HEAD' || !/[/+]json$/.test(mediaType)) return;
    const tokens = ['paths', template, method, 'responses', String(response.status), 'content', mediaType, 'schema'];
    this.expectValidAt(tokens, JSON.parse(text), what);
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const checkers = new Map<string, DocumentChecker>();

/** The checker of the document a registry at `origin` serves (built once per origin in a test process). */
export function documentCheckerFor(origin: string): DocumentChecker {
  let checker = checkers.get(origin);
  if (checker === undefined) {
    checker = new DocumentChecker(buildOpenApiDocument(origin) as OpenApiDocument);
    checkers.set(origin, checker);
  }
  return checker;
}

type RequestApp = {
  request: (input: string | Request | URL, init?: RequestInit, ...rest: never[]) => Response | Promise<Response>;
};

/**
 * `app` whose `request` checks every answer against the document before handing it back. Answers no operation
 * describes are left alone: pages, paths no route takes (404 `no route for …`) and other methods on known paths
 * (405), which the document describes once for all routes.
 */
export function checkAnswersOf<A extends RequestApp>(app: A, origin: string): A {
  const request: RequestApp['request'] = async (input, init, ...rest) => {
    const response = await app.request(input, init, ...rest);
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const pathname = new URL(input instanceof Request ? input.url : String(input), 'http://localhost').pathname;
    const found = documentCheckerFor(origin).findOperation(method, pathname);
    if (found === undefined || response.status === 405) return response;
    const text = await response.clone().text();
    if (response.status === 404 && text.includes('"detail":"no route for ')) return response;
    const what = `${method} ${pathname} → ${response.status} ${text.slice(0, 300)}`;
    documentCheckerFor(origin).expectAnswer(found, method, response, text, what);
    return response;
  };
  return new Proxy(app, {
    get: (target, key, receiver) => (key === 'request' ? request : Reflect.get(target, key, receiver)),
  });
}

// The Hono environment every route module shares (what middleware hands a handler) and the request readers they
// share: path parameters and query integers (RFC 3986 §3.4 query components, one value per name).

import type { Context, Hono } from 'hono';
import { ToolsealError } from '../core/errors.ts';
import type { PublisherRecord } from '../registry/index.ts';

export type AppEnv = { Variables: { publisher: PublisherRecord } };
export type App = Hono<AppEnv>;
export type AppContext = Context<AppEnv>;

/** The manifest name spelled by the `:namespace/:name` path parameters. */
export function readManifestName(c: AppContext): string {
  return `${c.req.param('namespace')}/${c.req.param('name')}`;
}

/** A non-negative integer query parameter (no sign, no leading zero, at most 16 digits); BAD_REQUEST otherwise. */
export function readIntegerQuery(c: AppContext, name: string): number {
  const text = c.req.query(name);
  if (text === undefined || !/^(0|[1-9][0-9]{0,15})$/.test(text))
    throw new ToolsealError('BAD_REQUEST', `${name} must be a non-negative integer`);
  return Number(text);
}

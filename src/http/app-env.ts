// The Hono environment every route module shares (what middleware hands a handler) and the request readers they
// share: path parameters and query parameters (RFC 3986 §3.4 query components, one value per name). Every query
// parameter a route reads goes through readQuery, which refuses control characters (C0, DEL, C1): a decoded NUL would
// otherwise cut a search pattern short.

import type { Context, Hono } from 'hono';
import { ToolsealError } from '../core/errors.ts';
import type { PublishAuthoriser, PublisherRecord } from '../registry/index.ts';

/** `authoriser`: a publish's bearer token as trusted publishing read it (issue 28), when the app has it. */
export type AppEnv = { Variables: { publisher: PublisherRecord; authoriser: PublishAuthoriser } };
export type App = Hono<AppEnv>;
export type AppContext = Context<AppEnv>;

/**
 * The registry's witnesses, as the HTTP API sees them (src/witness/submitter.ts implements it): the cosignatures
 * received for a checkpoint, merged into the note served, and each witness's state for /healthz.
 */
export interface ServedWitnesses {
  withCosignatures(signedCheckpoint: string): string;
  status(): readonly WitnessHealth[];
  /** The policy's witnesses, by name and vkey (C2SP signed-note, type 0x04): the web page checks their cosignatures. */
  cosigners: readonly WitnessKeyView[];
}

export interface WitnessKeyView {
  name: string;
  vkey: string;
}

export interface WitnessHealth {
  witness: string;
  cosignedSize: number | undefined;
  behindBy: number | undefined;
  consecutiveFailures: number;
  lastError: string | undefined;
}

/** A signed checkpoint as served: with the cosignatures received for it (none without witnesses). */
export type CheckpointDecorator = (signedCheckpoint: string) => string;

/** The manifest name spelled by the `:namespace/:name` path parameters. */
export function readManifestName(c: AppContext): string {
  return `${c.req.param('namespace')}/${c.req.param('name')}`;
}

/** C0 controls, DEL and C1 controls (Unicode general category Cc). */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** A query parameter as decoded text (undefined when absent); BAD_REQUEST if it holds a control character. */
export function readQuery(c: AppContext, name: string): string | undefined {
  const text = c.req.query(name);
  if (text !== undefined && CONTROL_CHARACTER.test(text))
    throw new ToolsealError('BAD_REQUEST', `${name} must not contain control characters`);
  return text;
}

/** A non-negative integer query parameter (no sign, no leading zero, at most 16 digits); BAD_REQUEST otherwise. */
export function readIntegerQuery(c: AppContext, name: string): number {
  const text = readQuery(c, name);
  if (text === undefined || !/^(0|[1-9][0-9]{0,15})$/.test(text))
    throw new ToolsealError('BAD_REQUEST', `${name} must be a non-negative integer`);
  return Number(text);
}

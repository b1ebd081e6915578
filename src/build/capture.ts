// Manifest capture (vendor side, next to `manifest build`): a draft {name, version, tools} from a live MCP server,
// seen as a full client sees it (MCP 2025-11-25 "Lifecycle" §Initialization: client capabilities; "Tools" §Listing
// Tools, pagination, §List Changed Notification; "Transports": stdio and Streamable HTTP).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type ClientCapabilities,
  ListRootsRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import { ToolsealError } from '../core/errors.ts';
import { runPipeline, type PipelineResult } from '../pipeline/index.ts';
import { carryOverBase, type BaseChanges } from './capture-base.ts';
import { selectServerEnvironment } from '../guard/stdio/server-environment.ts';

/** Stop paginating after this many pages (a server whose cursors never end). */
const MAX_PAGES = 1000;
/** How long the tool list must stay unchanged (no `notifications/tools/list_changed`) before it is taken. */
export const DEFAULT_SETTLE_MS = 500;
/** Give up when the list is still changing after this many listings. */
const MAX_LISTINGS = 20;

/** tools/list exactly as the server sent it: the SDK's loose result schema, so no Tool field is dropped or defaulted. */
const RawToolsPage = z.looseObject({
  tools: z.array(z.looseObject({})),
  nextCursor: z.string().optional(),
});

/** The client capabilities capture can declare, by name. */
export type ClientCapabilityName = 'roots' | 'sampling' | 'elicitation';
export const CLIENT_CAPABILITY_NAMES: readonly ClientCapabilityName[] = ['roots', 'sampling', 'elicitation'];

const CAPABILITY_DECLARATIONS: Record<ClientCapabilityName, ClientCapabilities> = {
  roots: { roots: { listChanged: true } },
  sampling: { sampling: {} },
  elicitation: { elicitation: { form: {}, url: {} } },
};

/** What a full client declares (roots, sampling, elicitation in both modes): servers show it every tool they have. */
export const FULL_CLIENT_CAPABILITIES: ClientCapabilities = selectClientCapabilities(CLIENT_CAPABILITY_NAMES);

/** The declaration of the named capabilities (none for an empty list). */
export function selectClientCapabilities(names: readonly ClientCapabilityName[]): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  for (const name of names) Object.assign(capabilities, CAPABILITY_DECLARATIONS[name]);
  return capabilities;
}

/** Where the server is: a command started over stdio, or a Streamable HTTP endpoint. */
export type CaptureSource =
  | {
      /** The MCP server to start over stdio, and its arguments (its stderr is inherited). */
      command: string;
      args?: readonly string[];
      /** The folder the server runs in (default: this process's). */
      cwd?: string;
    }
  | {
      /** A Streamable HTTP endpoint (http: or https:). */
      url: string;
      /** Sent with every request (an Authorization header, say); never printed. */
      headers?: Readonly<Record<string, string>>;
    };

export interface CaptureSessionOptions {
  /** What the client declares at initialize (default FULL_CLIENT_CAPABILITIES). */
  clientCapabilities?: ClientCapabilities;
  /** Quiet time after a listing before it is taken (default DEFAULT_SETTLE_MS). */
  settleMs?: number;
}

export type CaptureManifestOptions = CaptureSource &
  CaptureSessionOptions & {
    name: string;
    version: string;
    /** The previous version's manifest: its description and each same-named tool's capabilities and approval carry over. */
    base?: Uint8Array;
  };

export interface CapturedManifest {
  /** The draft as 2-space JSON with a final newline: every Tool field exactly as the server sent it. */
  text: string;
  /** The publish pipeline's result over `text`. */
  result: PipelineResult;
  /** With a base: every tool added, removed or changed, and what was carried over. */
  base?: BaseChanges;
}

/**
 * Connect to the server, list its tools (every page, once the list has settled) and draft the manifest, run through
 * the publish pipeline. A name or version the envelope refuses, or a base it refuses, is refused before the server
 * starts; a refusal keeps its code and pointer.
 */
export async function captureManifest(options: CaptureManifestOptions): Promise<CapturedManifest> {
  // Fail fast on a name or version the envelope refuses, before starting anything.
  checkDraft(
    JSON.stringify({
      name: options.name,
      version: options.version,
      tools: [{ name: 'probe', inputSchema: { type: 'object' } }],
    }),
    'the manifest name or version',
  );
  const base = options.base === undefined ? undefined : readBase(options.base);
  const tools = await captureTools(options, options);
  const drafted = { name: options.name, version: options.version, tools };
  if (base === undefined) {
    const text = `${JSON.stringify(drafted, null, 2)}\n`;
    return { text, result: checkDraft(text, 'the captured manifest') };
  }
  const carried = carryOverBase(base, drafted, (text) => checkDraft(text, 'the captured manifest'));
  return { text: carried.text, result: carried.result, base: carried.changes };
}

function readBase(bytes: Uint8Array): PipelineResult {
  try {
    return runPipeline(bytes);
  } catch (error) {
    if (error instanceof ToolsealError)
      throw new ToolsealError(error.code, `the --base manifest is refused by the publish pipeline: ${error.message}`, {
        ...(error.pointer === undefined ? {} : { pointer: error.pointer }),
        cause: error,
      });
    throw error;
  }
}

/** Run the publish pipeline over a draft; a refusal keeps its code and pointer, with a word on what was refused. */
function checkDraft(text: string, what: string): PipelineResult {
  try {
    return runPipeline(Buffer.from(text, 'utf8'));
  } catch (error) {
    if (error instanceof ToolsealError) {
      throw new ToolsealError(error.code, `${what} would be refused by the publish pipeline: ${error.message}`, {
        ...(error.pointer === undefined ? {} : { pointer: error.pointer }),
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * Initialise an MCP session with the server as a client declaring `clientCapabilities`, and collect every tool of
 * every tools/list page, as sent. The list is taken once no `notifications/tools/list_changed` has arrived for
 * `settleMs` after a complete listing (a server that registers tools after `notifications/initialized` announces
 * them that way); a list still changing after MAX_LISTINGS listings is FETCH_FAILED.
 */
export async function captureTools(
  source: CaptureSource,
  options: CaptureSessionOptions = {},
): Promise<Record<string, unknown>[]> {
  const capabilities = options.clientCapabilities ?? FULL_CLIENT_CAPABILITIES;
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  const client = new Client({ name: 'toolseal-manifest-capture', version: '0.1.0' }, { capabilities });
  // The server may ask for what the client declared: no roots are shared; a sampling or elicitation request (which a
  // server may only send while handling a request of ours, and capture sends none but tools/list) gets the SDK's
  // "method not found" error: capture never produces content for a server.
  if (capabilities.roots !== undefined) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
  const changes = new ListChanges();
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changes.note());
  const described = 'url' in source ? `the server at ${describeUrl(source.url)}` : JSON.stringify(source.command);
  const transport = createTransport(source);
  try {
    await connectClient(client, transport, described);
    if (client.getServerCapabilities()?.tools === undefined) {
      throw new ToolsealError(
        'INVALID_MANIFEST',
        'the server does not declare the tools capability: there is nothing to capture',
      );
    }
    for (let listing = 0; listing < MAX_LISTINGS; listing++) {
      const seen = changes.count;
      const tools = await listAllTools(client);
      await changes.waitQuiet(settleMs);
      if (changes.count === seen) return tools;
    }
    throw new ToolsealError(
      'FETCH_FAILED',
      `the tool list of ${described} was still changing after ${MAX_LISTINGS} listings (notifications/tools/list_changed)`,
    );
  } finally {
    changes.stop();
    if (transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
}

function createTransport(source: CaptureSource): Transport {
  if ('url' in source) {
    let url: URL;
    try {
      url = new URL(source.url);
    } catch {
      throw new ToolsealError('BAD_REQUEST', 'the server URL is not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ToolsealError('BAD_REQUEST', `the server URL must be http: or https:, not ${url.protocol}`);
    return new StreamableHTTPClientTransport(url, { requestInit: { headers: { ...source.headers } } });
  }
  return new StdioClientTransport({
    command: source.command,
    args: [...(source.args ?? [])],
    // This process's environment minus every variable toolseal reads (TOOLSEAL_* in any case: tokens among them).
    env: selectServerEnvironment(process.env) as Record<string, string>,
    stderr: 'inherit',
    ...(source.cwd === undefined ? {} : { cwd: source.cwd }),
  });
}

/** The URL without its user info, query or fragment (which may carry secrets). */
function describeUrl(text: string): string {
  try {
    const url = new URL(text);
    return JSON.stringify(`${url.protocol}//${url.host}${url.pathname}`);
  } catch {
    return 'the given URL';
  }
}

async function connectClient(client: Client, transport: Transport, described: string): Promise<void> {
  try {
    await client.connect(transport);
  } catch (cause) {
    throw new ToolsealError(
      'FETCH_FAILED',
      `could not start an MCP session with ${described}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
  }
}

/** Counts `notifications/tools/list_changed` and waits for a quiet spell. */
class ListChanges {
  count = 0;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  note(): void {
    this.count += 1;
    this.wake?.();
  }

  /**
   * Resolves once `ms` have passed with no notification (each one restarts the wait), or after MAX_LISTINGS × `ms`
   * at most (a server that never stops announcing changes: the caller sees the count moved and lists again).
   */
  waitQuiet(ms: number): Promise<void> {
    const latest = Date.now() + ms * MAX_LISTINGS;
    return new Promise((resolve) => {
      const arm = (): void => {
        clearTimeout(this.timer);
        this.timer = setTimeout(
          () => {
            this.wake = undefined;
            resolve();
          },
          Math.max(0, Math.min(ms, latest - Date.now())),
        );
      };
      this.wake = arm;
      arm();
    });
  }

  stop(): void {
    clearTimeout(this.timer);
    this.wake = undefined;
  }
}

/** Every tool of every tools/list page, following nextCursor; a repeated cursor or too many pages is an error. */
async function listAllTools(client: Client): Promise<Record<string, unknown>[]> {
  const tools: Record<string, unknown>[] = [];
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; ; page++) {
    if (page >= MAX_PAGES) throw new ToolsealError('FETCH_FAILED', `tools/list did not end after ${MAX_PAGES} pages`);
    const result = await client.request(
      { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
      RawToolsPage,
    );
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
    if (seenCursors.has(cursor))
      throw new ToolsealError('FETCH_FAILED', `tools/list returned the cursor ${JSON.stringify(cursor)} twice`);
    seenCursors.add(cursor);
  }
  return tools;
}

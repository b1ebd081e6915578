// Manifest capture: a draft {name, version, tools} from a live MCP server (MCP 2025-06-18 "Tools" §Listing Tools, pagination).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as z from 'zod/v4';
import { ToolsealError } from '../core/errors.ts';
import { runPipeline, type PipelineResult } from '../pipeline/index.ts';

/** Stop paginating after this many pages (a server whose cursors never end). */
const MAX_PAGES = 1000;

/** tools/list exactly as the server sent it: the SDK's loose result schema, so no Tool field is dropped or defaulted. */
const RawToolsPage = z.looseObject({
  tools: z.array(z.looseObject({})),
  nextCursor: z.string().optional(),
});

export interface CaptureManifestOptions {
  name: string;
  version: string;
  /** The MCP server to start over stdio, and its arguments (its stderr is inherited). */
  command: string;
  args?: readonly string[];
  /** The folder the server runs in (default: this process's). */
  cwd?: string;
}

export interface CapturedManifest {
  /** The draft as 2-space JSON with a final newline: every Tool field exactly as the server sent it. */
  text: string;
  /** The publish pipeline's result over `text` (the digest of the draft as captured, before capabilities are added). */
  result: PipelineResult;
}

/**
 * Start the server, list its tools (every page) and draft the manifest, run through the publish pipeline. A name or
 * version the envelope refuses is refused before the server starts; a refusal keeps its code and pointer.
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
  const tools = await captureTools(options.command, [...(options.args ?? [])], options.cwd);
  const draft = { name: options.name, version: options.version, tools };
  const text = `${JSON.stringify(draft, null, 2)}\n`;
  return { text, result: checkDraft(text, 'the captured manifest') };
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

/** Start `program`, initialise an MCP session and collect every tool of every tools/list page, as sent. */
export async function captureTools(
  program: string,
  programArgs: string[],
  cwd?: string,
): Promise<Record<string, unknown>[]> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  const transport = new StdioClientTransport({
    command: program,
    args: programArgs,
    env,
    stderr: 'inherit',
    ...(cwd === undefined ? {} : { cwd }),
  });
  const client = new Client({ name: 'toolseal-manifest-capture', version: '0.1.0' });
  try {
    await connectClient(client, transport, program);
    if (client.getServerCapabilities()?.tools === undefined) {
      throw new ToolsealError(
        'INVALID_MANIFEST',
        'the server does not declare the tools capability: there is nothing to capture',
      );
    }
    return await listAllTools(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}

async function connectClient(client: Client, transport: StdioClientTransport, program: string): Promise<void> {
  try {
    await client.connect(transport);
  } catch (cause) {
    throw new ToolsealError(
      'FETCH_FAILED',
      `could not start an MCP session with ${JSON.stringify(program)}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
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

// `toolseal manifest capture`: start an MCP server, list its tools (every page) and write a manifest draft.

import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as z from 'zod/v4';
import { ToolsealError } from '../core/errors.ts';
import { runPipeline, type PipelineResult } from '../pipeline/index.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';

export const manifestUsage = `toolseal manifest capture --name NAME --version V [-o FILE] -- COMMAND [ARGS...]
  Starts the MCP server COMMAND over stdio, lists its tools (every page of tools/list) and writes the
  manifest draft {name, version, tools} as 2-space JSON to FILE (or stdout). Every Tool field the server
  sends is kept exactly as sent; capability declarations are left for the vendor to add. The draft is run
  through the publish pipeline first: a refusal (with its JSON pointer) is reported and nothing is written.
  With -o, prints one JSON object {file, name, version, tools, digest, renamedTools} (the digest of the
  draft as captured, before capabilities are added).`;

/** Stop paginating after this many pages (a server whose cursors never end). */
const MAX_PAGES = 1000;

/** tools/list exactly as the server sent it: the SDK's loose result schema, so no Tool field is dropped or defaulted. */
const RawToolsPage = z.looseObject({
  tools: z.array(z.looseObject({})),
  nextCursor: z.string().optional(),
});

export async function runManifestCommand(args: string[]): Promise<ExitCode> {
  const separator = args.indexOf('--');
  const own = separator < 0 ? args : args.slice(0, separator);
  const [subcommand, ...rest] = own;
  if (subcommand !== 'capture') throw new UsageError(manifestUsage);
  const { values, positionals } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, version: { type: 'string' }, output: { type: 'string', short: 'o' } },
    allowPositionals: true,
  });
  const command = separator < 0 ? positionals : args.slice(separator + 1);
  if (separator >= 0 && positionals.length > 0)
    throw new UsageError(`unexpected arguments before --: ${positionals.join(' ')}\n${manifestUsage}`);
  const [program, ...programArgs] = command;
  if (values.name === undefined || values.version === undefined || program === undefined)
    throw new UsageError(manifestUsage);

  // Fail fast on a name or version the envelope refuses, before starting anything.
  checkDraft(
    JSON.stringify({
      name: values.name,
      version: values.version,
      tools: [{ name: 'probe', inputSchema: { type: 'object' } }],
    }),
    'the manifest name or version',
  );
  const tools = await captureTools(program, programArgs);
  const draft = { name: values.name, version: values.version, tools };
  const text = JSON.stringify(draft, null, 2) + '\n';
  const result = checkDraft(text, 'the captured manifest');
  if (values.output === undefined) {
    await writeStdout(text);
  } else {
    await writeFile(values.output, text);
    await writeStdout(
      JSON.stringify({
        file: values.output,
        name: result.name,
        version: result.version,
        tools: result.manifest.tools.length,
        digest: result.digest,
        renamedTools: result.renamedTools,
      }) + '\n',
    );
  }
  return 0;
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
export async function captureTools(program: string, programArgs: string[]): Promise<Record<string, unknown>[]> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  const transport = new StdioClientTransport({ command: program, args: programArgs, env, stderr: 'inherit' });
  const client = new Client({ name: 'toolseal-manifest-capture', version: '0.1.0' });
  try {
    try {
      await client.connect(transport);
    } catch (cause) {
      throw new ToolsealError(
        'FETCH_FAILED',
        `could not start an MCP session with ${JSON.stringify(program)}: ${cause instanceof Error ? cause.message : String(cause)}`,
        { cause },
      );
    }
    if (client.getServerCapabilities()?.tools === undefined) {
      throw new ToolsealError(
        'INVALID_MANIFEST',
        'the server does not declare the tools capability: there is nothing to capture',
      );
    }
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
  } finally {
    await client.close().catch(() => undefined);
  }
}

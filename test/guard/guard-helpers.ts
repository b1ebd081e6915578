// Shared by the guard tests: the locally signed fixture manifest, and the waits and checks on an SDK client or a raw guard.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { expect } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { GUARD_CALL_REFUSED_CODE } from '../../src/guard/index.ts';
import { runPipeline, type JsonObject } from '../../src/pipeline/index.ts';
import { repoRoot } from '../fixtures/guard-env.ts';
import { FIXTURE_MANIFEST_NAME, fixtureTools, nfdTool } from '../fixtures/mcp-tools.ts';

export const VERSION = '1.0.0';
export const REF = `${FIXTURE_MANIFEST_NAME}@${VERSION}`;

/** The fixture's tools with capability declarations, as a vendor would publish them. */
export function manifestWithCapabilities(tools: readonly unknown[]): Record<string, unknown> {
  const withCapabilities = (tools as Record<string, unknown>[]).map((tool) => {
    if (tool['name'] === 'delete_note')
      return { ...tool, capabilities: { filesystem: { write: ['/var/lib/notes/**'] } } };
    if (tool['name'] === 'echo') return { ...tool, capabilities: { network: { hosts: [] } } };
    return tool;
  });
  return { name: FIXTURE_MANIFEST_NAME, version: VERSION, tools: withCapabilities };
}

export const localSigned = runPipeline(Buffer.from(JSON.stringify(manifestWithCapabilities(fixtureTools))));

/** The version of the fixture manifest that also signs the nfd-name server's tool, under its NFC name. */
export const NFD_VERSION = '1.1.0';
export const NFD_REF = `${FIXTURE_MANIFEST_NAME}@${NFD_VERSION}`;
/** The signed (NFC) name of the tool the nfd-name server presents as NFD_TOOL_NAME. */
export const NFC_TOOL_NAME = 'caf\u00e9';

/** The upload of NFD_REF: the fixture's tools and the NFD-named one (the pipeline renames it to NFC). */
export function nfdManifestUpload(): Buffer {
  return Buffer.from(JSON.stringify({ ...manifestWithCapabilities([...fixtureTools, nfdTool]), version: NFD_VERSION }));
}

export const localSignedNfd = runPipeline(nfdManifestUpload());

/** The tools a client must see: the signed ones without the registry-only capabilities, in JCS order. */
export function presentable(bytes: Uint8Array): JsonObject[] {
  const manifest = JSON.parse(Buffer.from(bytes).toString('utf8')) as { tools: JsonObject[] };
  return manifest.tools.map(({ capabilities: _capabilities, ...tool }) => tool);
}

export async function listAll(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function expectRefusedCall(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<McpError> {
  const error = await client.callTool({ name, arguments: args }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(McpError);
  expect((error as McpError).code).toBe(GUARD_CALL_REFUSED_CODE);
  return error as McpError;
}

export const toolNames = (tools: { name: string }[]): string[] => tools.map((tool) => tool.name);

export interface RawSession {
  child: ChildProcessWithoutNullStreams;
  send(message: unknown): void;
  response(id: number): Promise<string>;
  exit: Promise<number | null>;
  stderr(): string;
}

export function rawGuard(args: string[]): RawSession {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    child,
    send: (message) => child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`),
    response: async (id) => {
      let line: string | undefined;
      await waitFor(() => {
        line = stdout
          .split('\n')
          .find((text) => text.startsWith('{') && (JSON.parse(text) as { id?: unknown }).id === id);
        return line !== undefined;
      }, `response ${id}`);
      return line!;
    },
    exit,
    stderr: () => stderr,
  };
}

export const initialize = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

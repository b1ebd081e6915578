// `toolseal client-config NAME@VERSION --client C` and `toolseal managed-settings --client C` (issue 27 §4): fetch and
// verify signed servers, then print the client's JSON (src/client-config builds it). Argv and printing only.

import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { normaliseRegistryUrl, RegistryClient } from '../client/registry-client.ts';
import {
  buildClientConfig,
  CONFIG_CLIENTS,
  type ConfigClient,
  selectRunnablePackage,
} from '../client-config/client-config.ts';
import {
  buildManagedSettings,
  MANAGED_CLIENTS,
  MANAGED_SETTINGS_FILES,
  type ManagedClient,
} from '../client-config/managed-settings.ts';
import { isJsonObject } from '../core/json.ts';
import { fetchVerified, lockKey } from '../host/index.ts';
import type { Manifest } from '../pipeline/index.ts';
import { resolveRegistryUrl, resolveUserPath } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { resolveHostTarget } from './verify.ts';

export const clientConfigUsage = `toolseal client-config NAME@VERSION --client claude-desktop|claude-code|vscode|cursor [--registry URL] [--lock FILE] [--transport stdio|remote] [--listen 127.0.0.1:PORT] [--var NAME=VALUE]... [--toolseal PATH]
  Fetches and verifies NAME@VERSION, then prints {config, files[, guardCommand]}: config is the JSON to merge
  into the client's file (files says where that file is), an entry that runs the signed server behind guard.
  stdio (the default when a package is signed): the client starts toolseal guard --manifest NAME@VERSION
  --registry URL [--locked --lock FILE] -- followed by the signed package command (npx -y identifier@version,
  uvx identifier==version or docker run -i --rm image@sha256:…), every path absolute. remote: the client
  connects to the HTTP guard at http://127.0.0.1:PORT/mcp (--listen, default 127.0.0.1:8931); guardCommand is
  the command that must be running, in front of the signed streamable-http remote (--var fills its {variables}).
  --toolseal PATH   how the config runs toolseal (default: this toolseal, by absolute path)`;

export const managedSettingsUsage = `toolseal managed-settings --client copilot|claude-code [--registry URL] [--namespace NS]... [--guard-listen 127.0.0.1:PORT]... [--toolseal PATH]
  Lists the registry's catalogue (the latest active version of each manifest with a signed server, in the
  namespaces given, else all), verifies each, and prints {settings, files}: settings is the managed-settings.json
  allow-list the client enforces: each server's config name (serverName), the guard command that starts its
  signed package (serverCommand, exactly as client-config writes it with the same --toolseal, default
  "toolseal") and its signed remote URLs (serverUrl, {variables} as *), plus --guard-listen endpoints. For
  claude-code allowManagedMcpServersOnly is true. files says where the client reads the file.`;

export async function runClientConfigCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      client: { type: 'string' },
      registry: { type: 'string' },
      lock: { type: 'string' },
      transport: { type: 'string' },
      listen: { type: 'string' },
      var: { type: 'string', multiple: true },
      toolseal: { type: 'string' },
    },
    allowPositionals: true,
  });
  const client = values.client as ConfigClient | undefined;
  if (client === undefined || !CONFIG_CLIENTS.includes(client)) {
    throw new UsageError(`--client must be one of ${CONFIG_CLIENTS.join(', ')}`);
  }
  if (positionals.length !== 1) throw new UsageError('expected one NAME@VERSION');
  const locked = values.lock !== undefined;
  const target = await resolveHostTarget(positionals[0], values, clientConfigUsage, { locked, useLock: locked });
  const fetched = await fetchVerified(target.registry, lockKey(target.name, target.version), target.options);
  const manifest = fetched.manifest;
  const transport = values.transport ?? (selectRunnablePackage(manifest) === undefined ? 'remote' : 'stdio');
  if (transport !== 'stdio' && transport !== 'remote') throw new UsageError('--transport must be stdio or remote');
  const config = buildClientConfig({
    client,
    manifest,
    registry: target.registry,
    lockFile: values.lock === undefined ? undefined : resolveUserPath(values.lock),
    toolsealCommand: values.toolseal === undefined ? currentToolsealCommand() : [absolutePath(values.toolseal)],
    transport,
    listen: values.listen,
    variables: parseVariables(values.var ?? []),
  });
  await writeStdout(`${JSON.stringify(config, null, 2)}\n`);
  return 0;
}

export async function runManagedSettingsCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      client: { type: 'string' },
      registry: { type: 'string' },
      namespace: { type: 'string', multiple: true },
      'guard-listen': { type: 'string', multiple: true },
      toolseal: { type: 'string' },
    },
    allowPositionals: true,
  });
  const client = values.client as ManagedClient | undefined;
  if (client === undefined || !MANAGED_CLIENTS.includes(client)) {
    throw new UsageError(`--client must be one of ${MANAGED_CLIENTS.join(', ')}`);
  }
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  const registry = resolveRegistryUrl(values.registry ?? process.env['TOOLSEAL_REGISTRY']);
  const namespaces = values.namespace ?? [];
  const manifests: Manifest[] = [];
  for (const ref of await listLatestActive(registry, namespaces)) {
    const fetched = await fetchVerified(registry, ref);
    if (fetched.manifest.server !== undefined) manifests.push(fetched.manifest);
  }
  for (const listen of values['guard-listen'] ?? []) {
    if (!/^127\.0\.0\.1:[1-9][0-9]{0,4}$/.test(listen)) throw new UsageError('--guard-listen must be 127.0.0.1:PORT');
  }
  const settings = buildManagedSettings({
    client,
    manifests,
    registry,
    toolsealCommand: [values.toolseal ?? 'toolseal'],
    guardListens: values['guard-listen'],
  });
  await writeStdout(`${JSON.stringify({ settings, files: MANAGED_SETTINGS_FILES[client] }, null, 2)}\n`);
  return 0;
}

/** `name@latestVersion` of every active manifest in the catalogue (GET /v1/manifests, every page), by namespace. */
async function listLatestActive(registry: string, namespaces: readonly string[]): Promise<string[]> {
  const http = new RegistryClient(normaliseRegistryUrl(registry));
  const refs: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const page = await http.getJson(`/v1/manifests?limit=200${query}`);
    const items = isJsonObject(page) && Array.isArray(page['items']) ? page['items'] : [];
    for (const item of items) {
      if (!isJsonObject(item) || typeof item['name'] !== 'string' || typeof item['latestVersion'] !== 'string')
        continue;
      const name = item['name'];
      if (item['status'] !== 'active') continue;
      if (namespaces.length > 0 && !namespaces.some((ns) => name.startsWith(`${ns}/`))) continue;
      refs.push(lockKey(name, item['latestVersion']));
    }
    cursor = isJsonObject(page) && typeof page['nextCursor'] === 'string' ? page['nextCursor'] : null;
  } while (cursor !== null);
  return refs;
}

/** This toolseal, by absolute paths: node, its loader flags (a bare --import resolved), the CLI entry. */
function currentToolsealCommand(): string[] {
  const flags: string[] = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const flag = process.execArgv[i] as string;
    const next = process.execArgv[i + 1];
    if (flag === '--import' && next !== undefined) {
      flags.push(
        '--import',
        next.startsWith('.') || isAbsolute(next) ? next : fileURLToPath(import.meta.resolve(next)),
      );
      i++;
    } else {
      flags.push(flag);
    }
  }
  return [process.execPath, ...flags, absolutePath(process.argv[1] as string)];
}

function absolutePath(path: string): string {
  return isAbsolute(path) ? path : resolveUserPath(path);
}

function parseVariables(pairs: readonly string[]): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--var takes NAME=VALUE, not ${JSON.stringify(pair)}`);
    variables[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return variables;
}

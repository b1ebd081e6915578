// The MCP allow-list a client enforces for an organisation (issue 27 §4), built from signed servers: Claude Code's
// managed-settings.json (allowedMcpServers with allowManagedMcpServersOnly) and GitHub Copilot's enterprise
// managed-settings.json (allowedMcpServers); each entry is one of serverName, serverCommand or serverUrl, as both
// clients' documentation defines them (docs/hosts.md). Pure.

import type { JsonObject } from '../core/json.ts';
import type { Manifest } from '../pipeline/envelope.ts';
import { formatServerKey, formatSignedPackageCommand, selectRunnablePackage } from './client-config.ts';

export type ManagedClient = 'copilot' | 'claude-code';
export const MANAGED_CLIENTS: readonly ManagedClient[] = ['copilot', 'claude-code'];

/** Where the file goes (the clients' documentation). */
export const MANAGED_SETTINGS_FILES: Record<ManagedClient, readonly string[]> = {
  'claude-code': [
    'macOS: /Library/Application Support/ClaudeCode/managed-settings.json',
    'Linux and WSL: /etc/claude-code/managed-settings.json',
    'Windows: C:\\ProgramData\\ClaudeCode\\managed-settings.json',
  ],
  copilot: ["the enterprise's managed-settings.json (stored in its .github-private repository, or installed by MDM)"],
};

export type AllowEntry = { serverName: string } | { serverCommand: string[] } | { serverUrl: string };

export interface ManagedSettingsRequest {
  client: ManagedClient;
  /** The signed manifests to allow (those without a `server` member contribute their name only). */
  manifests: readonly Manifest[];
  /** The registry the guard commands verify against (as client-config writes them). */
  registry: string;
  /** How client configs run toolseal (the same words as client-config's --toolseal; default `toolseal`). */
  toolsealCommand: readonly string[];
  /** Local HTTP guard endpoints (127.0.0.1:PORT) the configs point at, allowed as serverUrl. */
  guardListens?: readonly string[] | undefined;
}

/**
 * The allow-list: per server its config key (serverName, as client-config names it), the guard command that
 * starts its signed package (serverCommand: exactly what client-config writes, so only the guarded command runs),
 * and its signed remote URLs (serverUrl, `{variables}` as `*`). Sorted, without duplicates.
 */
export function buildManagedSettings(request: ManagedSettingsRequest): JsonObject {
  const names = new Set<string>();
  const commands = new Map<string, string[]>();
  const urls = new Set<string>();
  for (const manifest of request.manifests) {
    names.add(formatServerKey(manifest.name));
    const pkg = selectRunnablePackage(manifest);
    if (pkg !== undefined) {
      const command = [
        ...request.toolsealCommand,
        'guard',
        '--manifest',
        `${manifest.name}@${manifest.version}`,
        '--registry',
        request.registry,
        '--',
        ...formatSignedPackageCommand(pkg),
      ];
      commands.set(JSON.stringify(command), command);
    }
    for (const remote of manifest.server?.remotes ?? []) {
      urls.add(remote.url.replace(/\{[a-zA-Z_][a-zA-Z0-9_]*\}/g, '*'));
    }
  }
  for (const listen of request.guardListens ?? []) urls.add(`http://${listen}/mcp`);
  const allowed: AllowEntry[] = [
    ...[...names].sort().map((serverName) => ({ serverName })),
    ...[...commands.keys()].sort().map((key) => ({ serverCommand: commands.get(key) as string[] })),
    ...[...urls].sort().map((serverUrl) => ({ serverUrl })),
  ];
  const settings: JsonObject = { allowedMcpServers: allowed as unknown as JsonObject[] };
  if (request.client === 'claude-code') settings['allowManagedMcpServersOnly'] = true;
  return settings;
}

// The config entry an MCP client needs to run a signed server behind guard (issue 27 §4), in each client's own file
// shape: Claude Desktop (claude_desktop_config.json), Claude Code (.mcp.json), VS Code (mcp.json), Cursor
// (.cursor/mcp.json); docs/hosts.md cites each client's documentation. Pure: the CLI fetches and verifies the
// manifest and prints what this returns.

import { ToolsealError } from '../core/errors.ts';
import type { JsonObject } from '../core/json.ts';
import type { Manifest } from '../pipeline/envelope.ts';
import type { ServerArgument, ServerPackage, ServerRemote } from '../pipeline/server-member.ts';

export type ConfigClient = 'claude-desktop' | 'claude-code' | 'vscode' | 'cursor';
export const CONFIG_CLIENTS: readonly ConfigClient[] = ['claude-desktop', 'claude-code', 'vscode', 'cursor'];

/** Where each client reads the file the entry goes into (its documentation's names). */
export const CLIENT_CONFIG_FILES: Record<ConfigClient, readonly string[]> = {
  'claude-desktop': [
    'macOS: ~/Library/Application Support/Claude/claude_desktop_config.json',
    'Windows: %APPDATA%\\Claude\\claude_desktop_config.json',
  ],
  'claude-code': ['project: .mcp.json in the project root', 'user and local scopes: ~/.claude.json'],
  vscode: ['workspace: .vscode/mcp.json', 'user profile: mcp.json (MCP: Open User Configuration)'],
  cursor: ['project: .cursor/mcp.json', 'global: ~/.cursor/mcp.json'],
};

/** The registry types guard can start from a signed package: how, and with which runtime. */
const RUNNABLE: Partial<Record<ServerPackage['registryType'], string>> = { npm: 'npx', pypi: 'uvx', oci: 'docker' };

/**
 * The command line that runs a signed package, exactly as signed: `npx -y identifier@version`, `uvx
 * identifier==version` or `docker run -i --rm identifier` (the OCI identifier pins its digest), then the signed
 * package arguments. Only fixed values are used: an argument whose value the user must supply is BAD_REQUEST.
 */
export function formatSignedPackageCommand(pkg: ServerPackage): string[] {
  const runtime = RUNNABLE[pkg.registryType];
  if (runtime === undefined) {
    throw new ToolsealError(
      'BAD_REQUEST',
      `a ${pkg.registryType} package cannot be started by guard (npm, pypi and oci can)`,
    );
  }
  const runtimeArgs = (pkg.runtimeArguments ?? []).flatMap(formatArgument);
  const packageArgs = (pkg.packageArguments ?? []).flatMap(formatArgument);
  switch (pkg.registryType) {
    case 'npm':
      return ['npx', '-y', ...runtimeArgs, `${pkg.identifier}@${pkg.version}`, ...packageArgs];
    case 'pypi':
      return ['uvx', ...runtimeArgs, `${pkg.identifier}==${pkg.version}`, ...packageArgs];
    default: {
      // A container sees none of the caller's environment unless named: `-e NAME` passes each signed variable's value
      // (from guard's environment, where the signed values are set) without writing it on the command line.
      const env = (pkg.environmentVariables ?? []).flatMap((variable) => ['-e', variable.name]);
      return ['docker', 'run', '-i', '--rm', ...env, ...runtimeArgs, pkg.identifier, ...packageArgs];
    }
  }
}

function formatArgument(argument: ServerArgument): string[] {
  const value = argument.value ?? argument.default;
  if (argument.type === 'named') {
    const name = argument.name as string;
    return value === undefined ? [name] : [name, value];
  }
  if (value === undefined) {
    throw new ToolsealError(
      'BAD_REQUEST',
      `the positional argument ${JSON.stringify(argument.valueHint ?? '')} has no signed value: add it to the command yourself`,
    );
  }
  return [value];
}

/** The first package guard can start, or undefined. */
export function selectRunnablePackage(manifest: Manifest): ServerPackage | undefined {
  return manifest.server?.packages?.find((pkg) => RUNNABLE[pkg.registryType] !== undefined);
}

/** A remote's URL with its `{variables}` filled from `values` (every one must be given). */
export function fillRemoteUrl(remote: ServerRemote, values: Readonly<Record<string, string>>): string {
  return remote.url.replace(/\{([a-zA-Z_][a-zA-Z0-9_]*)\}/g, (_whole, name: string) => {
    const value = values[name];
    if (value === undefined) {
      throw new ToolsealError(
        'BAD_REQUEST',
        `the remote URL ${remote.url} needs a value for {${name}}: --var ${name}=…`,
      );
    }
    return value;
  });
}

/** The key a server gets in every client's config and managed settings: the manifest name, `/` and `.` as `-`. */
export function formatServerKey(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '-');
}

export interface ClientConfigRequest {
  client: ConfigClient;
  manifest: Manifest;
  /** The registry guard verifies against. */
  registry: string;
  /** Absolute path of the lockfile guard pins against (`--locked --lock FILE`), if any. */
  lockFile?: string | undefined;
  /** How to run toolseal: absolute path(s), e.g. [node, /abs/dist/cli/main.js] or [/usr/local/bin/toolseal]. */
  toolsealCommand: readonly string[];
  /** 'stdio' (a signed package, guard over stdio) or 'remote' (the HTTP guard in front of a signed remote). */
  transport: 'stdio' | 'remote';
  /** For remote: where the HTTP guard listens (127.0.0.1:PORT). */
  listen?: string | undefined;
  /** For remote: values of the signed remote URL's `{variables}`. */
  variables?: Readonly<Record<string, string>> | undefined;
}

export interface ClientConfig {
  /** The JSON to merge into the client's file (its top-level member and this server's entry only). */
  config: JsonObject;
  /** Where the client reads that file. */
  files: readonly string[];
  /** For remote: the command that must be running (the HTTP guard) for the entry to work. */
  guardCommand?: string[];
}

/** The config entry for `request.client` that puts guard in front of the signed server. */
export function buildClientConfig(request: ClientConfigRequest): ClientConfig {
  const { client, manifest } = request;
  const key = formatServerKey(manifest.name);
  const verification = [
    '--manifest',
    `${manifest.name}@${manifest.version}`,
    '--registry',
    request.registry,
    ...(request.lockFile === undefined ? [] : ['--locked', '--lock', request.lockFile]),
  ];
  const [command, ...toolsealArgs] = request.toolsealCommand;
  if (command === undefined) throw new ToolsealError('INTERNAL', 'no toolsealCommand');
  if (request.transport === 'stdio') {
    const pkg = selectRunnablePackage(manifest);
    if (pkg === undefined) {
      throw new ToolsealError('BAD_REQUEST', `${manifest.name}@${manifest.version} signs no npm, pypi or oci package`);
    }
    const args = [...toolsealArgs, 'guard', ...verification, '--', ...formatSignedPackageCommand(pkg)];
    const env = signedEnvironment(pkg);
    const entry: JsonObject = { command, args, ...(Object.keys(env).length > 0 ? { env } : {}) };
    return {
      config: wrap(client, key, client === 'vscode' ? { type: 'stdio', ...entry } : entry),
      files: CLIENT_CONFIG_FILES[client],
    };
  }
  if (client === 'claude-desktop') {
    throw new ToolsealError(
      'BAD_REQUEST',
      "Claude Desktop's config file starts stdio servers only; use a client that connects to a URL for a remote server",
    );
  }
  const remote = manifest.server?.remotes?.find((candidate) => candidate.type === 'streamable-http');
  if (remote === undefined) {
    throw new ToolsealError('BAD_REQUEST', `${manifest.name}@${manifest.version} signs no streamable-http remote`);
  }
  const listen = request.listen ?? '127.0.0.1:8931';
  if (!/^127\.0\.0\.1:[1-9][0-9]{0,4}$/.test(listen)) {
    throw new ToolsealError('BAD_REQUEST', '--listen must be 127.0.0.1:PORT with a fixed port for a client config');
  }
  const upstream = fillRemoteUrl(remote, request.variables ?? {});
  const url = `http://${listen}/mcp`;
  const entry: JsonObject = client === 'cursor' ? { url } : { type: 'http', url };
  return {
    config: wrap(client, key, entry),
    files: CLIENT_CONFIG_FILES[client],
    guardCommand: [command, ...toolsealArgs, 'guard', ...verification, '--upstream', upstream, '--listen', listen],
  };
}

/** Environment variables whose value is signed (fixed): the others come from the user's environment. */
function signedEnvironment(pkg: ServerPackage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const variable of pkg.environmentVariables ?? []) {
    if (variable.value !== undefined && !/\{[a-zA-Z_]/.test(variable.value)) env[variable.name] = variable.value;
  }
  return env;
}

function wrap(client: ConfigClient, key: string, entry: JsonObject): JsonObject {
  return client === 'vscode' ? { servers: { [key]: entry } } : { mcpServers: { [key]: entry } };
}

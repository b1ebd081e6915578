// The environment of the MCP server guard starts (issue 23 §1): guard's own, minus every variable toolseal reads
// (TOOLSEAL_*: registry and host/operator/publisher tokens) and minus what the operator denies; or an allow-list.
// POSIX.1-2017 §8.1: environment variable names are case-sensitive strings without '='.

/** Every variable toolseal reads starts with this: none of them ever reaches a guarded server. */
export const TOOLSEAL_VARIABLE_PREFIX = 'TOOLSEAL_';

export interface ServerEnvironmentOptions {
  /** Names removed as well (--env-deny). */
  deny?: readonly string[];
  /** When given, only these names pass (--env-allow); TOOLSEAL_* never does. */
  allow?: readonly string[];
}

/** The server's environment: `parent` without TOOLSEAL_* and the denied names, or only the allowed ones. */
export function selectServerEnvironment(
  parent: NodeJS.ProcessEnv,
  options: ServerEnvironmentOptions = {},
): NodeJS.ProcessEnv {
  const deny = new Set(options.deny ?? []);
  const allow = options.allow === undefined ? undefined : new Set(options.allow);
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined || isToolsealVariable(name) || deny.has(name)) continue;
    if (allow !== undefined && !allow.has(name)) continue;
    env[name] = value;
  }
  return env;
}

/** TOOLSEAL_* in any case (Windows names are case-insensitive; a lower-case spelling is no way around the rule). */
export function isToolsealVariable(name: string): boolean {
  return name.toUpperCase().startsWith(TOOLSEAL_VARIABLE_PREFIX);
}

// Where a command finds its data and keys: flags first, then TOOLSEAL_* environment variables, then defaults; and
// the folder the user ran the command from, which every path the user gives is relative to (npm's INIT_CWD under
// `npm start` / `npm run toolseal`, which run in the package root).

import { dirname, isAbsolute, resolve } from 'node:path';
import { UsageError } from './output.ts';

/** The package scripts that run this CLI (package.json): under them npm's INIT_CWD is the user's folder. */
const OWN_NPM_SCRIPTS: ReadonlySet<string> = new Set(['start', 'toolseal']);

/**
 * The folder the user ran the command from. `npm run` starts a script in the package root and records where it
 * was run from in INIT_CWD; that is used when this process is such a script of this package, run in its package
 * root. Anything else (the bin, a child process that inherited INIT_CWD from `npm test`...) uses process.cwd().
 */
export function userWorkingDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const cwd = process.cwd();
  const initCwd = env['INIT_CWD'];
  const packageJson = env['npm_package_json'];
  const event = env['npm_lifecycle_event'];
  if (initCwd === undefined || initCwd === '' || packageJson === undefined || event === undefined) return cwd;
  if (env['npm_package_name'] !== 'toolseal' || !OWN_NPM_SCRIPTS.has(event)) return cwd;
  return resolve(dirname(packageJson)) === resolve(cwd) ? resolve(initCwd) : cwd;
}

/**
 * A path the user gave, for this process to open: relative paths are relative to userWorkingDirectory(). Returned
 * unchanged when that is the working directory already (or the path is absolute), so messages keep the user's text.
 */
export function resolveUserPath(path: string, env: NodeJS.ProcessEnv = process.env): string {
  if (isAbsolute(path)) return path;
  const folder = userWorkingDirectory(env);
  return folder === process.cwd() ? path : resolve(folder, path);
}

/** The data folder: --data, else TOOLSEAL_DATA (both relative to the user's folder; `:memory:` as is), else data/ here. */
export function resolveDataDir(flag: string | undefined): string {
  const given = flag ?? process.env['TOOLSEAL_DATA'];
  if (given === undefined) return 'data';
  return given === ':memory:' ? given : resolveUserPath(given);
}

/**
 * The PostgreSQL database: --database, else TOOLSEAL_DATABASE_URL; undefined for SQLite under the data folder.
 * `postgres://…` / `postgresql://…`, or `pglite:` (in memory) / `pglite:DIR` (DIR relative to the user's folder).
 */
export function resolveDatabaseUrl(flag: string | undefined): string | undefined {
  const given = flag ?? (process.env['TOOLSEAL_DATABASE_URL'] || undefined);
  if (given === undefined) return undefined;
  if (/^postgres(ql)?:\/\//i.test(given)) return given;
  if (!given.startsWith('pglite:')) throw new UsageError('--database takes a postgres:// URL or pglite:[DIR]');
  const dir = given.slice('pglite:'.length);
  return dir === '' || dir === 'memory' ? given : `pglite:${resolveUserPath(dir)}`;
}

/** The keys folder: --keys, else TOOLSEAL_KEYS (both relative to the user's folder), else keys/ here. */
export function resolveKeysDir(flag: string | undefined): string {
  const given = flag ?? process.env['TOOLSEAL_KEYS'];
  return given === undefined ? 'keys' : resolveUserPath(given);
}

export function resolvePort(flag: string | undefined): number {
  const text = flag ?? process.env['TOOLSEAL_PORT'] ?? '8787';
  const port = Number(text);
  if (!/^[0-9]+$/.test(text) || port > 65535)
    throw new UsageError(`port must be 0..65535, got ${JSON.stringify(text)}`);
  return port;
}

export function resolveRegistryUrl(flag: string | undefined): string {
  const url = flag ?? process.env['TOOLSEAL_REGISTRY'];
  if (!url) throw new UsageError('--registry URL is required (or set TOOLSEAL_REGISTRY)');
  try {
    return new URL(url).origin;
  } catch {
    throw new UsageError(`--registry is not a URL: ${JSON.stringify(url)}`);
  }
}

/** --token, else the environment variable (TOOLSEAL_TOKEN for publishers; operators and hosts have their own). */
export function resolveToken(flag: string | undefined, variable = 'TOOLSEAL_TOKEN'): string {
  const token = flag ?? process.env[variable];
  if (!token) throw new UsageError(`--token T is required (or set ${variable})`);
  return token;
}

export function parsePositiveInteger(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(text)) throw new UsageError(`${name} must be a positive integer`);
  return Number(text);
}

/** Pipeline worker threads for the server: a count from 0 (run the pipeline on the event loop) to 16. */
export function resolvePipelineWorkers(flag: string | undefined, fallback: number): number {
  const text = flag ?? process.env['TOOLSEAL_PIPELINE_WORKERS'];
  if (text === undefined) return fallback;
  if (!/^[0-9]+$/.test(text) || Number(text) > 16)
    throw new UsageError(`--pipeline-workers must be 0..16, got ${JSON.stringify(text)}`);
  return Number(text);
}

/**
 * `--metrics-listen` (or `variable`): `PORT`, `HOST:PORT` or `[IPv6]:PORT`; the host defaults to 127.0.0.1 (issue 29
 * §1: the metrics listener is loopback unless the operator names another interface). Undefined when not given.
 */
export function resolveMetricsListen(
  flag: string | undefined,
  variable = 'TOOLSEAL_METRICS_LISTEN',
): { host: string; port: number } | undefined {
  const text = flag ?? process.env[variable];
  if (text === undefined || text === '') return undefined;
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?([0-9]{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65_535)
    throw new UsageError('--metrics-listen must be PORT or HOST:PORT, for example 127.0.0.1:9464');
  return { host: match[1] === undefined ? '127.0.0.1' : match[1].replace(/^\[|\]$/g, ''), port };
}

/** `--log-format` (or TOOLSEAL_LOG_FORMAT): `text` (the default) or `json`. */
export function resolveLogFormat(flag: string | undefined): 'text' | 'json' {
  const text = flag ?? process.env['TOOLSEAL_LOG_FORMAT'] ?? 'text';
  if (text !== 'text' && text !== 'json') throw new UsageError('--log-format must be text or json');
  return text;
}

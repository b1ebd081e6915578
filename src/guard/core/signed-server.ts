// Guard checks the server it is given against the manifest's signed `server` member (issue 27 §2): an upstream URL
// must be one of the signed remotes (WHATWG URL normalisation; a declared `{variable}` of server.json's remote
// `variables` matches exactly one host label or one path segment), and a stdio command must run the signed package
// (identifier and exact version: `npx -y id@ver`, `uvx id==ver`, `docker run … image`; an npx `--registry` or uvx
// index option must name the signed registryBaseUrl, or the runtime's default when none is signed). Pure;
// SERVER_NOT_SIGNED.

import { ToolsealError } from '../../core/errors.ts';
import type { ManifestServer, ServerPackage, ServerRemote } from '../../pipeline/index.ts';

/**
 * Refuse (SERVER_NOT_SIGNED) an upstream that is none of the signed remotes. A manifest without a `server` member
 * signs no server: nothing to compare, the upstream is the operator's choice (as before issue 27).
 */
export function assertUpstreamSigned(server: ManifestServer | undefined, upstream: string): void {
  if (server === undefined) return;
  const remotes = server.remotes ?? [];
  if (remotes.some((remote) => matchesRemote(remote, upstream))) return;
  const signed = remotes.map((remote) => remote.url);
  throw new ToolsealError(
    'SERVER_NOT_SIGNED',
    signed.length === 0
      ? 'the manifest signs no remote server: guard will not connect to an upstream URL for it'
      : `the upstream is not a signed remote of this manifest (signed: ${signed.join(', ')})`,
  );
}

/** Whether `upstream` is the remote's URL, after normalisation, its declared variables matched one label/segment each. */
export function matchesRemote(remote: ServerRemote, upstream: string): boolean {
  const given = parseComparableUrl(upstream);
  if (given === undefined) return false;
  const declared = Object.keys(remote.variables ?? {});
  const placeholders: string[] = [];
  // Each declared {variable} becomes a token valid in a host label and a path segment, then the template is parsed.
  const template = remote.url.replace(/\{([a-zA-Z_][a-zA-Z0-9_]*)\}/g, (whole, name: string) => {
    if (!declared.includes(name)) return whole; // undeclared: stays literal (server.json)
    const token = `tsvar${placeholders.length}x`;
    placeholders.push(token);
    return token;
  });
  const signed = parseComparableUrl(template);
  if (signed === undefined) return false;
  if (signed.protocol !== given.protocol || signed.port !== given.port || signed.search !== given.search) return false;
  const hostPattern = composePattern(signed.hostname, placeholders, '[^.]+');
  const pathPattern = composePattern(signed.pathname, placeholders, '[^/]+');
  return hostPattern.test(given.hostname) && pathPattern.test(given.pathname);
}

/** The parts of a URL that name a server (no user info, no fragment), or undefined when it is not an http(s) URL. */
function parseComparableUrl(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.username = '';
  url.password = '';
  url.hash = '';
  return url;
}

/** An anchored pattern: the text literally, each placeholder token as `wildcard` (non-empty, one label or segment). */
function composePattern(text: string, placeholders: readonly string[], wildcard: string): RegExp {
  let source = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const token of placeholders) source = source.replaceAll(token, wildcard);
  return new RegExp(`^${source}$`);
}

interface SignedRun {
  runtime: string;
  spec: string;
  /** The package registries a command may name (`--registry`, `--index-url`…), without a trailing slash. */
  registries: readonly string[];
}

/** The package spec a runtime is given for a signed package, the runtime that takes it and where it may come from. */
function describeSignedPackage(pkg: ServerPackage): SignedRun | undefined {
  const base = pkg.registryBaseUrl?.replace(/\/+$/, '');
  switch (pkg.registryType) {
    case 'npm':
      return {
        runtime: 'npx',
        spec: `${pkg.identifier}@${pkg.version}`,
        registries: [base ?? 'https://registry.npmjs.org'],
      };
    case 'pypi': {
      const index = base ?? 'https://pypi.org';
      return { runtime: 'uvx', spec: `${pkg.identifier}==${pkg.version}`, registries: [index, `${index}/simple`] };
    }
    case 'oci':
      return { runtime: 'docker', spec: pkg.identifier, registries: [] };
    default:
      return undefined;
  }
}

/** npx/uvx options that take the next argument as a value, and those that choose what runs (always refused). */
const VALUE_OPTIONS: Record<string, ReadonlySet<string>> = {
  npx: new Set(['--cache', '--userconfig', '--registry']),
  uvx: new Set(['--python', '-p', '--index-url', '-i', '--index', '--default-index', '--cache-dir']),
  docker: new Set([
    '-e',
    '--env',
    '--env-file',
    '-v',
    '--volume',
    '--name',
    '--network',
    '--net',
    '-p',
    '--publish',
    '-w',
    '--workdir',
    '-u',
    '--user',
    '--mount',
    '-l',
    '--label',
    '--memory',
    '-m',
    '--cpus',
    '--platform',
    '--pull',
  ]),
};
/** Options whose value chooses the package registry: it must be one the signed package names (SignedRun.registries). */
const REGISTRY_OPTIONS: Record<string, ReadonlySet<string>> = {
  npx: new Set(['--registry']),
  uvx: new Set(['--index-url', '-i', '--index', '--default-index']),
  docker: new Set(),
};
const OTHER_PACKAGE_OPTIONS: Record<string, ReadonlySet<string>> = {
  npx: new Set(['-p', '--package', '-c', '--call']),
  uvx: new Set(['--from', '--with', '--with-requirements', '--with-editable']),
  docker: new Set(['--entrypoint']),
};

/**
 * The first argument that is not an option (skipping option values), for `runtime`, and the registries its options
 * name before it; undefined when another package is named.
 */
function selectPackageArgument(
  runtime: string,
  args: readonly string[],
): { spec: string; registries: string[] } | undefined {
  const takesValue = VALUE_OPTIONS[runtime]!;
  const otherPackage = OTHER_PACKAGE_OPTIONS[runtime]!;
  const registryOptions = REGISTRY_OPTIONS[runtime]!;
  const registries: string[] = [];
  let rest = args;
  if (runtime === 'docker') {
    if (rest[0] !== 'run') return undefined;
    rest = rest.slice(1);
  }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const option = arg.split('=', 1)[0]!;
    if (otherPackage.has(option)) return undefined;
    if (arg === '--') return rest[i + 1] === undefined ? undefined : { spec: rest[i + 1]!, registries };
    if (!arg.startsWith('-')) return { spec: arg, registries };
    if (registryOptions.has(option))
      registries.push(option === arg ? (rest[i + 1] ?? '') : arg.slice(option.length + 1));
    if (takesValue.has(arg)) i++;
  }
  return undefined;
}

/** Whether `command`'s package argument is the signed spec and every registry it names is one the package allows. */
function runsSignedPackage(pkg: SignedRun, runtime: string, args: readonly string[]): boolean {
  if (pkg.runtime !== runtime) return false;
  const given = selectPackageArgument(runtime, args);
  if (given === undefined || given.spec !== pkg.spec) return false;
  return given.registries.every((registry) => pkg.registries.includes(registry.replace(/\/+$/, '')));
}

/** `npx` for `/usr/bin/npx`, `npx.cmd` or `NPX.EXE`. */
function readRuntimeName(command: string): string {
  const base = command.split(/[\\/]/).pop() ?? command;
  return base.replace(/\.(cmd|exe|bat)$/i, '').toLowerCase();
}

/**
 * Refuse (SERVER_NOT_SIGNED) a stdio COMMAND that does not run a signed package at its exact version, unless
 * `allowUnsigned`. A manifest without a `server` member signs no server: nothing to compare.
 */
export function assertCommandSigned(
  server: ManifestServer | undefined,
  command: string,
  args: readonly string[],
  allowUnsigned: boolean,
): void {
  if (server === undefined || allowUnsigned) return;
  const runtime = readRuntimeName(command);
  const signed = (server.packages ?? []).flatMap((pkg) => describeSignedPackage(pkg) ?? []);
  if (signed.some((pkg) => runsSignedPackage(pkg, runtime, args))) return;
  throw new ToolsealError(
    'SERVER_NOT_SIGNED',
    signed.length === 0
      ? 'the manifest signs no package guard can compare a command with; --allow-unsigned-command runs it anyway'
      : `the command does not run the signed package (signed: ${signed.map((pkg) => `${pkg.runtime} ${pkg.spec}`).join(', ')}); --allow-unsigned-command runs it anyway`,
  );
}

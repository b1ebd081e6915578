// `toolseal guard`: verify a signed manifest, then proxy an MCP server over stdio so the client only sees signed tools.

import { parseArgs } from 'node:util';
import { ApprovalsClient } from '../client/approvals.ts';
import {
  type ApprovalsPort,
  type GuardPolicy,
  type GuardSession,
  readGuardPolicy,
  startStdioGuard,
} from '../guard/index.ts';
import { composeGuard } from '../guard/core/compose-guard.ts';
import { assertCommandSigned } from '../guard/core/signed-server.ts';
import { formatSignedPackageCommand, selectRunnablePackage } from '../client-config/client-config.ts';
import { ToolsealError } from '../core/errors.ts';
import type { Manifest, ManifestServer } from '../pipeline/index.ts';
import { DEFAULT_LOCKFILE_NAME } from '../lock/lockfile.ts';
import { parseManifestRef, type FetchVerifiedOptions } from '../verify/index.ts';
import { resolveRegistryUrl, userWorkingDirectory } from './config.ts';
import { UsageError, type ExitCode } from './output.ts';
import { selectServerEnvironment } from '../guard/stdio/server-environment.ts';
import { readUserFile } from './user-files.ts';
import { guardHttpUsage, runHttpGuard } from './guard-http.ts';
import { guardTelemetryUsage, startGuardTelemetry } from './guard-telemetry.ts';
import {
  fetchGuardManifest,
  hostCommandOptions,
  readJwksFile,
  readPublisherClaimFlags,
  readWitnessPolicyFile,
  resolveHostTarget,
  type HostCommandValues,
} from './verify.ts';

export const guardUsage = `toolseal guard --manifest NAME@VERSION --registry URL [--locked] [--lock FILE] [--log-key KEY] [--jwks FILE] [--witness-policy FILE] [--expect-publisher-claim NAME=VALUE]... [--strict] [--policy FILE --host-token T] [--env-deny NAME]... [--env-allow NAME]... [--allow-unsigned-command] [--metrics-listen [HOST:]PORT] [--audit-log FILE] [-- COMMAND [ARGS...]]
  A verifying MCP proxy. Fetches NAME@VERSION and verifies it (attestation, key, digest, log inclusion) BEFORE
  starting the MCP server COMMAND over stdio (in the folder toolseal was run from), then relays JSON-RPC between
  the client on stdin/stdout and the server. On every tools/list, each tool the server presents is compared
  with its signed definition: the client receives the signed tools, byte for byte; a tool that differs (a
  description, a schema keyword, an annotation, an injected _meta) or is not in the manifest is withheld, and
  a tools/call for it is refused with a JSON-RPC error (--strict refuses the whole session instead). Other
  calls reach the server under its own spelling of the tool's name (the registry signs names in NFC). Findings
  go to stderr, one JSON line each, with the server's own stderr (a server presenting only some of the signed
  tools is one line with "level":"info", not a finding that withholds anything). Exits with the server's exit code
  (1 when the session was refused). Every tools/call's arguments are checked against the signed tool (inputSchema,
  money) before it is forwarded; a refusal is a tool result with isError (the model reads it) whose
  _meta["io.toolseal/refusal"] has the code and pointer.
  --policy FILE     the operator's approval policy (schema/guard-policy-v1.schema.json): a call a rule matches is
                    forwarded only once an operator has approved that exact call (its action digest); until then
                    the client gets a tool result with isError and _meta["io.toolseal/approval"] (id, digest, URL)
  --host-token T    the registry host token guard asks for and consumes approvals with (its host's name is the
                    approvals' audience); TOOLSEAL_HOST_TOKEN may stand for it; required with --policy
  As in toolseal verify:
  --locked      also require the digest pinned for NAME@VERSION in the lockfile (PIN_MISMATCH otherwise) and the
                registry's keys pinned with it (KEY_NOT_PINNED otherwise); when the registry cannot be reached,
                start from the offline cache (TOOLSEAL_CACHE_DIR, else $XDG_CACHE_HOME/toolseal, else
                ~/.cache/toolseal) once the cached copy verifies again offline ({"event":"offline"} on stderr)
  --lock FILE   the lockfile (default ./${DEFAULT_LOCKFILE_NAME}); its registry is used when --registry is not given
  --log-key K   pin the log's note verifier key (else fetched from the registry: trust on first use)
  --witness-policy FILE  a C2SP tlog-policy: the checkpoint must carry its witness quorum (else WITNESS_QUORUM)
  --jwks FILE   pin the attestation keys (else the registry's JWKS is fetched: trust on first use)
  --expect-publisher-claim NAME=VALUE  (repeatable) the attestation's provenance must carry this claim exactly
                (e.g. repository=acme/payments-mcp), else PUBLISHER_MISMATCH and guard does not start
  --strict      refuse the session on the first tool that differs or is unknown
  Without COMMAND, a manifest that signs its server starts the signed package itself: npm as npx -y ID@VERSION,
  PyPI as uvx ID==VERSION, OCI as docker run -i --rm IMAGE (pinned by digest), with the signed arguments and the
  signed environment variables' fixed values (a required one without a value comes from guard's environment).
  --allow-unsigned-command  when the manifest signs a server (its "server" member), COMMAND must run a signed
                package at its exact version (npx -y ID@VERSION, uvx ID==VERSION, docker run … IMAGE):
                SERVER_NOT_SIGNED, nothing started, otherwise; this option runs COMMAND anyway
  --env-deny NAME   do not pass NAME to the server either (repeatable, or NAME,NAME)
  --env-allow NAME  pass only the named variables to the server (an allow-list; repeatable, or NAME,NAME)
  The server gets guard's environment without any TOOLSEAL_* variable (tokens never reach it) and without the
  --env-deny names; with --env-allow, only those names (never a TOOLSEAL_* one; name PATH if COMMAND is found
  through it). TOOLSEAL_REGISTRY may stand for --registry, TOOLSEAL_HOST_TOKEN for --host-token.
${guardTelemetryUsage}
${guardHttpUsage}`;

/** Where to fetch the manifest from and how to verify it, from the options verify shares (--lock, --log-key, --jwks). */
interface GuardTarget {
  registry: string;
  ref: string;
  options: FetchVerifiedOptions;
}
const FORWARDED_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export async function runGuardCommand(args: string[]): Promise<ExitCode> {
  const separator = args.indexOf('--');
  const { values, positionals } = parseArgs({
    args: separator < 0 ? args : args.slice(0, separator),
    options: {
      manifest: { type: 'string' },
      registry: hostCommandOptions.registry,
      locked: hostCommandOptions.locked,
      lock: hostCommandOptions.lock,
      'log-key': hostCommandOptions['log-key'],
      jwks: hostCommandOptions.jwks,
      'witness-policy': hostCommandOptions['witness-policy'],
      'expect-publisher-claim': hostCommandOptions['expect-publisher-claim'],
      // Deprecated spelling of --lock (guard's before the host commands agreed on --lock); not in --help.
      lockfile: { type: 'string' },
      strict: { type: 'boolean' },
      policy: { type: 'string' },
      'host-token': { type: 'string' },
      upstream: { type: 'string' },
      listen: { type: 'string' },
      'allow-origin': { type: 'string', multiple: true },
      'env-deny': { type: 'string', multiple: true },
      'env-allow': { type: 'string', multiple: true },
      'allow-unsigned-command': { type: 'boolean' },
      'metrics-listen': { type: 'string' },
      'audit-log': { type: 'string' },
    },
    allowPositionals: true,
  });
  if (separator >= 0 && positionals.length > 0)
    throw new UsageError(`unexpected arguments before --: ${positionals.join(' ')}`);
  const [command, ...commandArgs] = separator < 0 ? positionals : args.slice(separator + 1);
  const http = values.upstream !== undefined || values.listen !== undefined;
  if (values.manifest === undefined) throw new UsageError(guardUsage);
  if (values.lock !== undefined && values.lockfile !== undefined)
    throw new UsageError(`--lockfile is the deprecated spelling of --lock; give only --lock`);
  const hostValues: HostCommandValues = {
    registry: values.registry,
    lock: values.lock ?? values.lockfile,
    locked: values.locked,
    'log-key': values['log-key'],
    jwks: values.jwks,
    'witness-policy': values['witness-policy'],
    'expect-publisher-claim': values['expect-publisher-claim'],
  };
  const hostToken = values['host-token'] ?? process.env['TOOLSEAL_HOST_TOKEN'];
  if (values.policy !== undefined && (hostToken === undefined || hostToken === ''))
    throw new UsageError(
      '--policy needs --host-token T (or TOOLSEAL_HOST_TOKEN): guard asks the registry for approvals',
    );
  if (http) {
    if (values['env-deny'] !== undefined || values['env-allow'] !== undefined)
      throw new UsageError(
        '--env-deny and --env-allow choose the environment of a COMMAND guard starts: give them without --upstream',
      );
    return runHttpGuard(values, command, async () => {
      const target = await resolveGuardTarget(values.manifest!, hostValues);
      const policy = await readPolicyOption(values.policy);
      return { ...target, policy, approvals: openApprovals(target.registry, policy, hostToken) };
    });
  }
  const env = selectServerEnvironment(process.env, {
    deny: readEnvNames(values['env-deny'], '--env-deny'),
    allow: values['env-allow'] === undefined ? undefined : readEnvNames(values['env-allow'], '--env-allow'),
  });
  const policy = await readPolicyOption(values.policy);
  const target = await resolveGuardTarget(values.manifest, hostValues);

  // Verify before the server starts: a manifest that does not verify never gets a session. With a policy, whoami
  // first (composeGuard): a token the registry refuses (or one that is not a host's) fails before the server starts.
  const verified = await fetchGuardManifest(target);
  const composed = await composeGuard(verified, {
    strict: values.strict ?? false,
    locked: target.options.lock !== undefined,
    ...(policy === undefined ? {} : { policy, approvals: openApprovals(target.registry, policy, hostToken) }),
  });
  // Without COMMAND, the signed package itself (issue 27 §2); with one, it must run the signed package:
  // SERVER_NOT_SIGNED before it is started, unless --allow-unsigned-command.
  const [run, ...runArgs] =
    command === undefined ? composeSignedCommand(composed.server, env) : [command, ...commandArgs];
  if (command !== undefined)
    assertCommandSigned(composed.server, command, commandArgs, values['allow-unsigned-command'] ?? false);
  const telemetry = await startGuardTelemetry(values, run!);
  try {
    for (const line of [...composed.startLines, ...(telemetry?.startLines ?? [])])
      process.stderr.write(`${JSON.stringify(line)}\n`);
    const session = composed.createSession(telemetry?.observer?.openSession());
    return await runStdioSession(session, run!, runArgs, env, telemetry?.rewriteForwarded);
  } finally {
    await telemetry?.close();
  }
}

/** Run COMMAND behind the stdio guard until it exits; its exit code is passed on as is (the guard is transparent). */
async function runStdioSession(
  session: GuardSession,
  command: string,
  commandArgs: string[],
  env: NodeJS.ProcessEnv,
  rewriteForwarded: ((text: string) => string) | undefined,
): Promise<ExitCode> {
  const { guard, gate } = session;
  const running = startStdioGuard({
    guard,
    session,
    ...(gate === undefined ? {} : { gate }),
    ...(rewriteForwarded === undefined ? {} : { rewriteForwarded }),
    command,
    args: commandArgs,
    env,
    // The user's folder, also under `npm run toolseal` (which runs in the package root): paths in COMMAND are theirs.
    cwd: userWorkingDirectory(),
    input: process.stdin,
    output: process.stdout,
    errorOutput: process.stderr,
  });
  const forward = (signal: NodeJS.Signals): void => running.stop(signal);
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  try {
    const outcome = await running.done;
    // The server's own exit code may be outside 0..2.
    return outcome.exitCode;
  } finally {
    session.end();
    for (const signal of FORWARDED_SIGNALS) process.off(signal, forward);
    process.stdin.destroy();
  }
}

/**
 * The command line of the signed package (formatSignedPackageCommand), its signed environment variables with a fixed
 * value set in `env`; a required one without a value must already be there. SERVER_NOT_SIGNED without a package
 * guard can start.
 */
function composeSignedCommand(server: ManifestServer | undefined, env: NodeJS.ProcessEnv): string[] {
  const pkg =
    server === undefined ? undefined : selectRunnablePackage({ server } as Pick<Manifest, 'server'> as Manifest);
  if (pkg === undefined)
    throw new ToolsealError(
      'SERVER_NOT_SIGNED',
      'the manifest signs no npm, PyPI or OCI package guard can start: give the server COMMAND after --',
    );
  for (const variable of pkg.environmentVariables ?? []) {
    const value = variable.value ?? (env[variable.name] === undefined ? variable.default : undefined);
    if (value !== undefined && !value.includes('{')) env[variable.name] = value;
    else if (variable.isRequired === true && env[variable.name] === undefined)
      throw new UsageError(`the signed package needs the environment variable ${variable.name}`);
  }
  return formatSignedPackageCommand(pkg);
}

/** Variable names from a repeatable option, each also a comma-separated list (`--env-deny A,B --env-deny C`). */
function readEnvNames(given: string[] | undefined, option: string): string[] {
  const names = (given ?? []).flatMap((value) => value.split(',')).map((name) => name.trim());
  for (const name of names)
    if (name === '' || name.includes('=') || name.includes('\0'))
      throw new UsageError(`${option} takes environment variable names, not ${JSON.stringify(name)}`);
  return names;
}

/** The --policy file, read strictly (readGuardPolicy's codes and pointers), or undefined without one. */
async function readPolicyOption(file: string | undefined): Promise<GuardPolicy | undefined> {
  return file === undefined ? undefined : readGuardPolicy(await readUserFile(file, '--policy'));
}

/** Under a policy, the registry's approvals API with the host token (read once, never passed to the server). */
function openApprovals(
  registryUrl: string,
  policy: GuardPolicy | undefined,
  hostToken: string | undefined,
): ApprovalsPort | undefined {
  return policy === undefined ? undefined : new ApprovalsClient({ registry: registryUrl, token: hostToken! });
}

/**
 * NAME@VERSION goes through the resolution verify uses (the lockfile, --locked, the registry fallback, the pinned
 * keys). A digest reference is a pin by itself: no --locked, and the registry must be given.
 */
async function resolveGuardTarget(ref: string, values: HostCommandValues): Promise<GuardTarget> {
  if (!ref.startsWith('sha256:')) {
    const target = await resolveHostTarget(ref, values, guardUsage, { locked: values.locked === true, useLock: false });
    return { registry: target.registry, ref, options: target.options };
  }
  parseManifestRef(ref);
  if (values.locked === true)
    throw new UsageError('--locked needs --manifest NAME@VERSION (a digest reference is a pin by itself)');
  const options: FetchVerifiedOptions = {};
  if (values['log-key'] !== undefined) options.logKey = values['log-key'];
  if (values.jwks !== undefined) options.jwks = await readJwksFile(values.jwks);
  if (values['witness-policy'] !== undefined)
    options.witnessPolicy = await readWitnessPolicyFile(values['witness-policy']);
  const publisherClaims = readPublisherClaimFlags(values['expect-publisher-claim']);
  if (publisherClaims !== undefined) options.expectPublisherClaim = publisherClaims;
  return { registry: resolveRegistryUrl(values.registry), ref, options };
}

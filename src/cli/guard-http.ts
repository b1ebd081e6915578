// `toolseal guard --upstream URL --listen 127.0.0.1:PORT`: the guard for a Streamable HTTP server (issue 14 §1;
// MCP 2025-06-18 "Transports" §Streamable HTTP), verified before it listens, until SIGINT or SIGTERM.

import type { ApprovalsPort, GuardPolicy } from '../guard/index.ts';
import { type ComposedGuard, composeGuard } from '../guard/core/compose-guard.ts';
import { assertUpstreamSigned } from '../guard/core/signed-server.ts';
import { startHttpGuard } from '../guard/http/http-guard.ts';
import type { FetchVerifiedOptions } from '../verify/index.ts';
import { UsageError, type ExitCode } from './output.ts';
import { fetchGuardManifest } from './verify.ts';
import { type GuardTelemetry, type GuardTelemetryValues, startGuardTelemetry } from './guard-telemetry.ts';

export const guardHttpUsage = `toolseal guard --manifest NAME@VERSION --registry URL --upstream URL --listen 127.0.0.1:PORT [--allow-origin ORIGIN]... [--locked] [--lock FILE] [--log-key KEY] [--jwks FILE] [--strict] [--policy FILE --host-token T]
  The same guard for a remote (Streamable HTTP) MCP server: verifies NAME@VERSION (when it signs a server, the
  --upstream URL must be one of its signed remotes: SERVER_NOT_SIGNED, nothing sent, otherwise), then serves the local endpoint
  http://127.0.0.1:PORT/mcp (printed on stderr as {"event":"listening","url":…}) that the MCP client connects to
  instead of the server at --upstream. Each session's tools/list answers (JSON or SSE) reach the client only as
  the signed tools; guard lists the server's tools itself when a session starts and after each list_changed, so
  a tools/call never reaches the server for a tool not checked. Authorization and the other end-to-end headers
  are passed to the server and never logged. Listens on 127.0.0.1 only; a request whose Origin is not its own
  (or an --allow-origin) is refused with 403. Every tools/call's arguments are checked against the signed tool and
  --policy/--host-token enforce approvals exactly as in the stdio mode. Runs until SIGINT or SIGTERM.
  --upstream URL        the server's MCP endpoint (http: or https:)
  --listen HOST:PORT    127.0.0.1:PORT (PORT 0 picks a free port)
  --allow-origin O      also accept requests from the web origin O (repeatable)`;

/** The options `toolseal guard` parsed that the HTTP mode reads. */
export interface HttpGuardValues extends GuardTelemetryValues {
  upstream?: string | undefined;
  listen?: string | undefined;
  'allow-origin'?: string[] | undefined;
  strict?: boolean | undefined;
  policy?: string | undefined;
}

/** Where to fetch the manifest from and how to verify it (resolved as `toolseal guard` resolves it). */
export interface HttpGuardTarget {
  registry: string;
  ref: string;
  options: FetchVerifiedOptions;
  /** The operator's approval policy, and the registry's approvals API to enforce it with. */
  policy: GuardPolicy | undefined;
  approvals: ApprovalsPort | undefined;
}

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Check the HTTP mode's options before anything is fetched. */
export function checkHttpGuardValues(values: HttpGuardValues, command: string | undefined): { port: number } {
  if (command !== undefined) throw new UsageError('--upstream guards a remote server: give no COMMAND');
  if (values.upstream === undefined || values.listen === undefined)
    throw new UsageError(`--upstream and --listen go together\n${guardHttpUsage}`);
  let upstream: URL;
  try {
    upstream = new URL(values.upstream);
  } catch {
    throw new UsageError(`--upstream must be a URL, not ${JSON.stringify(values.upstream)}`);
  }
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:')
    throw new UsageError('--upstream must be an http: or https: URL');
  for (const origin of values['allow-origin'] ?? []) {
    if (!/^https?:\/\/[^/]+$/i.test(origin))
      throw new UsageError(`--allow-origin takes an origin (scheme://host[:port]), not ${JSON.stringify(origin)}`);
  }
  const match = /^127\.0\.0\.1:(\d{1,5})$/.exec(values.listen);
  const port = match === null ? Number.NaN : Number(match[1]);
  if (!(port >= 0 && port <= 65535))
    throw new UsageError(`--listen takes 127.0.0.1:PORT (guard listens on loopback only), not ${values.listen}`);
  return { port };
}

export async function runHttpGuard(
  values: HttpGuardValues,
  command: string | undefined,
  resolveTarget: () => Promise<HttpGuardTarget>,
): Promise<ExitCode> {
  const { port } = checkHttpGuardValues(values, command);
  const target = await resolveTarget();
  // Verify before listening: a manifest that does not verify never gets a session.
  const verified = await fetchGuardManifest(target);
  // With a policy, whoami first (composeGuard): a token the registry refuses (or not a host's) fails before listening.
  const composed = await composeGuard(verified, {
    strict: values.strict ?? false,
    requireListed: true,
    locked: target.options.lock !== undefined,
    ...(target.policy === undefined ? {} : { policy: target.policy, approvals: target.approvals }),
  });
  // With a signed server, the upstream must be one of its remotes: SERVER_NOT_SIGNED before anything is sent to it.
  assertUpstreamSigned(composed.server, values.upstream!);
  const telemetry = await startGuardTelemetry(values, values.upstream!);
  try {
    for (const line of [...composed.startLines, ...(telemetry?.startLines ?? [])])
      process.stderr.write(`${JSON.stringify(line)}\n`);
    return await serveHttpGuard(values, port, composed, telemetry);
  } finally {
    await telemetry?.close();
  }
}

async function serveHttpGuard(
  values: HttpGuardValues,
  port: number,
  composed: ComposedGuard,
  telemetry: GuardTelemetry | undefined,
): Promise<ExitCode> {
  const observer = telemetry?.observer;
  const guard = await startHttpGuard({
    createPolicy: () => composed.createSession(observer?.openSession()),
    ...(telemetry?.interceptUpstream === undefined ? {} : { interceptUpstream: telemetry.interceptUpstream }),
    upstream: values.upstream!,
    port,
    allowedOrigins: values['allow-origin'] ?? [],
    onFinding: (finding) => process.stderr.write(`${JSON.stringify(finding)}\n`),
    onEvent: (event) => process.stderr.write(`${JSON.stringify(event)}\n`),
  });
  process.stderr.write(
    `${JSON.stringify({ event: 'listening', url: guard.url, upstream: redactUrl(values.upstream!) })}\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      for (const signal of STOP_SIGNALS) process.off(signal, stop);
      resolve();
    };
    for (const signal of STOP_SIGNALS) process.on(signal, stop);
  });
  await guard.close();
  return 0;
}

/** The URL without its user info and query (they may hold secrets), for the listening line. */
function redactUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

// `toolseal guard`: verify a signed manifest, then proxy an MCP server over stdio so the client only sees signed tools.

import { parseArgs } from 'node:util';
import { ToolsealError } from '../core/errors.ts';
import { ToolGuard, startStdioGuard } from '../guard/index.ts';
import { DEFAULT_LOCKFILE_NAME, getLockEntry, readLockfile, type LockEntry } from '../lock/lockfile.ts';
import { fetchVerified, parseManifestRef } from '../verify/index.ts';
import { resolveRegistryUrl } from './config.ts';
import { UsageError, type ExitCode } from './output.ts';

export const guardUsage = `toolseal guard --manifest NAME@VERSION --registry URL [--locked [--lockfile FILE]] [--strict] -- COMMAND [ARGS...]
  A verifying MCP proxy. Fetches NAME@VERSION and verifies it (attestation, key, digest, log inclusion;
  --locked: the digest must also be the one pinned for NAME@VERSION in the lockfile, default
  ${DEFAULT_LOCKFILE_NAME}, whose registry is used when --registry is not given) BEFORE starting the MCP server
  COMMAND over stdio, then relays JSON-RPC between the client on stdin/stdout and the server. On every
  tools/list, each tool the server presents is compared with its signed definition: the client receives
  the signed tools, byte for byte; a tool that differs (a description, a schema keyword, an annotation,
  an injected _meta) or is not in the manifest is withheld, and a tools/call for it is refused with a
  JSON-RPC error. --strict refuses the whole session instead. Findings go to stderr, one JSON line each,
  with the server's own stderr. Exits with the server's exit code (1 when the session was refused).
  TOOLSEAL_REGISTRY may stand for --registry.`;

const FORWARDED_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export async function runGuardCommand(args: string[]): Promise<ExitCode> {
  const separator = args.indexOf('--');
  const { values, positionals } = parseArgs({
    args: separator < 0 ? args : args.slice(0, separator),
    options: {
      manifest: { type: 'string' },
      registry: { type: 'string' },
      locked: { type: 'boolean' },
      lockfile: { type: 'string' },
      strict: { type: 'boolean' },
    },
    allowPositionals: true,
  });
  if (separator >= 0 && positionals.length > 0)
    throw new UsageError(`unexpected arguments before --: ${positionals.join(' ')}\n${guardUsage}`);
  const [command, ...commandArgs] = separator < 0 ? positionals : args.slice(separator + 1);
  if (values.manifest === undefined || command === undefined) throw new UsageError(guardUsage);
  if (values.lockfile !== undefined && !values.locked)
    throw new UsageError(`--lockfile is only meaningful with --locked\n${guardUsage}`);

  const pin = values.locked ? await readPin(values.manifest, values.lockfile ?? DEFAULT_LOCKFILE_NAME) : undefined;
  const lock = pin?.lock;
  const lockRegistry = pin?.registry;
  const registry = resolveRegistryUrl(values.registry ?? process.env['TOOLSEAL_REGISTRY'] ?? lockRegistry);

  // Verify before the server starts: a manifest that does not verify never gets a session.
  const verified = await fetchVerified(registry, values.manifest, lock === undefined ? {} : { lock });
  const guard = new ToolGuard(verified.bytes, { strict: values.strict ?? false, expectedDigest: verified.digest });
  process.stderr.write(
    `${JSON.stringify({
      event: 'verified',
      manifest: guard.subject,
      digest: verified.digest,
      kid: verified.kid,
      logIndex: verified.logIndex,
      tools: guard.toolNames,
      locked: lock !== undefined,
      strict: guard.strict,
    })}\n`,
  );

  const session = startStdioGuard({
    guard,
    command,
    args: commandArgs,
    input: process.stdin,
    output: process.stdout,
    errorOutput: process.stderr,
  });
  const forward = (signal: NodeJS.Signals): void => session.stop(signal);
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  try {
    const outcome = await session.done;
    // The server's own exit code is passed on as is (it may be outside 0..2: the guard is transparent).
    return outcome.exitCode;
  } finally {
    for (const signal of FORWARDED_SIGNALS) process.off(signal, forward);
    process.stdin.destroy();
  }
}

/** `--locked`: the lockfile's entry for `manifest` (NAME@VERSION) and the registry it names; refused when there is none. */
async function readPin(
  manifest: string,
  lockfilePath: string,
): Promise<{ lock: LockEntry; registry: string | undefined }> {
  const ref = parseManifestRef(manifest);
  if (ref.kind !== 'version')
    throw new UsageError('--locked needs --manifest NAME@VERSION (a digest reference is a pin by itself)');
  const lockfile = await readLockfile(lockfilePath);
  if (lockfile === undefined)
    throw new ToolsealError(
      'PIN_MISMATCH',
      `--locked: there is no lockfile ${lockfilePath}; pin ${manifest} first (toolseal pin)`,
    );
  const lock = getLockEntry(lockfile, ref.name, ref.version);
  if (lock === undefined)
    throw new ToolsealError(
      'PIN_MISMATCH',
      `--locked: ${manifest} is not pinned in ${lockfilePath}; pin it first (toolseal pin)`,
    );
  return { lock, registry: lock.registry ?? lockfile.registry };
}

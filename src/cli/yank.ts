// `toolseal yank NAME@VERSION --reason TEXT`: mark a version yanked as its publisher (the bytes stay served; the yank
// is a log entry). Prints the registry's answer as one JSON object; refusals are relayed by the registry client.

import { parseArgs } from 'node:util';
import { RegistryClient } from '../client/registry-client.ts';
import { type ManifestRef, parseManifestRef } from '../protocol/manifest-ref.ts';
import { resolveRegistryUrl, resolveToken } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';

export const yankUsage = `toolseal yank NAME@VERSION --reason TEXT --registry URL --token T
  Marks NAME@VERSION yanked with a reason (plain text, 1 to 1000 characters): \`latest\` skips it, its bytes stay
  fetchable, and the yank is recorded in the log. Yanking again keeps the first reason and says so
  ("alreadyYanked": true). TOOLSEAL_REGISTRY and TOOLSEAL_TOKEN may stand for the flags. Prints one JSON object.`;

export async function runYankCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { reason: { type: 'string' }, registry: { type: 'string' }, token: { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length !== 1) throw new UsageError(yankUsage);
  if (values.reason === undefined) throw new UsageError(`--reason TEXT is required`);
  const ref = readRef(positionals[0]!);
  if (ref.kind !== 'version') throw new UsageError(`yank needs NAME@VERSION, not a digest`);
  const registry = resolveRegistryUrl(values.registry);
  const token = resolveToken(values.token);
  const answer = await new RegistryClient(registry, { token }).yank(ref.name, ref.version, values.reason);
  await writeStdout(`${JSON.stringify(answer)}\n`);
  return 0;
}

/** A malformed NAME@VERSION is a usage error (exit 2), as for verify and pin. */
function readRef(text: string): ManifestRef {
  try {
    return parseManifestRef(text);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

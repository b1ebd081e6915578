// `toolseal check NAME@VERSION -- COMMAND...` (or `--url URL`): a live server against its signed manifest, every
// difference at once. The manifest is fetched and verified as `toolseal verify` does; the live list is taken as
// `manifest capture` takes it (src/build/capture.ts); tools are judged as the guard judges them
// (src/dispatch/live-tools.ts).

import { parseArgs } from 'node:util';
import { captureTools } from '../build/index.ts';
import type { JsonObject, JsonValue } from '../core/json.ts';
import { compareLiveTools, type LiveToolDifference } from '../dispatch/live-tools.ts';
import { fetchVerified, lockKey } from '../host/index.ts';
import { captureSourceOptions, captureSourceUsage, readCaptureSource } from './capture-options.ts';
import { writeStdout, type ExitCode } from './output.ts';
import { checkOneReference, hostCommandOptions, resolveHostTarget, warnIfYanked } from './verify.ts';

export const checkUsage = `toolseal check NAME@VERSION [--registry URL] [--locked] [--json] -- COMMAND [ARGS...]
toolseal check NAME@VERSION [--registry URL] [--locked] [--json] --url URL [--header 'Name: value']...
  Fetches and fully verifies NAME@VERSION (as toolseal verify does, with its --lock, --locked, --log-key,
  --jwks and --timeout), lists the live server's tools as manifest capture does, and compares them with the
  signed tools as guard would: every tool that differs (with every changed field), every tool the server
  presents that is not signed, and every signed tool it does not present, all at once. Prints text, or one
  JSON object {name, version, digest, registry, tools, differences} with --json. Exit 0 when the server
  presents exactly the signed tools, 1 when anything differs (or a check fails).
${captureSourceUsage}`;

export async function runCheckCommand(args: string[]): Promise<ExitCode> {
  const separator = args.indexOf('--');
  const { values, positionals } = parseArgs({
    args: separator < 0 ? args : args.slice(0, separator),
    options: { ...hostCommandOptions, ...captureSourceOptions, json: { type: 'boolean' } },
    allowPositionals: true,
  });
  checkOneReference(positionals);
  const source = readCaptureSource(values, separator < 0 ? undefined : args.slice(separator + 1));
  const locked = values.locked === true;
  const target = await resolveHostTarget(positionals[0], values, checkUsage, { locked, useLock: false });
  const signed = await fetchVerified(target.registry, lockKey(target.name, target.version), target.options);
  warnIfYanked(signed, locked);
  const live = await captureTools(source, source);
  const differences = compareLiveTools(signed.manifest as unknown as JsonObject, live);
  const report = {
    name: signed.name,
    version: signed.version,
    digest: signed.digest,
    registry: signed.registry,
    tools: { signed: signed.manifest.tools.length, live: live.length },
    differences,
  };
  await writeStdout(values.json === true ? `${JSON.stringify(report)}\n` : formatCheck(report));
  return differences.length === 0 ? 0 : 1;
}

function formatCheck(report: {
  name: string;
  version: string;
  digest: string;
  tools: { signed: number; live: number };
  differences: LiveToolDifference[];
}): string {
  const head = `${lockKey(report.name, report.version)} (${report.digest})`;
  if (report.differences.length === 0)
    return `${head}: the server presents exactly the ${report.tools.signed} signed tools\n`;
  const count = report.differences.length;
  const lines = [`${head}: ${count} difference${count === 1 ? '' : 's'} between the server and the signed manifest`];
  for (const difference of report.differences) {
    lines.push(
      `${difference.kind.padEnd(10)} ${JSON.stringify(difference.tool)} (${difference.pointer}): ${difference.message}`,
    );
    for (const change of difference.changes)
      lines.push(`    ${change.pointer}: signed ${showValue(change.before)}, server ${showValue(change.after)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A value on one line (JSON), or "(absent)". */
export function showValue(value: JsonValue | undefined): string {
  return value === undefined ? '(absent)' : JSON.stringify(value);
}

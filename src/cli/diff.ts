// `toolseal diff NAME@A NAME@B`: what changed between two versions, as the web page /ui/diff shows it
// (src/web/manifest-diff.ts): the signed server's changes first (issue 27 §5), then capability changes, the widening
// ones on top, then every changed field of the manifest and of each tool with its RFC 6901 pointer. Both versions are fetched and verified as `toolseal verify` does.

import { parseArgs } from 'node:util';
import { fetchVerified, lockKey, type FetchedManifest } from '../host/index.ts';
import { diffManifests, type FieldChange, type ManifestDiff } from '../web/manifest-diff.ts';
import { showValue } from './check.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { hostCommandOptions, resolveHostTarget, warnIfYanked } from './verify.ts';

export const diffUsage = `toolseal diff NAME@A NAME@B [--registry URL] [--json] [--locked] [--lock FILE] [--log-key KEY] [--jwks FILE]
  Fetches and fully verifies both versions (as toolseal verify does) and prints what changed from A to B, as
  the registry's diff page shows it: when a version signs its server, the server's changes first (a new remote
  URL or package identifier is wider), then capability changes (wider ones on top: a new host, secret or path,
  a higher money ceiling, a declaration dropped), then every changed manifest field and tool (added, removed,
  changed with every field's JSON pointer, before and after). --json prints one JSON object
  {name, from, to, diff: {server, serverFields, manifest, tools, capabilities}}. Exit 0 whatever the changes.`;

export async function runDiffCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { ...hostCommandOptions, json: { type: 'boolean' } },
    allowPositionals: true,
  });
  if (positionals.length !== 2) throw new UsageError(`expected NAME@A NAME@B, got ${positionals.length} arguments`);
  const locked = values.locked === true;
  const fetched: FetchedManifest[] = [];
  for (const ref of positionals) {
    const target = await resolveHostTarget(ref, values, diffUsage, { locked, useLock: false });
    const result = await fetchVerified(target.registry, lockKey(target.name, target.version), target.options);
    warnIfYanked(result, locked);
    fetched.push(result);
  }
  const [from, to] = fetched as [FetchedManifest, FetchedManifest];
  const diff = diffManifests(from.manifest, to.manifest);
  if (values.json === true) {
    const side = (result: FetchedManifest) => ({
      name: result.name,
      version: result.version,
      digest: result.digest,
      registry: result.registry,
      ...(result.status === undefined ? {} : { status: result.status }),
      ...(result.yankReason === undefined ? {} : { yankReason: result.yankReason }),
    });
    await writeStdout(`${JSON.stringify({ name: to.name, from: side(from), to: side(to), diff })}\n`);
  } else {
    await writeStdout(formatDiff(from, to, diff));
  }
  return 0;
}

function formatDiff(from: FetchedManifest, to: FetchedManifest, diff: ManifestDiff): string {
  const title =
    from.name === to.name
      ? `${to.name}: ${from.version} → ${to.version}`
      : `${lockKey(from.name, from.version)} → ${lockKey(to.name, to.version)}`;
  const lines = [title, describeSide('from', from), describeSide('to', to)];
  if (from.manifest.server !== undefined || to.manifest.server !== undefined) {
    lines.push('', 'Signed server');
    if (diff.server.length === 0) lines.push('  no change: the same packages and remotes');
    for (const change of diff.server)
      lines.push(`  ${change.direction.toUpperCase().padEnd(8)} ${oneLine(change.text)} (${change.pointer})`);
    lines.push(...formatChanges(diff.serverFields));
  }
  lines.push('', 'Capability changes');
  if (diff.capabilities.length === 0) lines.push('  none: every tool may touch what it could before');
  for (const change of diff.capabilities)
    lines.push(
      `  ${change.direction === 'wider' ? 'WIDER   ' : 'narrower'} ${JSON.stringify(change.tool)}: ${oneLine(change.text)} (${change.pointer})`,
    );
  if (diff.manifest.length > 0) {
    lines.push('', 'Manifest');
    lines.push(...formatChanges(diff.manifest));
  }
  lines.push('', 'Tools');
  for (const tool of diff.tools) {
    lines.push(`  ${tool.kind.padEnd(9)} ${JSON.stringify(tool.name)} (${tool.pointer})`);
    lines.push(...formatChanges(tool.changes).map((line) => `  ${line}`));
  }
  return `${lines.join('\n')}\n`;
}

function describeSide(label: string, result: FetchedManifest): string {
  const yanked =
    result.status === 'yanked'
      ? ` yanked${result.yankReason === undefined ? '' : `: ${JSON.stringify(result.yankReason)}`}`
      : '';
  return `${label.padEnd(4)} ${result.version} ${result.digest}${yanked}`;
}

function formatChanges(changes: readonly FieldChange[]): string[] {
  return changes.map((change) => `  ${change.pointer}: ${showValue(change.before)} → ${showValue(change.after)}`);
}

/** Vendor-written words on one line, control characters escaped (nothing a terminal acts on). */
function oneLine(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

// `toolseal audit`: check a registry's transparency log from the outside (src/audit/) and remember where it stood.

import { parseArgs } from 'node:util';
import { ToolsealError } from '../core/errors.ts';
import { parseVerifierString } from '../log/note.ts';
import { auditWithStateFile, type AuditReport } from '../audit/index.ts';
import { defaultAuditStateFile } from '../audit/state.ts';
import { resolveRegistryUrl } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { withUserFile } from './user-files.ts';
import { readWitnessPolicyFile } from './verify.ts';
import type { WitnessPolicy } from '../log/policy.ts';

export const auditUsage = `toolseal audit --registry URL [--state FILE | --no-state] [--json] [--log-key VERIFIER] [--witness-policy FILE]
  Verifies the registry's signed checkpoint (log key: --log-key, else the one in the state file, else
  trusted on first use from /v1/log/key), proves it consistent with the checkpoint remembered in the state
  file (a rollback or fork is refused and the file is left as it was), walks the new log entries and checks
  that they hash to the checkpoint root, that every attestation verifies against the JWKS and that every
  manifest's bytes hash to the attested digest. The state is advanced (atomically) only when all of it passed.
  --state FILE  the state file (relative to the folder the command was run from); by default one file per
                registry origin in $XDG_CONFIG_HOME/toolseal/audit/ (else ~/.config/toolseal/audit/)
  --no-state    remember nothing: read no state and write none (every run is a first audit)
  --witness-policy FILE  a C2SP tlog-policy: the checkpoint must carry its witness quorum (else WITNESS_QUORUM)
  Exit 0 when all is well, 1 on any problem. --json prints one JSON object.`;

export async function runAuditCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      registry: { type: 'string' },
      state: { type: 'string' },
      'no-state': { type: 'boolean' },
      json: { type: 'boolean' },
      'log-key': { type: 'string' },
      'witness-policy': { type: 'string' },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  const registry = resolveRegistryUrl(values.registry);
  const logKey = values['log-key'];
  if (logKey !== undefined) {
    try {
      parseVerifierString(logKey);
    } catch (error) {
      throw new UsageError(
        `--log-key is not a note verifier string: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  const shown = chooseStateFile(values.state, values['no-state'] === true, registry);
  const witnessPolicy =
    values['witness-policy'] === undefined ? undefined : await readWitnessPolicyFile(values['witness-policy']);
  const report = await auditWithState(registry, shown, logKey, witnessPolicy);

  await writeStdout(values.json ? `${JSON.stringify(report)}\n` : formatSummary(report));
  if (!report.ok) {
    const first = report.problems[0];
    const refused = report.consistency === 'refused';
    const message = `${refused ? 'REFUSED: the registry log is not consistent with what was seen before; ' : ''}audit failed with ${report.problems.length} problem(s)${report.stateFile ? '; the state file was not advanced' : ''}`;
    process.stderr.write(`${JSON.stringify({ code: first?.code ?? 'AUDIT_FAILED', message })}\n`);
  }
  return report.ok ? 0 : 1;
}

/** The state file as the user named it (--state), else the default one for `registry`; undefined with --no-state. */
function chooseStateFile(state: string | undefined, noState: boolean, registry: string): string | undefined {
  if (state === '') throw new UsageError('--state needs a file name');
  if (state !== undefined && noState) throw new UsageError('--state and --no-state exclude each other');
  return noState ? undefined : (state ?? defaultAuditStateFile(registry));
}

/** Audit with the state file `shown` (opened relative to the user's folder, named as shown), if any. */
async function auditWithState(
  registry: string,
  shown: string | undefined,
  logKey: string | undefined,
  witnessPolicy: WitnessPolicy | undefined,
): Promise<AuditReport> {
  const options = {
    registry,
    ...(logKey === undefined ? {} : { logKey }),
    ...(witnessPolicy === undefined ? {} : { witnessPolicy }),
  };
  if (shown === undefined) return auditWithStateFile(options);
  try {
    const report = await withUserFile(shown, '--state', (stateFile) => auditWithStateFile({ ...options, stateFile }));
    report.stateFile = shown;
    return report;
  } catch (error) {
    // A state file that is not one of ours is an environment problem, not a registry failure.
    if (error instanceof ToolsealError && error.code === 'BAD_REQUEST')
      throw new UsageError(`${shown}: ${error.message}`);
    throw error;
  }
}

const SOURCE_TEXT = {
  flag: 'from --log-key',
  state: 'remembered in the state file',
  tofu: 'TRUSTED ON FIRST USE from /v1/log/key',
} as const;

function formatSummary(report: AuditReport): string {
  const lines = [`toolseal audit ${report.registry}`];
  lines.push(`  state: ${report.stateFile ?? 'none (--no-state)'}`);
  if (report.logKey) lines.push(`  log key: ${report.logKey.verifier} (${SOURCE_TEXT[report.logKey.source]})`);
  const from = report.previous ? String(report.previous.size) : '(none)';
  const to = report.checkpoint ? String(report.checkpoint.size) : '?';
  lines.push(`  checkpoint: ${report.origin ?? '?'} size ${from} -> ${to}, consistency ${report.consistency}`);
  const e = report.entries;
  lines.push(
    `  entries [${e.from}, ${e.to}): ${e.checked} checked (${e.attestation} attestation, ${e.yank} yank, ${e.key} key${e['approval-decision'] + e['approval-consumption'] ? `, ${e['approval-decision']} approval decision, ${e['approval-consumption']} approval consumption` : ''}${e.malformed ? `, ${e.malformed} malformed` : ''}); ${report.blobs.checked} manifest(s) re-hashed`,
  );
  for (const warning of report.warnings) lines.push(`  warning: ${warning}`);
  if (report.consistency === 'refused') {
    lines.push(
      '  !!! REFUSED: the registry rolled back or forked its log; do not trust it. The state file was NOT advanced.',
    );
  }
  for (const p of report.problems)
    lines.push(`  PROBLEM ${p.code}${p.index === undefined ? '' : ` (entry ${p.index})`}: ${p.message}`);
  if (report.ok) {
    lines.push(
      `audit: ok${report.stateFile ? (report.stateWritten ? ` (state saved to ${report.stateFile})` : ` (state file ${report.stateFile} NOT saved)`) : ' (--no-state: nothing remembered)'}`,
    );
  } else {
    lines.push(
      `audit: FAILED, ${report.problems.length} problem(s)${report.stateFile ? `; state file ${report.stateFile} not advanced` : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

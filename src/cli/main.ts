#!/usr/bin/env node
// The toolseal command line: dispatches to one module per command (loaded on demand); the only place that reads argv.

import { hasOwn } from '../core/json.ts';
import { reportError, UsageError, type ExitCode } from './output.ts';

interface Command {
  usage: string;
  run: (args: string[]) => Promise<ExitCode>;
}

/** Each command's module is imported only when that command runs: `canonicalize` never loads a database or the MCP SDK. */
const commands: Record<string, () => Promise<Command>> = {
  canonicalize: async () =>
    import('./canonicalize.ts').then((m) => ({ usage: m.canonicalizeUsage, run: m.runCanonicalizeCommand })),
  serve: async () => import('./serve.ts').then((m) => ({ usage: m.serveUsage, run: m.runServeCommand })),
  publisher: async () =>
    import('./publisher.ts').then((m) => ({ usage: m.publisherUsage, run: m.runPublisherCommand })),
  operator: async () => import('./principal.ts').then((m) => ({ usage: m.operatorUsage, run: m.runOperatorCommand })),
  host: async () => import('./principal.ts').then((m) => ({ usage: m.hostUsage, run: m.runHostCommand })),
  keys: async () => import('./keys.ts').then((m) => ({ usage: m.keysUsage, run: m.runKeysCommand })),
  publish: async () => import('./publish.ts').then((m) => ({ usage: m.publishUsage, run: m.runPublishCommand })),
  yank: async () => import('./yank.ts').then((m) => ({ usage: m.yankUsage, run: m.runYankCommand })),
  approvals: async () =>
    import('./approvals.ts').then((m) => ({ usage: m.approvalsUsage, run: m.runApprovalsCommand })),
  migrate: async () => import('./migrate.ts').then((m) => ({ usage: m.migrateUsage, run: m.runMigrateCommand })),
  fsck: async () => import('./fsck.ts').then((m) => ({ usage: m.fsckUsage, run: m.runFsckCommand })),
  audit: async () => import('./audit.ts').then((m) => ({ usage: m.auditUsage, run: m.runAuditCommand })),
  pin: async () => import('./pin.ts').then((m) => ({ usage: m.pinUsage, run: m.runPinCommand })),
  verify: async () => import('./verify.ts').then((m) => ({ usage: m.verifyUsage, run: m.runVerifyCommand })),
  get: async () => import('./get.ts').then((m) => ({ usage: m.getUsage, run: m.runGetCommand })),
  guard: async () => import('./guard.ts').then((m) => ({ usage: m.guardUsage, run: m.runGuardCommand })),
  manifest: async () => import('./manifest.ts').then((m) => ({ usage: m.manifestUsage, run: m.runManifestCommand })),
  check: async () => import('./check.ts').then((m) => ({ usage: m.checkUsage, run: m.runCheckCommand })),
  diff: async () => import('./diff.ts').then((m) => ({ usage: m.diffUsage, run: m.runDiffCommand })),
  mirror: async () => import('./mirror.ts').then((m) => ({ usage: m.mirrorUsage, run: m.runMirrorCommand })),
  backup: async () => import('./backup.ts').then((m) => ({ usage: m.backupUsage, run: m.runBackupCommand })),
  'client-config': async () =>
    import('./client-config.ts').then((m) => ({ usage: m.clientConfigUsage, run: m.runClientConfigCommand })),
  'managed-settings': async () =>
    import('./client-config.ts').then((m) => ({ usage: m.managedSettingsUsage, run: m.runManagedSettingsCommand })),
  monitor: async () => import('./monitor.ts').then((m) => ({ usage: m.monitorUsage, run: m.runMonitorCommand })),
  witness: async () => import('./witness.ts').then((m) => ({ usage: m.witnessUsage, run: m.runWitnessCommand })),
};

async function formatHelp(): Promise<string> {
  const usages = await Promise.all(Object.values(commands).map(async (load) => (await load()).usage));
  return ['usage: toolseal <command> [options]', '', ...usages.map((usage) => `${usage}\n`), ''].join('\n');
}

export async function main(argv: string[]): Promise<ExitCode> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(await formatHelp());
    return name === undefined ? 2 : 0;
  }
  const load = hasOwn(commands, name) ? commands[name] : undefined;
  if (!load) {
    process.stderr.write(
      `${JSON.stringify({ code: 'USAGE', message: `unknown command ${JSON.stringify(name)}; try toolseal help` })}\n`,
    );
    return 2;
  }
  try {
    const command = await load();
    const ownArgs = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest; // after `--` belongs to a child command
    if (ownArgs.includes('--help') || ownArgs.includes('-h')) {
      process.stdout.write(`${command.usage}\n`);
      return 0;
    }
    return await command.run(rest);
  } catch (error) {
    if (
      error instanceof TypeError &&
      'code' in error &&
      String((error as { code: unknown }).code).startsWith('ERR_PARSE_ARGS')
    ) {
      return reportError(new UsageError(error.message), name);
    }
    return reportError(error, name);
  }
}

process.exitCode = await main(process.argv.slice(2));

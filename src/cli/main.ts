// The toolseal command line: dispatches to one module per command; the only place that reads argv.

import { reportError, UsageError, type ExitCode } from './output.ts';
import { canonicalizeUsage, runCanonicalizeCommand } from './canonicalize.ts';
import { serveUsage, runServeCommand } from './serve.ts';
import { publisherUsage, runPublisherCommand } from './publisher.ts';
import { keysUsage, runKeysCommand } from './keys.ts';
import { publishUsage, runPublishCommand } from './publish.ts';
import { fsckUsage, runFsckCommand } from './fsck.ts';
import { auditUsage, runAuditCommand } from './audit.ts';
import { pinUsage, runPinCommand } from './pin.ts';
import { verifyUsage, runVerifyCommand } from './verify.ts';
import { getUsage, runGetCommand } from './get.ts';
import { guardUsage, runGuardCommand } from './guard.ts';
import { manifestUsage, runManifestCommand } from './manifest.ts';

type Command = { usage: string; run: (args: string[]) => Promise<ExitCode> };

const commands: Record<string, Command> = {
  canonicalize: { usage: canonicalizeUsage, run: runCanonicalizeCommand },
  serve: { usage: serveUsage, run: runServeCommand },
  publisher: { usage: publisherUsage, run: runPublisherCommand },
  keys: { usage: keysUsage, run: runKeysCommand },
  publish: { usage: publishUsage, run: runPublishCommand },
  fsck: { usage: fsckUsage, run: runFsckCommand },
  audit: { usage: auditUsage, run: runAuditCommand },
  pin: { usage: pinUsage, run: runPinCommand },
  verify: { usage: verifyUsage, run: runVerifyCommand },
  get: { usage: getUsage, run: runGetCommand },
  guard: { usage: guardUsage, run: runGuardCommand },
  manifest: { usage: manifestUsage, run: runManifestCommand },
};

function formatHelp(): string {
  return ['usage: toolseal <command> [options]', '', ...Object.values(commands).map((command) => command.usage), ''].join('\n');
}

export async function main(argv: string[]): Promise<ExitCode> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(formatHelp());
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(JSON.stringify({ code: 'USAGE', message: `unknown command ${JSON.stringify(name)}; try toolseal help` }) + '\n');
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(command.usage + '\n');
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    if (error instanceof TypeError && 'code' in error && String((error as { code: unknown }).code).startsWith('ERR_PARSE_ARGS')) {
      return reportError(new UsageError(`${error.message}\n${command.usage}`));
    }
    return reportError(error);
  }
}

const exitCode = await main(process.argv.slice(2));
process.exitCode = exitCode;

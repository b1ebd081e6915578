// `toolseal manifest capture`: start an MCP server, list its tools (every page) and write a manifest draft;
// `toolseal manifest build` (manifest-build.ts): one self-contained manifest from schemas split across files.

import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { captureManifest } from '../guard/index.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { manifestBuildUsage, runManifestBuildCommand } from './manifest-build.ts';
import { manifestFromServerJsonUsage, runManifestFromServerJsonCommand } from './manifest-from-server-json.ts';
import { userWorkingDirectory } from './config.ts';
import { withUserFile } from './user-files.ts';

export const manifestUsage = `toolseal manifest capture --name NAME --version V [-o FILE] -- COMMAND [ARGS...]
  Starts the MCP server COMMAND over stdio, lists its tools (every page of tools/list) and writes the
  manifest draft {name, version, tools} as 2-space JSON to FILE (or stdout). Every Tool field the server
  sends is kept exactly as sent; capability declarations are left for the vendor to add. The draft is run
  through the publish pipeline first: a refusal (with its JSON pointer) is reported and nothing is written.
  With -o, prints one JSON object {file, name, version, tools, digest, renamedTools} (the digest of the
  draft as captured, before capabilities are added). FILE is relative to the folder the command was run from.

${manifestBuildUsage}

${manifestFromServerJsonUsage}`;

export async function runManifestCommand(args: string[]): Promise<ExitCode> {
  const separator = args.indexOf('--');
  const own = separator < 0 ? args : args.slice(0, separator);
  const [subcommand, ...rest] = own;
  if (subcommand === 'build') return runManifestBuildCommand(args.slice(1));
  if (subcommand === 'from-server-json') return runManifestFromServerJsonCommand(args.slice(1));
  if (subcommand !== 'capture')
    throw new UsageError(
      subcommand === undefined
        ? 'expected a subcommand: capture, build or from-server-json'
        : `unknown subcommand ${JSON.stringify(subcommand)}; expected capture, build or from-server-json`,
    );
  const { values, positionals } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, version: { type: 'string' }, output: { type: 'string', short: 'o' } },
    allowPositionals: true,
  });
  const command = separator < 0 ? positionals : args.slice(separator + 1);
  if (separator >= 0 && positionals.length > 0)
    throw new UsageError(`unexpected arguments before --: ${positionals.join(' ')}`);
  const [program, ...programArgs] = command;
  if (values.name === undefined || values.version === undefined || program === undefined)
    throw new UsageError(manifestUsage);
  const output = values.output;

  const { text, result } = await captureManifest({
    name: values.name,
    version: values.version,
    command: program,
    args: programArgs,
    cwd: userWorkingDirectory(),
  });
  if (output === undefined) {
    await writeStdout(text);
  } else {
    await withUserFile(output, '-o', (path) => writeFile(path, text), 'write');
    await writeStdout(
      `${JSON.stringify({
        file: output,
        name: result.name,
        version: result.version,
        tools: result.manifest.tools.length,
        digest: result.digest,
        renamedTools: result.renamedTools,
      })}\n`,
    );
  }
  return 0;
}

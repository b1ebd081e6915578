// `toolseal manifest capture`: list a live MCP server's tools as a full client sees them and write a manifest draft
// (src/build/capture.ts); `toolseal manifest build` (manifest-build.ts): one self-contained manifest from schemas
// split across files.

import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { captureManifest } from '../build/index.ts';
import type { JsonObject } from '../core/json.ts';
import { captureSourceOptions, captureSourceUsage, readCaptureSource } from './capture-options.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { manifestBuildUsage, runManifestBuildCommand } from './manifest-build.ts';
import { manifestFromServerJsonUsage, runManifestFromServerJsonCommand } from './manifest-from-server-json.ts';
import { readUserFile, withUserFile } from './user-files.ts';

export const manifestUsage = `toolseal manifest capture --name NAME --version V [-o FILE] [--base FILE] [--server-json FILE] -- COMMAND [ARGS...]
toolseal manifest capture --name NAME --version V [-o FILE] [--base FILE] [--server-json FILE] --url URL [--header 'Name: value']...
  Connects to the MCP server (COMMAND started over stdio, or the Streamable HTTP endpoint URL) as a full
  client, lists its tools (every page of tools/list, once the list has settled) and writes the manifest
  draft {name, version, tools} as 2-space JSON to FILE (or stdout). Every Tool field the server sends is
  kept exactly as sent. The draft is run through the publish pipeline first: a refusal (with its JSON
  pointer) is reported and nothing is written.
  --base FILE   the previous version's manifest: its description and each same-named tool's capabilities
                (money included) and approval carry over; tools added since get none (add them). Every tool
                added, removed or changed is reported: {"base": {from, added, removed, changed, carried,
                capabilities}} (on stderr when the draft goes to stdout).
  --server-json FILE  the vendor's server.json (same name and version): its packages, remotes, repository,
                websiteUrl, title and icons become the signed "server" member (checked against the official
                server.json schema: exact versions, pinned OCI digests), as manifest build --server-json does.
${captureSourceUsage}
  With -o, prints one JSON object {file, name, version, tools, digest, renamedTools[, base]}. FILE is relative
  to the folder the command was run from.

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
    options: {
      name: { type: 'string' },
      version: { type: 'string' },
      output: { type: 'string', short: 'o' },
      base: { type: 'string' },
      'server-json': { type: 'string' },
      ...captureSourceOptions,
    },
    allowPositionals: true,
  });
  if (separator >= 0 && positionals.length > 0)
    throw new UsageError(`unexpected arguments before --: ${positionals.join(' ')}`);
  const command = separator < 0 ? positionals : args.slice(separator + 1);
  if (values.name === undefined || values.version === undefined) throw new UsageError(manifestUsage);
  const source = readCaptureSource(values, command);
  const output = values.output;
  const base = values.base === undefined ? undefined : await readUserFile(values.base, '--base');
  const serverJson =
    values['server-json'] === undefined ? undefined : await readUserFile(values['server-json'], '--server-json');

  const captured = await captureManifest({
    name: values.name,
    version: values.version,
    ...source,
    ...(base === undefined ? {} : { base }),
  });
  const changes = captured.base;
  // The signed server from the vendor's server.json (issue 27 §1), checked by the pipeline with the tools.
  const { text, result } =
    serverJson === undefined
      ? captured
      : (await import('../build/from-server-json.ts')).attachServerJson(
          JSON.parse(captured.text) as JsonObject, // the draft as written (our own 2-space JSON)
          serverJson,
        );
  if (output === undefined) {
    await writeStdout(text);
    if (changes !== undefined) process.stderr.write(`${JSON.stringify({ base: changes })}\n`);
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
        ...(changes === undefined ? {} : { base: changes }),
      })}\n`,
    );
  }
  return 0;
}

// `toolseal manifest from-server-json FILE [--tools MANIFEST] [--name N] [--version V] [-o OUT]`: a manifest draft
// from a vendor's MCP Registry server.json (issue 27 §1). Argv and printing only; the drafting is src/build/.

import { parseArgs } from 'node:util';
import { draftManifestFromServerJson, readToolsOfManifest } from '../build/from-server-json.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { readUserFile, writeUserFileAtomic } from './user-files.ts';

export const manifestFromServerJsonUsage = `toolseal manifest from-server-json FILE [--tools MANIFEST] [--name N] [--version V] [-o OUT]
  Drafts a manifest from the MCP Registry server.json FILE: its name, version and description, and its
  title, websiteUrl, repository, icons, packages and remotes as the signed "server" member (checked as
  publish checks it: the official server.json schema, exact versions, https URLs, no hidden characters).
  --tools takes the tools of MANIFEST (e.g. from manifest capture); without it the draft lists no tools
  and is not publishable until they are added. --name and --version override the server.json's (a
  manifest name is lowercase namespace/name). Writes 2-space JSON to OUT (atomically) or stdout; with -o,
  prints {file, name, version, tools, digest, leftOut} (digest only when tools were given; leftOut: the
  server.json members a manifest has no place for, such as $schema and _meta).`;

/** `args` are the words after `manifest from-server-json`. */
export async function runManifestFromServerJsonCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      tools: { type: 'string' },
      name: { type: 'string' },
      version: { type: 'string' },
      output: { type: 'string', short: 'o' },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  if (file === undefined || positionals.length > 1) throw new UsageError(manifestFromServerJsonUsage);
  const bytes = await readUserFile(file);
  const tools =
    values.tools === undefined ? undefined : readToolsOfManifest(await readUserFile(values.tools, '--tools'));
  const draft = draftManifestFromServerJson(bytes, { name: values.name, version: values.version, tools });
  if (values.output === undefined) {
    await writeStdout(draft.text);
    return 0;
  }
  await writeUserFileAtomic(values.output, draft.text, '-o');
  await writeStdout(
    `${JSON.stringify({
      file: values.output,
      name: draft.manifest['name'],
      version: draft.manifest['version'],
      tools: Array.isArray(draft.manifest['tools']) ? draft.manifest['tools'].length : 0,
      ...(draft.result === undefined ? {} : { digest: draft.result.digest }),
      leftOut: draft.leftOut,
    })}\n`,
  );
  return 0;
}

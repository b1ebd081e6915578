// `toolseal canonicalize FILE [--json]`: a dry run of the publish pipeline, printing the exact bytes that would be signed.

import { parseArgs } from 'node:util';
import { runPipeline } from '../pipeline/index.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { readUserFile } from './user-files.ts';

export const canonicalizeUsage = `toolseal canonicalize FILE [--json]
  Runs the publish pipeline over FILE. Prints the canonical bytes (no trailing newline),
  or with --json one object {"digest","size","renamedTools"}. Exit 1 on refusal (FILE_NOT_FOUND when
  FILE does not exist or is a directory). FILE is relative to the folder the command was run from.`;

export async function runCanonicalizeCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({ args, options: { json: { type: 'boolean' } }, allowPositionals: true });
  const file = positionals[0];
  if (file === undefined) throw new UsageError('missing FILE');
  if (positionals.length > 1) throw new UsageError(`expected one FILE, got ${positionals.length} arguments`);
  const bytes = await readUserFile(file);
  const result = runPipeline(bytes);
  if (values.json) {
    await writeStdout(
      `${JSON.stringify({ digest: result.digest, size: result.size, renamedTools: result.renamedTools })}\n`,
    );
  } else {
    await writeStdout(result.canonicalBytes);
  }
  return 0;
}

// `toolseal canonicalize FILE [--json]`: a dry run of the publish pipeline, printing the exact bytes that would be signed.

import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { runPipeline } from '../pipeline/index.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';

export const canonicalizeUsage = `toolseal canonicalize FILE [--json]
  Runs the publish pipeline over FILE. Prints the canonical bytes (no trailing newline),
  or with --json one object {"digest","size","renamedTools"}. Exit 1 on refusal.`;

export async function runCanonicalizeCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({ args, options: { json: { type: 'boolean' } }, allowPositionals: true });
  const file = positionals[0];
  if (file === undefined || positionals.length > 1) throw new UsageError(canonicalizeUsage);
  const bytes = await readFile(file);
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

// How every CLI command reports: results on stdout, refusals as one JSON line on stderr, and exit codes.

import { ToolsealError, type ErrorJson } from '../core/errors.ts';

/**
 * Exit codes: 0 success, 1 refusal or failed check, 2 usage or environment problem. `guard` passes on its
 * MCP server's own exit code, hence `number`.
 */
export type ExitCode = number;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function writeStdout(data: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(data, (error) => (error ? reject(error) : resolve()));
  });
}

/** One line of JSON on stderr: `{"code","message","pointer"?}`. Never a stack, never a server path. */
export function reportError(error: unknown): ExitCode {
  if (error instanceof ToolsealError) {
    process.stderr.write(`${JSON.stringify(error.toJSON())}\n`);
    return 1;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`${JSON.stringify({ code: 'USAGE', message: error.message })}\n`);
    return 2;
  }
  const body: { code: string; message: string } = { code: 'INTERNAL', message: describeUnexpected(error) };
  process.stderr.write(`${JSON.stringify(body)}\n`);
  return 2;
}

function describeUnexpected(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && typeof (error as { code: unknown }).code === 'string') {
    const code = (error as { code: string }).code;
    if (code === 'ENOENT') return 'file not found';
    if (code === 'EACCES') return 'permission denied';
    if (code === 'EISDIR') return 'is a directory, expected a file';
    if (code === 'ECONNREFUSED') return 'connection refused';
  }
  return error instanceof Error ? error.message : String(error);
}

export type { ErrorJson };

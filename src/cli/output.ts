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

/**
 * The refusal for a file system error on a path the user gave (`given`, named as given; `what` is the flag it came
 * with): a missing file, or a folder where a file is expected, is FILE_NOT_FOUND. Undefined for any other error.
 */
export function describeFileError(
  error: unknown,
  given: string,
  what = '',
  access: 'read' | 'write' = 'read',
): ToolsealError | undefined {
  const code = systemErrorCode(error);
  const label = `${what === '' ? '' : `${what} `}${given}`;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    const why = access === 'read' ? 'no such file' : 'its folder does not exist';
    return new ToolsealError('FILE_NOT_FOUND', `${label}: ${why}`, { cause: error });
  }
  if (code === 'EISDIR')
    return new ToolsealError('FILE_NOT_FOUND', `${label}: is a directory, expected a file`, { cause: error });
  return undefined;
}

/** One line of JSON on stderr: `{"code","message","pointer"?}`. Never a stack, never a server path. */
export function reportError(error: unknown, command?: string): ExitCode {
  if (error instanceof ToolsealError) {
    process.stderr.write(`${JSON.stringify(error.toJSON())}\n`);
    return 1;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`${JSON.stringify({ code: 'USAGE', message: formatUsageMessage(error.message, command) })}\n`);
    return 2;
  }
  const missing = describeMissingFile(error);
  if (missing !== undefined) return reportError(missing);
  const body: { code: string; message: string } = { code: 'INTERNAL', message: describeUnexpected(error) };
  process.stderr.write(`${JSON.stringify(body)}\n`);
  return 2;
}

/**
 * A usage refusal on one line: the first line of the message (a bare usage text becomes "usage: <its synopsis>"),
 * then where the details are. The full help is `toolseal <command> --help`, never embedded.
 */
export function formatUsageMessage(message: string, command?: string): string {
  const first = (message.split('\n').find((line) => line.trim() !== '') ?? '').trim();
  const line = first.startsWith('toolseal ') ? `usage: ${first}` : first;
  const help = command === undefined ? 'toolseal help' : `toolseal ${command} --help`;
  return `${line === '' ? 'invalid arguments' : line.replace(/[.;:]\s*$/, '')}; see ${help}`;
}

/** An unexpected missing file or folder-for-a-file (not one a command named itself): FILE_NOT_FOUND, no path. */
function describeMissingFile(error: unknown): ToolsealError | undefined {
  const code = systemErrorCode(error);
  if (code === 'ENOENT' || code === 'ENOTDIR') return new ToolsealError('FILE_NOT_FOUND', 'file not found');
  if (code === 'EISDIR') return new ToolsealError('FILE_NOT_FOUND', 'is a directory, expected a file');
  return undefined;
}

function systemErrorCode(error: unknown): string | undefined {
  if (!error || typeof error !== 'object' || !('code' in error)) return undefined;
  const code = (error as { code: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

function describeUnexpected(error: unknown): string {
  const code = systemErrorCode(error);
  if (code === 'EACCES') return 'permission denied';
  if (code === 'ECONNREFUSED') return 'connection refused';
  return error instanceof Error ? error.message : String(error);
}

export type { ErrorJson };

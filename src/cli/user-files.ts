// Files the user names on the command line (FILE arguments, --jwks, --lock, --state, -o): opened relative to the
// user's folder (config.ts), and a missing file or a folder where a file is expected refused as FILE_NOT_FOUND
// naming the path exactly as the user gave it (never a resolved or server path).

import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../lock/atomic-file.ts';
import { resolveUserPath } from './config.ts';
import { describeFileError } from './output.ts';

/**
 * Run `action` on the path the user gave as `given` (`what`: the flag it came with, '' for a FILE argument),
 * resolved against the user's folder; a missing file or a directory becomes FILE_NOT_FOUND naming `given`.
 */
export async function withUserFile<T>(
  given: string,
  what: string,
  action: (path: string) => Promise<T>,
  access: 'read' | 'write' = 'read',
): Promise<T> {
  try {
    return await action(resolveUserPath(given));
  } catch (error) {
    throw describeFileError(error, given, what, access) ?? error;
  }
}

/** Read a file the user named. */
export function readUserFile(given: string, what = ''): Promise<Buffer> {
  return withUserFile(given, what, (path) => readFile(path));
}

/** Write a file the user named, atomically; a missing folder or a directory in the way is FILE_NOT_FOUND. */
export function writeUserFileAtomic(given: string, data: string | Uint8Array, what = ''): Promise<void> {
  return withUserFile(given, what, (path) => writeFileAtomic(path, data), 'write');
}

// `toolseal manifest`: placeholder until its issue lands (see the issue tracker).

import { UsageError, type ExitCode } from './output.ts';

export const manifestUsage = 'toolseal manifest — not implemented yet';

export async function runManifestCommand(_args: string[]): Promise<ExitCode> {
  throw new UsageError(manifestUsage);
}

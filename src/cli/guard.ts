// `toolseal guard`: placeholder until its issue lands (see the issue tracker).

import { UsageError, type ExitCode } from './output.ts';

export const guardUsage = 'toolseal guard — not implemented yet';

export async function runGuardCommand(_args: string[]): Promise<ExitCode> {
  throw new UsageError(guardUsage);
}

// `toolseal get`: placeholder until its issue lands (see the issue tracker).

import { UsageError, type ExitCode } from './output.ts';

export const getUsage = 'toolseal get — not implemented yet';

export async function runGetCommand(_args: string[]): Promise<ExitCode> {
  throw new UsageError(getUsage);
}

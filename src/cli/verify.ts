// `toolseal verify`: placeholder until its issue lands (see the issue tracker).

import { UsageError, type ExitCode } from './output.ts';

export const verifyUsage = 'toolseal verify — not implemented yet';

export async function runVerifyCommand(_args: string[]): Promise<ExitCode> {
  throw new UsageError(verifyUsage);
}

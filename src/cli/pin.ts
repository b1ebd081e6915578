// `toolseal pin`: placeholder until its issue lands (see the issue tracker).

import { UsageError, type ExitCode } from './output.ts';

export const pinUsage = 'toolseal pin — not implemented yet';

export async function runPinCommand(_args: string[]): Promise<ExitCode> {
  throw new UsageError(pinUsage);
}

// `toolseal audit`: placeholder until its issue lands (see the issue tracker).

import { UsageError, type ExitCode } from './output.ts';

export const auditUsage = 'toolseal audit — not implemented yet';

export async function runAuditCommand(_args: string[]): Promise<ExitCode> {
  throw new UsageError(auditUsage);
}

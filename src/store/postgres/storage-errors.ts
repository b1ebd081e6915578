// PostgreSQL failures the registry answers with codes of its own (SQLSTATE: PostgreSQL docs, appendix A "Error
// Codes"): no room — 53100 disk_full, class 53 insufficient resources, ENOSPC — is STORAGE_FULL; damage — XX001
// data_corrupted, XX002 index_corrupted — is INTEGRITY_ERROR; a lost or refused connection — class 08, 57P01–57P03
// (shutdown), 57014 (a statement past its timeout), 3D000 (no such database), class 28 (authentication), socket
// errors — is STORAGE_UNAVAILABLE (503).
// The transaction that failed is rolled back by then. Messages never carry the URL or its password.

import { ToolsealError } from '../../core/errors.ts';
import { truncateText } from '../../core/text.ts';

const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH']);

/** node-postgres reports a dropped socket without a code, in these words. */
const LOST_CONNECTION = /Connection terminated|Client has encountered a connection error|not queryable/i;

/** `error` as the registry should report it (a ToolsealError with the original as its cause), or `error` itself. */
export function translatePostgresError(error: unknown): unknown {
  if (error instanceof ToolsealError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : '';
  if (code === '53100' || code === 'ENOSPC' || (typeof code === 'string' && code.startsWith('53'))) {
    return new ToolsealError(
      'STORAGE_FULL',
      "the registry's storage is full: nothing was written; free some space on the database server and retry",
      { cause: error },
    );
  }
  if (code === 'XX001' || code === 'XX002') {
    return new ToolsealError('INTEGRITY_ERROR', `the database is corrupt: ${truncateText(message, 200)}`, {
      cause: error,
    });
  }
  if (isUnavailable(code, message)) {
    return new ToolsealError(
      'STORAGE_UNAVAILABLE',
      'the database is unavailable (connection lost or refused): nothing of this request was committed; retry',
      { cause: error },
    );
  }
  return error;
}

function isUnavailable(code: unknown, message: string): boolean {
  if (typeof code !== 'string') return LOST_CONNECTION.test(message);
  return (
    code.startsWith('08') ||
    code.startsWith('28') ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === '3D000' ||
    code === '57014' ||
    SOCKET_ERRORS.has(code)
  );
}

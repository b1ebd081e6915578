// The structured access log (issue 29 §3, `serve --log-format json`): one JSON line (RFC 8259) per answered request
// with the route template, the path (never its query), the status and the duration. No header is read: no token or
// Authorization value can reach a line.

import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../app-env.ts';
import { readRouteTemplate } from './request-telemetry.ts';

/** One access log line's fields, in this order. */
export interface AccessLogRecord {
  time: string;
  method: string;
  route: string;
  path: string;
  status: number;
  durationMs: number;
}

export interface AccessLogOptions {
  /** Receives each line (JSON, newline-terminated). */
  write: (line: string) => void;
  /** Clock (tests); default `new Date()` and performance.now(). */
  now?: () => Date;
  elapsedMs?: () => number;
}

/** Logs every request once it is answered (errors included: they have their problem status by then). */
export function createAccessLog(options: AccessLogOptions): MiddlewareHandler<AppEnv> {
  const now = options.now ?? (() => new Date());
  const elapsedMs = options.elapsedMs ?? (() => performance.now());
  return async (c, next) => {
    const start = elapsedMs();
    try {
      await next();
    } finally {
      const record: AccessLogRecord = {
        time: now().toISOString(),
        method: c.req.method,
        route: readRouteTemplate(c),
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round((elapsedMs() - start) * 1000) / 1000,
      };
      options.write(`${JSON.stringify(record)}\n`);
    }
  };
}

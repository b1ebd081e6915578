// The access-log middleware (serve --log-format json): exact lines with a fixed clock, the route template or
// `unmatched`, the path without its query, a thrown error's problem status; never a header.

import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ToolsealError } from '../../../src/core/errors.ts';
import type { AppEnv } from '../../../src/http/app-env.ts';
import { createAccessLog } from '../../../src/http/middleware/access-log.ts';

describe('createAccessLog', () => {
  it('writes exactly one JSON line per request', async () => {
    const lines: string[] = [];
    let tick = 0;
    const app = new Hono<AppEnv>();
    app.onError((_error, c) => c.json({ code: 'NOT_FOUND' }, 404));
    app.use(
      createAccessLog({
        write: (line) => lines.push(line),
        now: () => new Date('2026-12-01T12:00:00.000Z'),
        elapsedMs: () => (tick += 1.5),
      }),
    );
    app.get('/v1/manifests/:namespace/:name', (c) => c.text('ok'));
    app.get('/v1/boom', () => {
      throw new ToolsealError('NOT_FOUND', 'no such thing');
    });
    await app.request('/v1/manifests/acme/tool?token=query-secret', { headers: { authorization: 'Bearer ts_secret' } });
    await app.request('/v1/boom');
    await app.request('/nowhere', { method: 'POST' });
    expect(lines).toEqual([
      '{"time":"2026-12-01T12:00:00.000Z","method":"GET","route":"/v1/manifests/:namespace/:name","path":"/v1/manifests/acme/tool","status":200,"durationMs":1.5}\n',
      '{"time":"2026-12-01T12:00:00.000Z","method":"GET","route":"/v1/boom","path":"/v1/boom","status":404,"durationMs":1.5}\n',
      '{"time":"2026-12-01T12:00:00.000Z","method":"POST","route":"unmatched","path":"/nowhere","status":404,"durationMs":1.5}\n',
    ]);
  });
});

// The pages read query parameters as the API does: a control character (a NUL that would cut the search) is 400.

import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, createTestEnv } from '../helpers/registry-helpers.ts';

const env = await createTestEnv();
afterAll(async () => {
  await env.close();
  cleanupTempDirs();
});

describe('page query parameters', () => {
  it('a NUL or another control character in q, after or before is a 400 page, not a search', async () => {
    for (const path of ['/?q=%00zzzz', '/?q=a%7Fb', '/?after=%01', '/ui/log?before=%0A']) {
      const response = await env.app.request(path);
      expect(response.status, path).toBe(400);
      expect(response.headers.get('content-type'), path).toMatch(/^text\/html/);
    }
    expect((await env.app.request('/?q=zzzz')).status).toBe(200);
  });
});

// The Authorization scheme is case-insensitive (RFC 9110 §11.1; RFC 6750 §2.1's "Bearer" is matched that way):
// a publish with `bearer` or `BEARER` is authenticated like one with `Bearer`; the token itself is case-sensitive.

import { afterAll, describe, expect, it } from 'vitest';
import { readBearerToken } from '../../src/http/auth.ts';
import {
  cleanupTempDirs,
  createTestEnv,
  expectProblem,
  manifestBytes,
  postManifest,
  postYank,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

describe('Authorization: the scheme in any case', () => {
  it('publishes with `bearer`, `BEARER` and `BeArEr` (201 each), as with `Bearer`', async () => {
    const env = await createTestEnv();
    for (const [i, scheme] of ['bearer', 'BEARER', 'BeArEr', 'Bearer'].entries()) {
      const response = await postManifest(env.app, manifestBytes({ version: `1.0.${i}` }), undefined, {
        Authorization: `${scheme} ${env.token}`,
      });
      expect(response.status, `${scheme}: ${await response.clone().text()}`).toBe(201);
      expect(((await response.json()) as { version: string }).version).toBe(`1.0.${i}`);
    }
    expect((await env.store.getVersion('io.github.acme/widgets', '1.0.0'))?.publisherId).toBe(env.publisher.id);
    await env.close();
  });

  it('yanks with a lowercase scheme too', async () => {
    const env = await createTestEnv();
    expect((await postManifest(env.app, manifestBytes(), env.token)).status).toBe(201);
    const response = await env.app.request('/v1/manifests/io.github.acme/widgets/1.0.0/yank', {
      method: 'POST',
      body: JSON.stringify({ reason: 'bad build' }),
      headers: { 'Content-Type': 'application/json', Authorization: `bearer ${env.token}` },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    await expectProblem(
      await postYank(env.app, '/v1/manifests/io.github.acme/widgets/1.0.0', { reason: 'x' }, 'tsk_wrong'),
      'UNAUTHENTICATED',
    );
    await env.close();
  });

  it('the token keeps its case: a lowercased token is 401; a scheme with no space before the token is 401', async () => {
    const env = await createTestEnv();
    const lowered = env.token.toLowerCase();
    expect(lowered).not.toBe(env.token);
    await expectProblem(
      await postManifest(env.app, manifestBytes(), undefined, { Authorization: `bearer ${lowered}` }),
      'UNAUTHENTICATED',
    );
    await expectProblem(
      await postManifest(env.app, manifestBytes(), undefined, { Authorization: `BEARER${env.token}` }),
      'UNAUTHENTICATED',
    );
    await env.close();
  });

  it('readBearerToken: the scheme in any case, one or more spaces, the token as sent', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR'])
      expect(readBearerToken(`${scheme} tsk_AbC-1.2~3+4/5==`)).toBe('tsk_AbC-1.2~3+4/5==');
    expect(readBearerToken('bearer   tsk_x')).toBe('tsk_x');
    expect(readBearerToken('Basic tsk_x')).toBeUndefined();
    expect(readBearerToken('bearertsk_x')).toBeUndefined();
    expect(readBearerToken(undefined)).toBeUndefined();
  });
});

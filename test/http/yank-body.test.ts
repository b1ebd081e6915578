// POST …/yank body rules: an empty body asks for a reason, the body is the closed type {"reason": string}, the
// reason holds no control, bidi, tag or zero-width characters, and a second yank says it was already yanked.

import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupTempDirs,
  createTestEnv,
  expectProblem,
  manifestBytes,
  postManifest,
  postYank,
  snapshotDb,
  type TestEnv,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

const PATH = '/v1/manifests/io.github.acme/widgets/1.0.0';

async function setup(): Promise<TestEnv> {
  const env = await createTestEnv();
  expect((await postManifest(env.app, manifestBytes(), env.token)).status).toBe(201);
  return env;
}

describe('yank body', () => {
  it('an empty body is BAD_REQUEST "a reason is required", not INVALID_JSON', async () => {
    const env = await setup();
    const before = snapshotDb(env.store);
    for (const body of ['', ' \n']) {
      const problem = await expectProblem(await postYank(env.app, PATH, body, env.token), 'BAD_REQUEST');
      expect(problem.detail).toBe('a reason is required');
    }
    const missing = await expectProblem(await postYank(env.app, PATH, {}, env.token), 'BAD_REQUEST', '/reason');
    expect(missing.detail).toBe('a reason is required');
    expect(snapshotDb(env.store)).toEqual(before);
    await env.close();
  });

  it('the body is closed: any other member is UNKNOWN_FIELD with its pointer', async () => {
    const env = await setup();
    const before = snapshotDb(env.store);
    await expectProblem(
      await postYank(env.app, PATH, { reason: 'x', force: true }, env.token),
      'UNKNOWN_FIELD',
      '/force',
    );
    await expectProblem(await postYank(env.app, PATH, { reasn: 'typo' }, env.token), 'UNKNOWN_FIELD', '/reasn');
    await expectProblem(
      await postYank(env.app, PATH, { reason: 'x', 'a/b~c': 1 }, env.token),
      'UNKNOWN_FIELD',
      '/a~1b~0c',
    );
    expect(snapshotDb(env.store)).toEqual(before);
    await env.close();
  });

  it('a reason with control, bidi, tag or zero-width characters is BAD_REQUEST at /reason', async () => {
    const env = await setup();
    const before = snapshotDb(env.store);
    const hidden = [
      '\u0000',
      '\t',
      '\n',
      '\r',
      '\u001b[31m',
      '\u007f',
      '\u0085',
      '\u009f',
      '\u061c',
      '\u200e',
      '\u200f',
      '\u202a',
      '\u202e',
      '\u2066',
      '\u2069',
      '\u200b',
      '\u200c',
      '\u200d',
      '\u2060',
      '\ufeff',
      '\u{e0001}',
      '\u{e0041}',
      '\u{e007f}',
    ];
    for (const character of hidden) {
      const reason = `broken ${character}release`;
      const problem = await expectProblem(
        await postYank(env.app, PATH, { reason }, env.token),
        'BAD_REQUEST',
        '/reason',
      );
      expect(problem.detail, JSON.stringify(character)).toMatch(/U\+[0-9A-F]{4,6}/);
    }
    expect(snapshotDb(env.store)).toEqual(before);
    // Ordinary text, including non-ASCII letters, emoji and the right-to-left script itself, is fine.
    const ok = await postYank(env.app, PATH, { reason: 'régression — שגיאה in 1.0.0 🙈' }, env.token);
    expect(ok.status).toBe(200);
    await env.close();
  });

  it('yanking again answers 200 with the first reason kept and says so (alreadyYanked, the reason asked for now)', async () => {
    const env = await setup();
    const first = await postYank(env.app, PATH, { reason: 'first' }, env.token);
    expect(first.status).toBe(200);
    const firstBody = (await first.json()) as Record<string, unknown>;
    expect(firstBody).toMatchObject({ status: 'yanked', yankReason: 'first', alreadyYanked: false });
    expect(firstBody).not.toHaveProperty('requestedReason');
    const before = snapshotDb(env.store);
    const again = await postYank(env.app, PATH, { reason: 'second' }, env.token);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ ...firstBody, alreadyYanked: true, requestedReason: 'second' });
    expect(snapshotDb(env.store)).toEqual(before);
    await env.close();
  });
});

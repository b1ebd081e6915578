// Query parameters through app.request() (RFC 3986 §3.4): a control character (C0, DEL, C1) in any parameter a route
// reads is 400 BAD_REQUEST (a NUL would otherwise cut the search pattern), and `limit` is decimal digits only.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanupTempDirs,
  createTestEnv,
  expectProblem,
  manifestBytes,
  postManifest,
  type TestEnv,
} from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

type Listing = { items: { name: string }[]; nextCursor: string | null };

/** One control character of each kind, percent-encoded as a client would send it (U+0080 and U+009F as UTF-8). */
const CONTROLS = ['%00', '%01', '%09', '%0A', '%0D', '%1F', '%7F', '%C2%80', '%C2%9F'];

describe('query parameters', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await createTestEnv();
    for (const name of ['alpha', 'bravo', 'charlie']) {
      const response = await postManifest(env.app, manifestBytes({ name: `io.github.acme/${name}` }), env.token);
      expect(response.status).toBe(201);
    }
  });
  afterAll(async () => await env.close());

  it('q=%00zzzz is 400 BAD_REQUEST, not every manifest (q=zzzz lists none)', async () => {
    const none = (await (await env.app.request('/v1/manifests?q=zzzz')).json()) as Listing;
    expect(none.items).toEqual([]);
    const problem = await expectProblem(await env.app.request('/v1/manifests?q=%00zzzz'), 'BAD_REQUEST');
    expect(problem.detail).toContain('q');
  });

  it('a C0, DEL or C1 character anywhere in q, limit or cursor is 400 BAD_REQUEST', async () => {
    const first = (await (await env.app.request('/v1/manifests?limit=1')).json()) as Listing;
    expect(first.nextCursor).not.toBeNull();
    for (const control of CONTROLS) {
      for (const query of [
        `q=${control}`,
        `q=al${control}`,
        `q=alpha${control}`,
        `limit=1${control}`,
        `limit=${control}1`,
        `cursor=${first.nextCursor}${control}`,
      ]) {
        await expectProblem(await env.app.request(`/v1/manifests?${query}`), 'BAD_REQUEST');
      }
    }
  });

  it('a control character in the log proof parameters is 400 BAD_REQUEST', async () => {
    for (const control of CONTROLS) {
      for (const query of [`index=0${control}&size=1`, `index=0&size=${control}1`]) {
        await expectProblem(await env.app.request(`/v1/log/proof/inclusion?${query}`), 'BAD_REQUEST');
      }
      await expectProblem(await env.app.request(`/v1/log/proof/consistency?from=1${control}&to=2`), 'BAD_REQUEST');
    }
  });

  it('printable and non-ASCII text in q is still searched as it is', async () => {
    const alpha = (await (await env.app.request('/v1/manifests?q=alph')).json()) as Listing;
    expect(alpha.items.map((item) => item.name)).toEqual(['io.github.acme/alpha']);
    // Not refused (what they match is the search's business): a space, é, NBSP, ZWSP, punctuation.
    for (const q of ['%20', 'caf%C3%A9', '%C2%A0', '%E2%80%8B', '~!*()']) {
      const response = await env.app.request(`/v1/manifests?q=${q}`);
      expect(response.status, q).toBe(200);
      expect(Array.isArray(((await response.json()) as Listing).items), q).toBe(true);
    }
  });

  it('limit is decimal digits only: 1e2, 0x10, " 5", "5 ", "+5", "5.0", "0b1", "٥" are 400 BAD_REQUEST', async () => {
    for (const limit of ['1e2', '0x10', '%205', '5%20', '%2B5', '5.0', '0b1', '0o7', 'Infinity', '%D9%A5', '1_0']) {
      await expectProblem(await env.app.request(`/v1/manifests?limit=${limit}`), 'BAD_REQUEST');
    }
  });

  it('limit from 1 to 200 in decimal digits is accepted', async () => {
    for (const [limit, count] of [
      ['1', 1],
      ['2', 2],
      ['200', 3],
      ['050', 3],
    ] as const) {
      const response = await env.app.request(`/v1/manifests?limit=${limit}`);
      expect(response.status, limit).toBe(200);
      expect(((await response.json()) as Listing).items, limit).toHaveLength(count);
    }
    for (const limit of ['0', '201', '1000', '99999999999999999999']) {
      await expectProblem(await env.app.request(`/v1/manifests?limit=${limit}`), 'BAD_REQUEST');
    }
  });
});

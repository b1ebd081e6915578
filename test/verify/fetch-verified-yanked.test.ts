// fetchVerified and a version the registry reports yanked: the status and reason on the result, and the `yanked`
// option ('allow' by default: only reported; 'refuse': VERSION_YANKED once everything else verified).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchVerified } from '../../src/verify/index.ts';
import type { PublishOutcome } from '../../src/registry/index.ts';
import {
  jsonBody,
  manifestFile,
  manifestVariant,
  rejectsWithCode,
  startFakeRegistry,
  startRegistry,
  withJson,
  type FakeRegistry,
  type TestRegistry,
} from './helpers.ts';

const YANKED = 'io.github.acme/payments@1.2.0';
const ACTIVE = 'io.github.acme/payments@1.3.0';
const REASON = 'leaks a token in a description';

let real: TestRegistry;
let fake: FakeRegistry;
let yanked: PublishOutcome;

beforeAll(async () => {
  real = await startRegistry();
  yanked = await real.publish(manifestFile('payments'));
  await real.publish(manifestVariant('payments', { version: '1.3.0' }));
  await real.yank('io.github.acme/payments', '1.2.0', REASON);
  fake = await startFakeRegistry(real.url);
});

afterAll(async () => {
  await fake?.close();
  await real?.close();
});

describe('fetchVerified and yanked versions', () => {
  it('reports the status and the reason by default, and still returns the verified bytes', async () => {
    const result = await fetchVerified(real.url, YANKED);
    expect(result).toMatchObject({ status: 'yanked', yankReason: REASON, digest: yanked.record.digest });
    const byDigest = await fetchVerified(real.url, yanked.record.digest);
    expect(byDigest).toMatchObject({ status: 'yanked', yankReason: REASON });
    expect(await fetchVerified(real.url, YANKED, { yanked: 'allow' })).toMatchObject({ status: 'yanked' });
  });

  it("an active version has status 'active' and no reason", async () => {
    const result = await fetchVerified(real.url, ACTIVE, { yanked: 'refuse' });
    expect(result.status).toBe('active');
    expect(result.yankReason).toBeUndefined();
  });

  it("yanked: 'refuse' is VERSION_YANKED naming the version and the reason, by version and by digest", async () => {
    const refused = await rejectsWithCode(fetchVerified(real.url, YANKED, { yanked: 'refuse' }), 'VERSION_YANKED');
    expect(refused.message).toContain(YANKED);
    expect(refused.message).toContain(REASON);
    await rejectsWithCode(fetchVerified(real.url, yanked.record.digest, { yanked: 'refuse' }), 'VERSION_YANKED');
  });

  it('a lock pin still applies first: other bytes are PIN_MISMATCH, not VERSION_YANKED', async () => {
    const other = (await fetchVerified(real.url, ACTIVE)).digest;
    await rejectsWithCode(
      fetchVerified(real.url, YANKED, { yanked: 'refuse', lock: { digest: other } }),
      'PIN_MISMATCH',
    );
  });

  it('the status is the registry binding: a registry that hides the yank is not caught (reported, not proven)', async () => {
    fake.rewrite = (path, response) => {
      if (!path.startsWith('/v1/attestations/')) return response;
      const body = jsonBody(response) as { bindings: Record<string, unknown>[] };
      return withJson(response, { ...body, bindings: body.bindings.map((b) => ({ ...b, status: 'active' })) });
    };
    try {
      const result = await fetchVerified(fake.url, YANKED, { yanked: 'refuse' });
      expect(result.status).toBe('active');
      expect(result.yankReason).toBeUndefined();
    } finally {
      fake.rewrite = undefined;
    }
  });
});

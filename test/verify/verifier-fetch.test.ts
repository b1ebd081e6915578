// createVerifier().fetchVerified against a real registry: one checkpoint shared, a newer one admitted with the
// consistency proof the registry serves, and refused when that proof is tampered with.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVerifier, fetchVerified } from '../../src/verify/index.ts';
import {
  manifestFile,
  manifestVariant,
  rejectsWithCode,
  startFakeRegistry,
  startRegistry,
  withJson,
  jsonBody,
  type FakeRegistry,
  type TestRegistry,
} from './helpers.ts';

let real: TestRegistry;
let fake: FakeRegistry;

beforeAll(async () => {
  real = await startRegistry();
  fake = await startFakeRegistry(real.url);
  await real.publish(manifestFile('payments'));
  await real.publish(manifestVariant('payments', { version: '1.3.0' }));
});

afterAll(async () => {
  await fake.close();
  await real.close();
});

describe('createVerifier().fetchVerified', () => {
  it('verifies like fetchVerified, then relates a newer checkpoint through a fetched consistency proof', async () => {
    const verifier = createVerifier();
    const first = await verifier.fetchVerified(real.url, 'io.github.acme/payments@1.2.0');
    expect(first).toEqual(await fetchVerified(real.url, 'io.github.acme/payments@1.2.0'));
    await verifier.fetchVerified(real.url, 'io.github.acme/payments@1.3.0');
    await real.publish(manifestVariant('payments', { version: '1.4.0' }));
    fake.requests.length = 0;
    const newer = await verifier.fetchVerified(fake.url, 'io.github.acme/payments@1.4.0');
    expect(newer.checkpoint.size).toBeGreaterThan(first.checkpoint.size);
    expect(fake.requests.some((path) => path.startsWith('/v1/log/proof/consistency?'))).toBe(true);
    expect(verifier.latestCheckpoint(real.registry.log.verifierString)?.size).toBe(newer.checkpoint.size);
  });

  it('refuses a newer checkpoint whose consistency proof is tampered with (NOT_IN_LOG)', async () => {
    const verifier = createVerifier();
    await verifier.fetchVerified(fake.url, 'io.github.acme/payments@1.2.0');
    await real.publish(manifestVariant('payments', { version: '1.5.0' }));
    fake.rewrite = (path, response) => {
      if (!path.startsWith('/v1/log/proof/consistency?')) return response;
      const body = jsonBody(response);
      const hashes = (body['hashes'] as string[]).map(() => Buffer.alloc(32, 9).toString('base64'));
      return withJson(response, { ...body, hashes });
    };
    try {
      const error = await rejectsWithCode(
        verifier.fetchVerified(fake.url, 'io.github.acme/payments@1.5.0'),
        'NOT_IN_LOG',
      );
      expect(error.message).toContain('consistency proof');
    } finally {
      fake.rewrite = undefined;
    }
    expect((await verifier.fetchVerified(fake.url, 'io.github.acme/payments@1.5.0')).version).toBe('1.5.0');
  });
});

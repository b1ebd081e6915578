// How the auditor words errors in its problems (src/audit/report.ts), through the real registry client.

import { describe, expect, it } from 'vitest';
import { describeFetchFailure } from '../../src/audit/report.ts';
import { RegistryClient } from '../../src/client/registry-client.ts';

async function failedGet(fetchStub: typeof fetch): Promise<unknown> {
  return new RegistryClient('http://registry.test', { fetch: fetchStub }).getBytes('/v1/log/checkpoint').then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('describeFetchFailure', () => {
  it("adds the transport's errno code, else its innermost message, to the client's message", async () => {
    const refused = await failedGet(async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    });
    expect(describeFetchFailure(refused)).toBe(
      'could not fetch /v1/log/checkpoint from http://registry.test (ECONNREFUSED)',
    );
    const badPort = await failedGet(async () => {
      throw new TypeError('fetch failed', { cause: new Error('bad port') });
    });
    expect(describeFetchFailure(badPort)).toBe(
      'could not fetch /v1/log/checkpoint from http://registry.test (bad port)',
    );
  });

  it('keeps an HTTP refusal as the client words it, and any other value as its text', async () => {
    const refusal = await failedGet(async () => Response.json({ code: 'INTERNAL', detail: 'boom' }, { status: 500 }));
    expect(describeFetchFailure(refusal)).toBe('/v1/log/checkpoint: HTTP 500 INTERNAL: boom');
    expect(describeFetchFailure('plain')).toBe('plain');
  });
});

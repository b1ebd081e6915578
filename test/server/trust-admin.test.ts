// `publisher add --prove-http` and `--unverified-namespace` on a data folder (issue 28 §4; src/server/trust-admin.ts):
// the MCP Registry HTTP domain proof is checked before anything is stored, and the namespace's verification is
// recorded; an io.github namespace needs --unverified-namespace. The record file is served by an injected fetch.

import { generateKeyPairSync, sign } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isToolsealError } from '../../src/core/errors.ts';
import { listPublishers, migrateRegistry } from '../../src/server/admin.ts';
import { addVerifiedPublisher } from '../../src/server/trust-admin.ts';
import { openTrustRuleStore } from '../../src/store/trust-rule-store-of.ts';
import { openStore } from '../../src/store/sqlite/index.ts';
import { cleanupTempDirs, makeTempDir } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const keyBase64 = Buffer.from(publicKey.export({ format: 'der', type: 'spki' }))
  .subarray(12)
  .toString('base64');
const NOW = new Date('2026-12-06T05:00:30.000Z');
const TIMESTAMP = '2026-12-06T05:00:00Z';

function signTimestamp(timestamp: string): string {
  return sign(null, Buffer.from(timestamp, 'utf8'), privateKey).toString('hex');
}

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (error: unknown) => (isToolsealError(error) ? `${error.code} ${error.message.split(':')[0]}` : String(error)),
  );
}

describe('publisher add with a domain proof', () => {
  it('stores the publisher and the proven domain only when the record key signed a current timestamp', async () => {
    const dataDir = join(makeTempDir(), 'data');
    await migrateRegistry(dataDir);
    const fetched: string[] = [];
    const fetch = async (url: string) => {
      fetched.push(url);
      return new Response(`v=MCPv1; k=ed25519; p=${keyBase64}\n`, { status: 200 });
    };
    const proof = { domain: 'example.com', timestamp: TIMESTAMP, signatureHex: signTimestamp(TIMESTAMP) };

    const stale = { ...proof, timestamp: '2026-12-06T04:58:00Z', signatureHex: signTimestamp('2026-12-06T04:58:00Z') };
    expect(
      await codeOf(addVerifiedPublisher(dataDir, 'com.example', { domainProof: stale, fetch, now: () => NOW })),
    ).toBe('FORBIDDEN domain-proof');
    const forged = { ...proof, signatureHex: signTimestamp('2026-12-06T05:00:01Z') };
    expect(
      await codeOf(addVerifiedPublisher(dataDir, 'com.example', { domainProof: forged, fetch, now: () => NOW })),
    ).toBe('FORBIDDEN domain-proof');
    expect(
      await codeOf(addVerifiedPublisher(dataDir, 'org.other', { domainProof: proof, fetch, now: () => NOW })),
    ).toBe('FORBIDDEN domain-proof');
    expect(await listPublishers(dataDir)).toEqual([]);

    const added = await addVerifiedPublisher(dataDir, 'com.example.tools', {
      domainProof: proof,
      fetch,
      now: () => NOW,
    });
    expect(added).toEqual({
      namespace: 'com.example.tools',
      token: expect.stringMatching(/^tsk_/),
      domain: 'example.com',
    });
    expect(fetched.at(-1)).toBe('https://example.com/.well-known/mcp-registry-auth');

    expect(await codeOf(addVerifiedPublisher(dataDir, 'io.github.acme', {}))).toBe('FORBIDDEN namespace-owner');
    await addVerifiedPublisher(dataDir, 'io.github.acme', { unverifiedNamespace: true });
    expect((await listPublishers(dataDir)).map((publisher) => publisher.namespace)).toEqual([
      'com.example.tools',
      'io.github.acme',
    ]);

    const store = openStore({ dataDir });
    try {
      const rules = openTrustRuleStore(store);
      expect(await rules.findNamespaceVerification('com.example.tools')).toEqual({
        namespace: 'com.example.tools',
        unverified: false,
        domain: 'example.com',
        provenAt: NOW.toISOString(),
      });
      expect(await rules.findNamespaceVerification('io.github.acme')).toEqual({
        namespace: 'io.github.acme',
        unverified: true,
        domain: null,
        provenAt: null,
      });
    } finally {
      await store.close();
    }
  });
});

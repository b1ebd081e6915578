// One signed publish statement (in-toto Statement v1, a JCS flattened JWS as signStatement writes it) and the JWKS
// that verifies it: the fixture of the attestation-verification tests (test/attest, test/verify).

import { buildJwks, buildPublishStatement, createSigningKey, signStatement } from '../../src/attest/index.ts';

export const key = createSigningKey();
export const now = Math.floor(Date.now() / 1000);
export const digest = `sha256:${'ab'.repeat(32)}` as const;
export const statement = buildPublishStatement({
  name: 'io.github.acme/payments',
  version: '1.2.0',
  digest,
  predicate: {
    registry: 'http://registry.test',
    publisher: 'io.github.acme',
    storedAt: new Date(now * 1000).toISOString(),
    policy: 'p',
    size: 1,
    previousDigest: null,
  },
});
/** The attestation as text. */
export const genuine = Buffer.from(signStatement(statement, key)).toString('utf8');
export const jws = JSON.parse(genuine) as { protected: string; payload: string; signature: string };
export const jwks = buildJwks([{ kid: key.kid, publicJwk: key.publicJwk, notBefore: now - 60, notAfter: null }]);

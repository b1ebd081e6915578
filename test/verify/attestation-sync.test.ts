// verifyAttestationSync (node:crypto, used by the host) agrees with verifyAttestation (jose): same codes, never more lenient.

import { describe, expect, it } from 'vitest';
import {
  buildJwks,
  verifyAttestation,
  verifyAttestationSync,
  type AttestationExpectation,
  type Jwks,
  createSigningKey,
} from '../../src/attest/index.ts';
import { ToolsealError } from '../../src/core/errors.ts';
import { digest, genuine, jws, jwks, key, now, statement } from '../attest/publish-statement-fixture.ts';

const otherKey = createSigningKey();
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const header = JSON.parse(Buffer.from(jws.protected, 'base64url').toString('utf8')) as Record<string, unknown>;
const flip = (text: string, at: number): string =>
  text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);

type Case = [label: string, attestation: string, keys?: Jwks, expected?: AttestationExpectation];
const cases: Case[] = [
  ['genuine', genuine],
  [
    'genuine, expected subject and digest',
    genuine,
    jwks,
    { name: 'io.github.acme/payments', version: '1.2.0', digest },
  ],
  ['flipped signature byte', JSON.stringify({ ...jws, signature: flip(jws.signature, 10) })],
  ['truncated signature', JSON.stringify({ ...jws, signature: jws.signature.slice(0, 40) })],
  ['empty signature', JSON.stringify({ ...jws, signature: '' })],
  ['non-base64url payload', JSON.stringify({ ...jws, payload: `${jws.payload.slice(0, 8)}+${jws.payload.slice(9)}` })],
  [
    'changed statement',
    JSON.stringify({ ...jws, payload: b64({ ...statement, predicate: { ...statement.predicate, publisher: 'x' } }) }),
  ],
  ['alg ES256', JSON.stringify({ ...jws, protected: b64({ ...header, alg: 'ES256' }) })],
  ['crit in protected header', JSON.stringify({ ...jws, protected: b64({ ...header, crit: ['b64'], b64: true }) })],
  [
    'unknown kid',
    genuine,
    buildJwks([{ kid: otherKey.kid, publicJwk: otherKey.publicJwk, notBefore: now - 60, notAfter: null }]),
  ],
  ['the right kid with another key', genuine, { keys: [{ ...otherKey.publicJwk, kid: key.kid, nbf: now - 60 }] }],
  ['unprotected header repeating kid', JSON.stringify({ ...jws, header: { kid: key.kid } })],
  ['unprotected header, disjoint', JSON.stringify({ ...jws, header: { note: 1 } })],
  ['unprotected crit', JSON.stringify({ ...jws, header: { crit: ['x'] } })],
  ['unprotected header not an object', JSON.stringify({ ...jws, header: 'x' })],
  [
    'key not yet valid',
    genuine,
    buildJwks([{ kid: key.kid, publicJwk: key.publicJwk, notBefore: now + 60, notAfter: null }]),
  ],
  [
    'key retired before',
    genuine,
    buildJwks([{ kid: key.kid, publicJwk: key.publicJwk, notBefore: now - 60, notAfter: now }]),
  ],
  ['other subject', genuine, jwks, { name: 'io.github.acme/payments', version: '1.3.0' }],
  ['other digest', genuine, jwks, { digest: `sha256:${'cd'.repeat(32)}` }],
  ['not JSON', '{"protected":'],
  ['not a JWS', '{"payload":"x"}'],
];

async function outcome(run: () => unknown): Promise<string> {
  try {
    await run();
    return 'ok';
  } catch (error) {
    if (error instanceof ToolsealError) return error.code;
    throw error;
  }
}

describe('verifyAttestationSync vs verifyAttestation (jose)', () => {
  it.each(cases)('%s: the same outcome', async (_label, attestation, keys = jwks, expected = {}) => {
    const viaJose = await outcome(() => verifyAttestation(attestation, keys, expected));
    const viaNode = await outcome(() => verifyAttestationSync(attestation, keys, expected));
    expect(viaNode).toBe(viaJose);
  });

  it('returns the same verified statement', async () => {
    const viaJose = await verifyAttestation(genuine, jwks);
    const viaNode = verifyAttestationSync(genuine, jwks);
    expect(viaNode).toEqual(viaJose);
  });

  it('is stricter only on encodings signStatement never writes (padding): refused, where jose accepts', async () => {
    const padded = JSON.stringify({ ...jws, signature: `${jws.signature}==` });
    expect(await outcome(() => verifyAttestationSync(padded, jwks))).toBe('SIGNATURE_INVALID');
  });
});

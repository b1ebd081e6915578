// generateEd25519KeyPair (src/core/ed25519-keys.ts): a usable RFC 8032 key pair, exportable as a JWK (RFC 8037), whose
// halves belong together, fresh on every call.

import { createPublicKey, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

describe('generateEd25519KeyPair', () => {
  it('returns an Ed25519 pair that signs and verifies, exports as a JWK, and differs on every call', () => {
    const a = generateEd25519KeyPair();
    const b = generateEd25519KeyPair();
    expect(a.privateKey.asymmetricKeyType).toBe('ed25519');
    expect(a.publicKey.type).toBe('public');
    const message = Buffer.from('toolseal');
    const signature = sign(null, message, a.privateKey);
    expect(verify(null, message, a.publicKey, signature)).toBe(true);
    expect(verify(null, message, b.publicKey, signature)).toBe(false);
    const jwk = a.privateKey.export({ format: 'jwk' });
    expect(jwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    expect(jwk.x).toBe(a.publicKey.export({ format: 'jwk' }).x);
    expect(createPublicKey(a.privateKey).export({ format: 'jwk' }).x).toBe(jwk.x);
    expect(jwk.x).not.toBe(b.publicKey.export({ format: 'jwk' }).x);
  });
});

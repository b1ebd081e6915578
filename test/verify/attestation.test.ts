// The attestation stage and the JWKS filter it relies on (selectUsableKeys): only usable keys can verify.

import { describe, expect, it } from 'vitest';
import { selectUsableKeys, type JwksKey } from '../../src/attest/index.ts';
import { verifyAttestationWithKeys } from '../../src/verify/attestation.ts';
import { throwsWithCode } from './helpers.ts';
import { NAME, VERSION, attestation, createSigningKey, digest, jwks, now, signingKey } from './stage-fixtures.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

const genuineKey = jwks.keys[0]!;

describe('selectUsableKeys', () => {
  it('keeps a well-formed Ed25519 public key named by its thumbprint, unchanged', () => {
    const { jwks: usable, problems } = selectUsableKeys(jwks);
    expect(usable.keys).toEqual([genuineKey]);
    expect(problems).toEqual([]);
    expect(selectUsableKeys(jwks.keys).jwks.keys).toEqual([genuineKey]);
  });

  it('skips a key whose kid is not its RFC 7638 thumbprint', () => {
    const forged: JwksKey = { ...createSigningKey().publicJwk, kid: signingKey.kid, nbf: now - 60 };
    const { jwks: usable, problems } = selectUsableKeys({ keys: [forged, genuineKey] });
    expect(usable.keys).toEqual([genuineKey]);
    expect(problems).toEqual([expect.stringMatching(/^JWKS key 0 .*thumbprint/)]);
  });

  it('skips a key that holds private key material (d)', () => {
    const { privateKey } = generateEd25519KeyPair();
    const d = String(privateKey.export({ format: 'jwk' }).d);
    const { jwks: usable, problems } = selectUsableKeys([{ ...genuineKey, d } as JwksKey]);
    expect(usable.keys).toEqual([]);
    expect(problems).toEqual(['JWKS key 0 holds private key material']);
  });

  it('skips what is not an Ed25519 signing key, and anything that is not a JWKS has no keys', () => {
    const keys = [
      null,
      [genuineKey],
      { ...genuineKey, crv: 'X25519' },
      { ...genuineKey, x: `${genuineKey.x.slice(0, 42)}=` },
      { ...genuineKey, use: 'enc' },
      { ...genuineKey, alg: 'ES256' },
    ];
    const { jwks: usable, problems } = selectUsableKeys(keys);
    expect(usable.keys).toEqual([]);
    expect(problems).toHaveLength(keys.length);
    for (const source of [undefined, null, 'keys', { keys: 'x' }, 42])
      expect(selectUsableKeys(source).jwks.keys).toEqual([]);
  });

  it('keeps a key without a numeric nbf as never valid (nbf = +Infinity); a non-numeric exp as -Infinity', () => {
    const { nbf: _nbf, ...noNbf } = genuineKey;
    const { jwks: usable, problems } = selectUsableKeys([noNbf, { ...genuineKey, nbf: '0', exp: 'never' }]);
    expect(usable.keys.map((key) => key.nbf)).toEqual([Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]);
    expect(usable.keys[1]!.exp).toBe(Number.NEGATIVE_INFINITY);
    expect(problems).toEqual([
      'JWKS key 0 has no numeric nbf: it is never valid',
      'JWKS key 1 has no numeric nbf: it is never valid',
    ]);
  });
});

describe('verifyAttestationWithKeys', () => {
  const subject = { name: NAME, version: VERSION, digest };

  it('verifies the genuine attestation and returns its kid and subject', () => {
    const verified = verifyAttestationWithKeys(attestation, jwks, subject);
    expect(verified.kid).toBe(signingKey.kid);
    expect(verified.subjectName).toBe(`${NAME}@${VERSION}`);
    expect(verifyAttestationWithKeys(attestation, jwks.keys, { digest }).kid).toBe(signingKey.kid);
  });

  it('a key whose kid is not its thumbprint is not used: UNKNOWN_KEY, even with the right public key', () => {
    const other = createSigningKey();
    throwsWithCode(
      () => verifyAttestationWithKeys(attestation, [{ ...other.publicJwk, kid: signingKey.kid, nbf: 0 }], subject),
      'UNKNOWN_KEY',
    );
    const wrongKid: JwksKey = { ...genuineKey, kid: other.kid };
    throwsWithCode(() => verifyAttestationWithKeys(attestation, [wrongKid], subject), 'UNKNOWN_KEY');
  });

  it('a key holding d is not used (UNKNOWN_KEY)', () => {
    const withD = { ...genuineKey, d: 'A'.repeat(43) } as JwksKey;
    throwsWithCode(() => verifyAttestationWithKeys(attestation, [withD], subject), 'UNKNOWN_KEY');
  });

  it('a key without nbf is KEY_NOT_VALID; one valid only after storedAt too', () => {
    const { nbf: _nbf, ...noNbf } = genuineKey;
    throwsWithCode(() => verifyAttestationWithKeys(attestation, [noNbf as JwksKey], subject), 'KEY_NOT_VALID');
    throwsWithCode(
      () => verifyAttestationWithKeys(attestation, [{ ...genuineKey, nbf: now + 60 }], subject),
      'KEY_NOT_VALID',
    );
  });

  it('a corrupted attestation is SIGNATURE_INVALID; another subject or digest is refused', () => {
    const jws = JSON.parse(Buffer.from(attestation).toString('utf8')) as { signature: string };
    const flipped = `${jws.signature[0] === 'A' ? 'B' : 'A'}${jws.signature.slice(1)}`;
    const corrupted = Buffer.from(JSON.stringify({ ...jws, signature: flipped }));
    throwsWithCode(() => verifyAttestationWithKeys(corrupted, jwks, subject), 'SIGNATURE_INVALID');
    throwsWithCode(
      () => verifyAttestationWithKeys(attestation, jwks, { ...subject, version: '1.3.0' }),
      'SUBJECT_MISMATCH',
    );
    throwsWithCode(
      () => verifyAttestationWithKeys(attestation, jwks, { ...subject, digest: `sha256:${'0'.repeat(64)}` }),
      'DIGEST_MISMATCH',
    );
  });
});

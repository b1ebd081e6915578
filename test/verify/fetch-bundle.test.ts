// fetchVerifiedBundle (src/verify/fetch-bundle.ts) on what it is given, with no registry: the pieces it needs, the
// pinned digest (PIN_MISMATCH first, as in verifyBundle), the subject it must be asked for, and a digest reference.

import { describe, expect, it } from 'vitest';
import { computeDigest } from '../../src/core/digest.ts';
import { fetchVerifiedBundle } from '../../src/verify/index.ts';
import { buildLoggedBundle, manifestBytes, NAME, VERSION } from '../attest/sigstore-fixture.ts';

const logged = buildLoggedBundle();
const given = {
  bytes: manifestBytes,
  bundle: new Uint8Array(Buffer.from(JSON.stringify(logged.bundle))),
  jwks: { keys: logged.bundleJwks },
  logKey: logged.logVerifier,
};

describe('fetchVerifiedBundle without a registry', () => {
  it('verifies what it is given and names no registry', async () => {
    const result = await fetchVerifiedBundle(undefined, `${NAME}@${VERSION}`, given);
    expect(result).toMatchObject({ name: NAME, version: VERSION, kid: logged.bundleKey.kid, registry: undefined });
    expect(result.logIndex).toBe(logged.logIndex);
    expect(result.digest).toBe(computeDigest(manifestBytes));
  });

  it('refuses to run without a registry when a piece is missing (BAD_REQUEST)', async () => {
    const { logKey: _dropped, ...partial } = given;
    await expect(fetchVerifiedBundle(undefined, `${NAME}@${VERSION}`, partial)).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: 'without a registry, the bytes, bundle, bundle keys and log key must be given',
    });
  });

  it('by digest: verifies bytes of that digest, the subject being what they declare; other bytes are DIGEST_MISMATCH', async () => {
    const digest = computeDigest(manifestBytes);
    const result = await fetchVerifiedBundle(undefined, digest, given);
    expect(result).toMatchObject({ name: NAME, version: VERSION, digest, registry: undefined });
    const other = computeDigest(new Uint8Array([1]));
    await expect(fetchVerifiedBundle(undefined, other, given)).rejects.toMatchObject({
      code: 'DIGEST_MISMATCH',
      message: `the registry served bytes with digest ${digest} for ${other}`,
    });
    // A pin is checked first, as verifyBundle does.
    await expect(fetchVerifiedBundle(undefined, other, { ...given, expectedDigest: other })).rejects.toMatchObject({
      code: 'PIN_MISMATCH',
    });
  });

  it('refuses another pinned digest and another version', async () => {
    const pinned = computeDigest(new Uint8Array([1]));
    await expect(
      fetchVerifiedBundle(undefined, `${NAME}@${VERSION}`, { ...given, expectedDigest: pinned }),
    ).rejects.toMatchObject({ code: 'PIN_MISMATCH' });
    await expect(fetchVerifiedBundle(undefined, `${NAME}@9.9.9`, given)).rejects.toMatchObject({
      code: 'SUBJECT_MISMATCH',
    });
  });
});

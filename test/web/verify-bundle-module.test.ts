// The browser's bundle checks (src/web/assets/verify-bundle.js) against the registry's own code, in Node (which has
// WebCrypto too): the strict DER reader turns every real P-256 signature into the r ‖ s that verifies and refuses
// malformed DER with its reason; PAE and the rebuilt hashedrekord body are byte for byte src/attest's.

import { sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  buildBundleJwksKeys,
  createBundleSigningKey,
  encodePae as encodePaeNode,
  IN_TOTO_PAYLOAD_TYPE,
  signBundleEntry,
} from '../../src/attest/index.ts';
import {
  encodePae,
  readDerSignature,
  rebuildHashedRekordBody,
  selectBundleKey,
} from '../../src/web/assets/verify-bundle.js';

const statement = new TextEncoder().encode('{"_type":"https://in-toto.io/Statement/v1","subject":[]}');
const key = createBundleSigningKey();
const jwks = {
  keys: buildBundleJwksKeys([{ kid: key.kid, publicJwk: key.publicJwk, notBefore: 1_700_000_000, notAfter: null }]),
};

/** DER of an ECDSA-Sig-Value with these INTEGER contents (as given: nothing is normalised). */
function derOf(r: number[], s: number[]): Uint8Array {
  const body = [0x02, r.length, ...r, 0x02, s.length, ...s];
  return Uint8Array.from([0x30, body.length, ...body]);
}

/** `der` with byte `index` set to `value`. */
function withByte(der: Uint8Array, index: number, value: number): Uint8Array {
  const out = der.slice();
  out[index] = value;
  return out;
}

const reasonOf = (der: Uint8Array): string => {
  try {
    readDerSignature(der);
    return 'accepted';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('readDerSignature', () => {
  it('turns every real P-256 signature (short, 32- and 33-byte INTEGERs alike) into the r ‖ s that verifies', () => {
    const message = encodePaeNode(IN_TOTO_PAYLOAD_TYPE, statement);
    const lengths = new Set<number>();
    for (let i = 0; i < 400; i++) {
      const der = new Uint8Array(sign('sha256', message, key.privateKey));
      lengths.add(der[3]!);
      const raw = readDerSignature(der) as Uint8Array;
      expect(raw.byteLength).toBe(64);
      expect(verify('sha256', message, { key: key.publicKey, dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
    }
    // r took both the 32-byte and the 33-byte (leading 0x00) form among 400 signatures.
    expect(lengths.has(32) && lengths.has(33)).toBe(true);
  });

  it('left-pads a short INTEGER and keeps a 33-byte one without its sign byte', () => {
    const high = [0x00, 0x80, ...new Array<number>(31).fill(0x11)];
    const raw = readDerSignature(derOf([0x05], high)) as Uint8Array;
    expect(Array.from(raw.slice(0, 32))).toEqual([...new Array<number>(31).fill(0), 0x05]);
    expect(Array.from(raw.slice(32))).toEqual([0x80, ...new Array<number>(31).fill(0x11)]);
  });

  it('refuses malformed DER, saying why', () => {
    const ok = new Array<number>(32).fill(0x22);
    const prefix = 'the DSSE signature is not a DER ECDSA P-256 signature: ';
    const cases: [Uint8Array, string][] = [
      [derOf([0x00, 0x22, ...ok.slice(1)], ok), 'r is not minimally encoded'],
      [derOf([0x80, ...ok.slice(1)], ok), 'r is negative'],
      [derOf(ok, [0x00]), 's is zero'],
      [derOf([0x01, ...ok], ok), 'r is longer than 32 bytes'],
      [Uint8Array.from([...derOf(ok, ok).slice(0, 1), 0x45, ...derOf(ok, ok).slice(2), 0x00]), 'bytes follow s'],
      [Uint8Array.from([0x31, ...derOf(ok, ok).slice(1)]), 'it is not one SEQUENCE of its length'],
      [Uint8Array.from([0x30, 0x81, 0x44, ...derOf(ok, ok).slice(2)]), 'it is not one SEQUENCE of its length'],
      [Uint8Array.from([0x30, 0x44, 0x03, ...derOf(ok, ok).slice(3)]), 'r is not an INTEGER'],
      [withByte(derOf(ok, ok), 36, 0x04), 's is not an INTEGER'],
      [withByte(derOf(ok, ok), 37, 0x21), 's has a bad length'],
      [Uint8Array.from([0x30, 0x06, 0x02, 0x00, 0x02, 0x01, 0x01, 0x00]), 'r has a bad length'],
      [Uint8Array.from([0x30, 0x05, 0x02, 0x01, 0x01, 0x02, 0x01]), 'it is 7 bytes'],
    ];
    expect(cases.map(([der]) => reasonOf(der))).toEqual(cases.map(([, why]) => prefix + why));
  });
});

describe("the browser's rebuilt bundle parts", () => {
  it('encodes PAE as src/attest/dsse.ts does', () => {
    expect(encodePae(IN_TOTO_PAYLOAD_TYPE, statement)).toEqual(encodePaeNode(IN_TOTO_PAYLOAD_TYPE, statement));
  });

  it('rebuilds the hashedrekord body byte for byte as the registry logs it (signBundleEntry)', async () => {
    const entry = signBundleEntry(statement, key);
    const usable = await selectBundleKey(jwks, key.kid);
    expect(usable).toMatchObject({ kid: key.kid, nbf: 1_700_000_000 });
    const pae = encodePae(IN_TOTO_PAYLOAD_TYPE, statement);
    const signature = Buffer.from(entry.envelope.signatures[0].sig, 'base64');
    const rebuilt = (await rebuildHashedRekordBody({ pae, signature }, usable)) as Uint8Array;
    expect(Buffer.from(rebuilt).toString('utf8')).toBe(Buffer.from(entry.leaf).toString('utf8'));
  });

  it('finds no bundle key for a kid that is not the thumbprint of a P-256 key of the JWKS', async () => {
    const renamed = { keys: [{ ...jwks.keys[0], kid: 'not-its-thumbprint' }] };
    await expect(selectBundleKey(renamed, 'not-its-thumbprint')).rejects.toThrow(
      'the JWKS has no usable P-256 bundle key with kid not-its-thumbprint',
    );
    await expect(selectBundleKey(jwks, 'another')).rejects.toThrow(
      'the JWKS has no usable P-256 bundle key with kid another',
    );
  });
});

// verifyAttestationSync on attestation bytes in signStatement's exact JCS form (decoded from the bytes, no JSON.parse)
// agrees with the general path (the same attestation as a string, which always takes it): same result, code, message.

import { sign } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SIGNING_ALG,
  buildJwks,
  verifyAttestationSync,
  type AttestationExpectation,
  type Jwks,
} from '../../src/attest/index.ts';
import { decodeBase64urlAt } from '../../src/attest/jws.ts';
import { ToolsealError } from '../../src/core/errors.ts';
import { digest, genuine, jws, jwks, key, now } from './publish-statement-fixture.ts';

const expected: AttestationExpectation = { name: 'io.github.acme/payments', version: '1.2.0', digest };

function outcome(run: () => unknown): unknown {
  try {
    const verified = run() as { kid: string; subjectName: string; digest: string; statement: unknown };
    return { kid: verified.kid, subject: verified.subjectName, digest: verified.digest, statement: verified.statement };
  } catch (error) {
    return error instanceof ToolsealError ? { code: error.code, message: error.message } : { thrown: String(error) };
  }
}

/** The bytes path and the general path (a string) agree on `text`. */
function expectAgreement(text: string, keys: Jwks = jwks, expectation: AttestationExpectation = expected): unknown {
  const fromBytes = outcome(() => verifyAttestationSync(Buffer.from(text, 'utf8'), keys, expectation));
  expect(fromBytes).toEqual(outcome(() => verifyAttestationSync(text, keys, expectation)));
  return fromBytes;
}

/** A flattened JWS in signStatement's member order over any header and payload, signed (or not) by `key`. */
function jcs(header: string, payload: string, signature?: string): string {
  const protectedHeader = Buffer.from(header, 'utf8').toString('base64url');
  const body = Buffer.from(payload, 'utf8').toString('base64url');
  const signed =
    signature ?? sign(null, Buffer.from(`${protectedHeader}.${body}`, 'ascii'), key.privateKey).toString('base64url');
  return `{"payload":"${body}","protected":"${protectedHeader}","signature":"${signed}"}`;
}

const statementText = Buffer.from(jws.payload, 'base64url').toString('utf8');
const typ = 'application/vnd.toolseal.attestation.v1+jws';

describe('verifyAttestationSync on attestation bytes', () => {
  it('verifies the bytes signStatement writes, as the general path does', () => {
    const result = expectAgreement(genuine) as { kid: string; subject: string };
    expect(result.kid).toBe(key.kid);
    expect(result.subject).toBe('io.github.acme/payments@1.2.0');
  });

  it.each([
    [
      'another member order',
      `{"protected":"${jws.protected}","payload":"${jws.payload}","signature":"${jws.signature}"}`,
    ],
    ['white space', `{ "payload":"${jws.payload}","protected":"${jws.protected}","signature":"${jws.signature}"}`],
    ['an unprotected header', `${genuine.slice(0, -1)},"header":{"x":1}}`],
    ['an unprotected header naming kid', `${genuine.slice(0, -1)},"header":{"kid":"x"}}`],
    ['a padded payload', genuine.replace(`"payload":"${jws.payload}`, `"payload":"${jws.payload}=`)],
    ['a payload of length 1 mod 4', genuine.replace(`"payload":"${jws.payload}`, `"payload":"${jws.payload}AAAAA`)],
    [
      'a standard-base64 symbol',
      genuine.replace(`"signature":"${jws.signature}`, `"signature":"+${jws.signature.slice(1)}`),
    ],
    [
      'an escaped member',
      genuine.replace(`"protected":"${jws.protected}`, `"protected":"\\u0065${jws.protected.slice(1)}`),
    ],
    [
      'a short signature',
      genuine.replace(`"signature":"${jws.signature}`, `"signature":"${jws.signature.slice(0, 84)}`),
    ],
    ['a bad signature', genuine.replace(`"signature":"${jws.signature}`, `"signature":"A${jws.signature.slice(1)}`)],
    ['trailing bytes', `${genuine} `],
    ['a duplicate member', `${genuine.slice(0, -1)},"payload":"${jws.payload}"}`],
    ['nothing', ''],
    ['a prefix only', '{"payload":"'],
  ])('agrees with the general path on %s', (_label, text) => {
    expectAgreement(text);
  });

  it.each([
    ['the header signStatement writes', JSON.stringify({ alg: SIGNING_ALG, kid: key.kid, typ })],
    ['another header member order', JSON.stringify({ kid: key.kid, alg: SIGNING_ALG, typ })],
    ['white space in the header', JSON.stringify({ alg: SIGNING_ALG, kid: key.kid, typ }, null, 1)],
    ['an extra header member', JSON.stringify({ alg: SIGNING_ALG, kid: key.kid, typ, x: 1 })],
    ['crit', JSON.stringify({ alg: SIGNING_ALG, kid: key.kid, typ, crit: ['x'] })],
    ['another alg', JSON.stringify({ alg: 'Ed25519', kid: key.kid, typ })],
    ['another typ', JSON.stringify({ alg: SIGNING_ALG, kid: key.kid, typ: 'JWT' })],
    ['an unknown kid', JSON.stringify({ alg: SIGNING_ALG, kid: 'x'.repeat(43), typ })],
    [
      'an escaped kid',
      `{"alg":"EdDSA","kid":"${key.kid.slice(0, -1)}\\u00${key.kid.charCodeAt(key.kid.length - 1).toString(16)}","typ":"${typ}"}`,
    ],
    ['a kid with a quote', `{"alg":"EdDSA","kid":"a\\"b","typ":"${typ}"}`],
    ['an empty kid', `{"alg":"EdDSA","kid":"","typ":"${typ}"}`],
    ['a numeric kid', `{"alg":"EdDSA","kid":1,"typ":"${typ}"}`],
    ['a duplicate kid', `{"alg":"EdDSA","kid":"x","kid":"${key.kid}","typ":"${typ}"}`],
    ['a header that is not JSON', `{"alg":"EdDSA","kid":"${key.kid}","typ":"${typ}"`],
    ['a null header', 'null'],
  ])('agrees with the general path on a JCS attestation with %s', (_label, header) => {
    expectAgreement(jcs(header, statementText));
  });

  it('agrees on a protected header that is not UTF-8 (the general path reads it leniently first)', () => {
    const badHeader = Buffer.concat([
      Buffer.from(`{"alg":"EdDSA","kid":"${key.kid}","typ":"${typ}","x":"`),
      Buffer.from([0xff]),
      Buffer.from('"}'),
    ]);
    const protectedHeader = badHeader.toString('base64url');
    const signingInput = Buffer.from(`${protectedHeader}.${jws.payload}`, 'ascii');
    const signature = sign(null, signingInput, key.privateKey).toString('base64url');
    const text = `{"payload":"${jws.payload}","protected":"${protectedHeader}","signature":"${signature}"}`;
    expect(expectAgreement(text)).toEqual({
      code: 'SIGNATURE_INVALID',
      message: 'attestation signature does not verify',
    });
    const unknownKid = Buffer.concat([
      Buffer.from('{"alg":"EdDSA","kid":"'),
      Buffer.from([0xff]),
      Buffer.from(`","typ":"${typ}"}`),
    ]);
    const text2 = jcs('x', statementText).replace(
      /"protected":"[^"]*"/,
      `"protected":"${unknownKid.toString('base64url')}"`,
    );
    expect((expectAgreement(text2) as { code: string }).code).toBe('UNKNOWN_KEY');
  });

  it('agrees on statements the check refuses, and on expectations that do not hold', () => {
    expectAgreement(jcs(JSON.stringify({ alg: SIGNING_ALG, kid: key.kid, typ }), '{"_type":"x"}'));
    expectAgreement(jcs(JSON.stringify({ alg: SIGNING_ALG, kid: key.kid, typ }), 'not json'));
    expectAgreement(genuine, jwks, { ...expected, version: '9.9.9' });
    expectAgreement(genuine, jwks, { digest: `sha256:${'cd'.repeat(32)}` });
    expectAgreement(
      genuine,
      buildJwks([{ kid: key.kid, publicJwk: key.publicJwk, notBefore: now + 60, notAfter: null }]),
    );
    expectAgreement(genuine, { keys: [] });
  });

  it('property: any one byte of the attestation replaced, inserted or removed, both paths agree', () => {
    const alphabet = [...'{}":,AZaz09-_+/=\\ ', '\u00e9'];
    fc.assert(
      fc.property(
        fc.nat(genuine.length),
        fc.constantFrom('replace', 'insert', 'delete'),
        fc.constantFrom(...alphabet),
        (at, edit, char) => {
          const text =
            edit === 'delete'
              ? genuine.slice(0, at) + genuine.slice(at + 1)
              : genuine.slice(0, at) + char + genuine.slice(edit === 'insert' ? at : at + 1);
          expectAgreement(text);
        },
      ),
      { numRuns: 600 },
    );
  });
});

describe('decodeBase64urlAt', () => {
  const isBase64url = (text: string): boolean => /^[A-Za-z0-9_-]*$/.test(text) && text.length % 4 !== 1;

  it('decodes what Buffer decodes from unpadded base64url, from the bytes of the text, and nothing else', () => {
    const symbols = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'];
    const text = fc.oneof(
      fc.uint8Array({ maxLength: 70 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
      fc.array(fc.constantFrom(...symbols), { maxLength: 20 }).map((chars) => chars.join('')),
      fc
        .array(fc.constantFrom(...symbols, '=', '+', '/', ' ', '"', '\u00e9'), { maxLength: 12 })
        .map((c) => c.join('')),
    );
    fc.assert(
      fc.property(text, fc.nat(3), fc.nat(3), (value, before, after) => {
        const bytes = Buffer.concat([
          Buffer.alloc(before, 0x41),
          Buffer.from(value, 'utf8'),
          Buffer.alloc(after, 0x41),
        ]);
        const end = bytes.byteLength - after;
        const decoded = decodeBase64urlAt(bytes, before, end);
        const textAt = bytes.toString('latin1', before, end);
        if (!isBase64url(textAt)) {
          expect(decoded).toBeUndefined();
        } else {
          expect(decoded).toEqual(Buffer.from(textAt, 'base64url'));
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('drops the unused low bits of the last symbol as Buffer does, and refuses ranges outside the bytes', () => {
    expect(decodeBase64urlAt(Buffer.from('AB'), 0, 2)).toEqual(Buffer.from('AB', 'base64url'));
    expect(decodeBase64urlAt(Buffer.from('ABC'), 0, 3)).toEqual(Buffer.from('ABC', 'base64url'));
    expect(decodeBase64urlAt(Buffer.from('A'), 0, 1)).toBeUndefined();
    expect(decodeBase64urlAt(Buffer.from('AAAA'), 0, 8)).toBeUndefined();
    expect(decodeBase64urlAt(Buffer.from('AAAA'), 3, 2)).toBeUndefined();
    expect(decodeBase64urlAt(Buffer.from(''), 0, 0)).toEqual(Buffer.alloc(0));
  });
});

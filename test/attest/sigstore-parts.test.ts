// The pure Sigstore parts of src/attest: DSSE PAE and envelope (DSSE protocol.md), P-256 kids (RFC 7638, checked
// against jose's thumbprint), the hashedrekord v0.0.2 body, the bundle's assembly rules, the trusted root and the
// log-origin rule.

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  assembleBundle,
  buildBundleKeyring,
  buildTrustedRoot,
  computeBundleKid,
  createBundleSigningKey,
  createSigningKey,
  deriveLogOrigin,
  encodePae,
  formatHashedRekordFacts,
  formatPromisePayload,
  parseHashedRekordBody,
  readDsseEnvelope,
  selectUsableBundleKeys,
  signBundleEntry,
  signDsseEnvelope,
  verifyP256,
} from '../../src/attest/index.ts';
import { computeLogKeyId, computeKeyId } from '../../src/log/index.ts';
import { canonicalizeToBytes } from '../../src/pipeline/canonical.ts';
import { isToolsealError } from '../../src/core/errors.ts';
import { buildLoggedBundle } from './sigstore-fixture.ts';

const key = createBundleSigningKey();

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isToolsealError(error)) return error.code;
    throw error;
  }
  return 'ACCEPTED';
}

describe('DSSE', () => {
  it('encodes the PAE of the DSSE protocol example', () => {
    const pae = encodePae('http://example.com/HelloWorld', Buffer.from('hello world'));
    expect(Buffer.from(pae).toString('latin1')).toBe('DSSEv1 29 http://example.com/HelloWorld 11 hello world');
  });

  it('counts lengths in bytes, not characters', () => {
    const pae = encodePae('t', Buffer.from('é'));
    expect(Buffer.from(pae)).toEqual(Buffer.concat([Buffer.from('DSSEv1 1 t 2 '), Buffer.from('é')]));
  });

  it('gives different PAEs for any two different (type, payload) pairs', () => {
    fc.assert(
      fc.property(fc.string(), fc.uint8Array(), fc.string(), fc.uint8Array(), (t1, p1, t2, p2) => {
        fc.pre(t1 !== t2 || Buffer.compare(p1, p2) !== 0);
        expect(Buffer.compare(encodePae(t1, p1), encodePae(t2, p2))).not.toBe(0);
      }),
    );
  });

  it('signs one signature with keyid = kid that verifies over the PAE, and reads it back', () => {
    const statement = Buffer.from('{"_type":"https://in-toto.io/Statement/v1"}');
    const envelope = signDsseEnvelope(statement, key);
    expect(envelope.payloadType).toBe('application/vnd.in-toto+json');
    expect(envelope.signatures).toHaveLength(1);
    expect(envelope.signatures[0].keyid).toBe(key.kid);
    const read = readDsseEnvelope(envelope);
    expect(Buffer.from(read.payload)).toEqual(statement);
    expect(verifyP256(read.pae, key.publicKey, read.signature)).toBe(true);
    expect(verifyP256(encodePae('other/type', statement), key.publicKey, read.signature)).toBe(false);
    expect(verifyP256(read.pae, createBundleSigningKey().publicKey, read.signature)).toBe(false);
  });

  it('reads no envelope with a non-canonical base64 payload or no keyid', () => {
    const envelope = signDsseEnvelope(Buffer.from('{}'), key);
    expect(codeOf(() => readDsseEnvelope({ ...envelope, payload: 'e30' }))).toBe('SIGNATURE_INVALID');
    const noKeyid = { ...envelope, signatures: [{ sig: envelope.signatures[0].sig }] };
    expect(codeOf(() => readDsseEnvelope(noKeyid))).toBe('SIGNATURE_INVALID');
    expect(codeOf(() => readDsseEnvelope({ ...envelope, signatures: [] }))).toBe('SIGNATURE_INVALID');
  });
});

describe('P-256 bundle keys', () => {
  it('names a key by its RFC 7638 thumbprint, as jose computes it', async () => {
    const { x, y } = key.publicJwk;
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x, y }, 'sha256'));
    expect(computeBundleKid({ x, y })).toBe(key.kid);
  });

  it('selects only P-256 public keys named by their thumbprint', () => {
    const ed25519 = createSigningKey();
    const other = createBundleSigningKey();
    const keys = selectUsableBundleKeys({
      keys: [
        { ...key.publicJwk, nbf: 10, exp: 20 },
        { ...ed25519.publicJwk, nbf: 10 },
        { ...other.publicJwk, kid: key.kid.replace(/^./, key.kid[0] === 'A' ? 'B' : 'A'), nbf: 10 },
        { ...other.publicJwk, d: 'private', nbf: 10 },
        'not a key',
      ],
    });
    expect([...keys.keys()]).toEqual([key.kid]);
    expect(keys.get(key.kid)).toMatchObject({ nbf: 10, exp: 20 });
    expect(selectUsableBundleKeys([{ ...key.publicJwk }]).get(key.kid)?.nbf).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('hashedrekord v0.0.2 body', () => {
  const facts = fc.record({
    digest: fc.uint8Array({ minLength: 32, maxLength: 32 }),
    signature: fc.uint8Array({ minLength: 1, maxLength: 80 }),
    publicKeySpki: fc.uint8Array({ minLength: 1, maxLength: 100 }),
  });

  it('is JCS and reads back to the same facts', () => {
    fc.assert(
      fc.property(facts, (value) => {
        const body = formatHashedRekordFacts(value);
        expect(Buffer.from(canonicalizeToBytes(JSON.parse(Buffer.from(body).toString('utf8'))))).toEqual(
          Buffer.from(body),
        );
        const read = parseHashedRekordBody(body);
        expect(typeof read).toBe('object');
        expect(formatHashedRekordFacts(read as typeof value)).toEqual(body);
      }),
    );
  });

  it('differs whenever a fact differs (a leaf names one signature over one digest)', () => {
    fc.assert(
      fc.property(facts, facts, (a, b) => {
        const same =
          Buffer.compare(a.digest, b.digest) === 0 &&
          Buffer.compare(a.signature, b.signature) === 0 &&
          Buffer.compare(a.publicKeySpki, b.publicKeySpki) === 0;
        expect(Buffer.compare(formatHashedRekordFacts(a), formatHashedRekordFacts(b)) === 0).toBe(same);
      }),
    );
  });

  it('records SHA-256 of the PAE and the envelope signature', () => {
    const statement = Buffer.from('{"a":1}');
    const { envelope, leaf } = signBundleEntry(statement, key);
    const read = parseHashedRekordBody(leaf);
    if (typeof read === 'string') throw new Error(read);
    const pae = encodePae('application/vnd.in-toto+json', statement);
    expect(Buffer.from(read.digest)).toEqual(createHash('sha256').update(pae).digest());
    expect(Buffer.from(read.signature).toString('base64')).toBe(envelope.signatures[0].sig);
    expect(Buffer.from(read.publicKeySpki)).toEqual(key.publicKey.export({ format: 'der', type: 'spki' }));
  });

  it('reads back nothing that is not exactly such a body', () => {
    const body = JSON.parse(Buffer.from(signBundleEntry(Buffer.from('{}'), key).leaf).toString('utf8'));
    const bad = (value: Record<string, unknown>) => parseHashedRekordBody(canonicalizeToBytes(value as never));
    expect(bad({ ...body, apiVersion: '0.0.1' })).toMatch(/hashedrekord v0\.0\.2/);
    expect(bad({ ...body, extra: 1 })).toMatch(/members other than/);
    expect(parseHashedRekordBody(Buffer.from(JSON.stringify(body, null, 1)))).toMatch(/JCS/);
  });
});

describe('bundle assembly', () => {
  it('logs the C2SP key id of the log and signs the promise over the Rekor verification payload', () => {
    const logged = buildLoggedBundle();
    const entry = logged.bundle.verificationMaterial.tlogEntries[0];
    const logId = computeLogKeyId(logged.origin, logged.logKey.publicKey);
    expect(entry.logId.keyId).toBe(Buffer.from(logId).toString('base64'));
    // Its first four bytes are the note signature's key hint.
    expect(Buffer.from(logId).readUInt32BE(0)).toBe(computeKeyId(logged.origin, logged.logKey.publicKey));
    const payload = formatPromisePayload(logged.leaf, Number(entry.integratedTime), logged.logIndex, logId);
    expect(JSON.parse(Buffer.from(payload).toString('utf8'))).toEqual({
      body: entry.canonicalizedBody,
      integratedTime: Number(entry.integratedTime),
      logID: Buffer.from(logId).toString('hex'),
      logIndex: logged.logIndex,
    });
  });

  it('refuses parts that do not belong together', () => {
    const logged = buildLoggedBundle();
    const entry = logged.bundle.verificationMaterial.tlogEntries[0];
    const base = {
      entry: { envelope: logged.bundle.dsseEnvelope, leaf: logged.leaf },
      kid: logged.bundleKey.kid,
      log: { origin: logged.origin, publicKey: logged.logKey.publicKey },
      logIndex: logged.logIndex,
      integratedTime: 1,
      promise: new Uint8Array(64),
      proof: [],
      checkpoint: entry.inclusionProof.checkpoint.envelope,
    };
    expect(codeOf(() => assembleBundle(base))).toBe('ACCEPTED');
    expect(codeOf(() => assembleBundle({ ...base, kid: createBundleSigningKey().kid }))).toBe('BAD_REQUEST');
    expect(codeOf(() => assembleBundle({ ...base, log: { ...base.log, origin: 'other.example' } }))).toBe(
      'BAD_REQUEST',
    );
    expect(codeOf(() => assembleBundle({ ...base, logIndex: 12 }))).toBe('BAD_REQUEST');
  });
});

describe('trusted root and the log-origin rule', () => {
  it('derives the origin as the host name of the public URL', () => {
    expect(deriveLogOrigin('https://Registry.Example.com:8443/base/')).toBe('registry.example.com');
    expect(deriveLogOrigin('http://127.0.0.1:8787')).toBe('127.0.0.1');
    expect(deriveLogOrigin('http://[::1]:8787')).toBe('[::1]');
    expect(codeOf(() => deriveLogOrigin('file:///tmp/x'))).toBe('BAD_REQUEST');
    expect(codeOf(() => deriveLogOrigin('not a url'))).toBe('BAD_REQUEST');
  });

  it('names the log by baseUrl, Ed25519 SPKI, C2SP key id and validity', () => {
    const logKey = createSigningKey();
    const root = buildTrustedRoot([
      { baseUrl: 'https://registry.example', origin: 'registry.example', publicKey: logKey.publicKey, notBefore: 0 },
    ]);
    expect(root).toEqual({
      mediaType: 'application/vnd.dev.sigstore.trustedroot+json;version=0.1',
      tlogs: [
        {
          baseUrl: 'https://registry.example',
          hashAlgorithm: 'SHA2_256',
          publicKey: {
            rawBytes: logKey.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
            keyDetails: 'PKIX_ED25519',
            validFor: { start: '1970-01-01T00:00:00.000Z' },
          },
          logId: { keyId: Buffer.from(computeLogKeyId('registry.example', logKey.publicKey)).toString('base64') },
        },
      ],
    });
  });

  it('refuses a log whose origin is not the host name of its base URL', () => {
    const logKey = createSigningKey();
    const log = { baseUrl: 'https://registry.example', origin: 'toolseal.dev/log', publicKey: logKey.publicKey };
    expect(codeOf(() => buildTrustedRoot([{ ...log, notBefore: 0 }]))).toBe('BAD_REQUEST');
  });

  it('lists bundle keys by kid with their validity window', () => {
    const ring = buildBundleKeyring([{ kid: key.kid, publicJwk: key.publicJwk, notBefore: 0, notAfter: 60 }]);
    expect(ring).toEqual({
      [key.kid]: {
        rawBytes: key.publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
        keyDetails: 'PKIX_ECDSA_P256_SHA_256',
        validFor: { start: '1970-01-01T00:00:00.000Z', end: '1970-01-01T00:01:00.000Z' },
      },
    });
  });
});

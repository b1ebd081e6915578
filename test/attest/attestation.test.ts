// Attestations: JWS shape, RFC 7638 kids, verification with the JWKS, and every way a forged or swapped one fails.

import { copyFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalJWKSet, flattenedVerify, type FlattenedJWS } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ATTESTATION_JWS_TYPE,
  IN_TOTO_STATEMENT_TYPE,
  TOOLSEAL_PREDICATE_TYPE,
  buildJwks,
  buildPublishStatement,
  computeKid,
  signStatement,
  verifyAttestation,
  type Jwks,
  type PublishStatement,
} from '../../src/attest/index.ts';
import { ToolsealError, type ErrorCode } from '../../src/core/errors.ts';
import { canonicalizeToBytes, type JsonValue } from '../../src/pipeline/index.ts';
import {
  bodyBytes,
  cleanupTempDirs,
  createTestEnv,
  digestOfBytes,
  makeTempDir,
  manifestBytes,
  postManifest,
  type TestEnv,
} from '../helpers/registry-helpers.ts';
import { generateSigningKey, loadSigningKey } from '../../src/keys/key-files.ts';

afterAll(cleanupTempDirs);

async function expectVerifyCode(promise: Promise<unknown>, code: ErrorCode): Promise<ToolsealError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(ToolsealError);
  expect((error as ToolsealError).code).toBe(code);
  return error as ToolsealError;
}

function parseJws(bytes: Uint8Array): FlattenedJWS & { payload: string; protected: string } {
  return JSON.parse(Buffer.from(bytes).toString('utf8')) as FlattenedJWS & { payload: string; protected: string };
}

function encode(jws: object): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(jws));
}

describe('attestations served by the registry', () => {
  let env: TestEnv;
  let jwks: Jwks;
  let v1: { bytes: Uint8Array; attestation: Uint8Array };
  let v2: { bytes: Uint8Array; attestation: Uint8Array };
  beforeAll(async () => {
    env = await createTestEnv();
    for (const version of ['1.0.0', '1.1.0'])
      expect((await postManifest(env.app, manifestBytes({ version, description: version }), env.token)).status).toBe(
        201,
      );
    const fetchPair = async (version: string): Promise<{ bytes: Uint8Array; attestation: Uint8Array }> => ({
      bytes: await bodyBytes(await env.app.request(`/v1/manifests/io.github.acme/widgets/${version}`)),
      attestation: await bodyBytes(
        await env.app.request(`/v1/manifests/io.github.acme/widgets/${version}/attestation`),
      ),
    });
    v1 = await fetchPair('1.0.0');
    v2 = await fetchPair('1.1.0');
    jwks = (await (await env.app.request('/.well-known/jwks.json')).json()) as Jwks;
  });
  afterAll(async () => await env.close());

  it('is a JCS flattened JWS: protected header {alg: EdDSA, kid, typ}, an in-toto Statement v1 payload', async () => {
    const jws = parseJws(v1.attestation);
    expect(Object.keys(jws)).toEqual(['payload', 'protected', 'signature']);
    expect(Buffer.from(canonicalizeToBytes(jws as unknown as JsonValue)).equals(Buffer.from(v1.attestation))).toBe(
      true,
    );
    expect(JSON.parse(Buffer.from(jws.protected, 'base64url').toString('utf8'))).toEqual({
      alg: 'EdDSA',
      kid: await env.registry.activeKid(),
      typ: ATTESTATION_JWS_TYPE,
    });
    const payloadBytes = Buffer.from(jws.payload, 'base64url');
    const statement = JSON.parse(payloadBytes.toString('utf8')) as PublishStatement;
    expect(Buffer.from(canonicalizeToBytes(statement as unknown as JsonValue)).equals(payloadBytes)).toBe(true);
    expect(statement).toMatchObject({
      _type: IN_TOTO_STATEMENT_TYPE,
      predicateType: TOOLSEAL_PREDICATE_TYPE,
      subject: [{ name: 'io.github.acme/widgets@1.0.0', digest: { sha256: digestOfBytes(v1.bytes).slice(7) } }],
      predicate: {
        publisher: 'io.github.acme',
        policy: 'toolseal-pipeline/v1',
        size: v1.bytes.byteLength,
        previousDigest: null,
      },
    });
  });

  it('verifies with the JWKS (ours and jose with a local JWK set)', async () => {
    const verified = await verifyAttestation(v1.attestation, jwks, {
      name: 'io.github.acme/widgets',
      version: '1.0.0',
      digest: digestOfBytes(v1.bytes),
    });
    expect(verified.kid).toBe(await env.registry.activeKid());
    const { payload, protectedHeader } = await flattenedVerify(
      parseJws(v1.attestation),
      createLocalJWKSet(jwks as never),
    );
    expect(protectedHeader?.kid).toBe(await env.registry.activeKid());
    expect(JSON.parse(Buffer.from(payload).toString('utf8'))).toEqual(verified.statement);
  });

  it('tampered bytes fail: DIGEST_MISMATCH', async () => {
    const tampered = Buffer.from(v1.bytes);
    tampered[tampered.indexOf('1.0.0')] = '2'.charCodeAt(0);
    await expectVerifyCode(
      verifyAttestation(v1.attestation, jwks, {
        name: 'io.github.acme/widgets',
        version: '1.0.0',
        digest: digestOfBytes(tampered),
      }),
      'DIGEST_MISMATCH',
    );
    // Bytes of another version presented with this version's attestation.
    await expectVerifyCode(
      verifyAttestation(v1.attestation, jwks, { digest: digestOfBytes(v2.bytes) }),
      'DIGEST_MISMATCH',
    );
  });

  it('a swapped attestation (from another version) fails: SUBJECT_MISMATCH', async () => {
    await expectVerifyCode(
      verifyAttestation(v2.attestation, jwks, {
        name: 'io.github.acme/widgets',
        version: '1.0.0',
        digest: digestOfBytes(v1.bytes),
      }),
      'SUBJECT_MISMATCH',
    );
    await expectVerifyCode(
      verifyAttestation(v1.attestation, jwks, { name: 'io.github.acme/other', version: '1.0.0' }),
      'SUBJECT_MISMATCH',
    );
  });

  it('a wrong kid fails: UNKNOWN_KEY (a header naming another kid, or a JWKS without the key)', async () => {
    const jws = parseJws(v1.attestation);
    const header = JSON.parse(Buffer.from(jws.protected, 'base64url').toString('utf8')) as Record<string, string>;
    const forged = {
      ...jws,
      protected: Buffer.from(JSON.stringify({ ...header, kid: 'not-a-registry-kid' })).toString('base64url'),
    };
    await expectVerifyCode(verifyAttestation(encode(forged), jwks), 'UNKNOWN_KEY');
    await expectVerifyCode(verifyAttestation(v1.attestation, { keys: [] }), 'UNKNOWN_KEY');
    const stranger = generateSigningKey(makeTempDir());
    await expectVerifyCode(
      verifyAttestation(
        v1.attestation,
        buildJwks([{ kid: stranger.kid, publicJwk: stranger.publicJwk, notBefore: 0, notAfter: null }]),
      ),
      'UNKNOWN_KEY',
    );
  });

  it('a header claiming a kid whose key did not sign it fails: SIGNATURE_INVALID', async () => {
    // Sign with a stranger's key but claim the registry's kid.
    const stranger = generateSigningKey(makeTempDir());
    const statement = JSON.parse(
      Buffer.from(parseJws(v1.attestation).payload, 'base64url').toString('utf8'),
    ) as PublishStatement;
    const forged = parseJws(signStatement(statement, { ...stranger, kid: await env.registry.activeKid() }));
    await expectVerifyCode(verifyAttestation(encode(forged), jwks), 'SIGNATURE_INVALID');
  });

  it('a modified payload fails: SIGNATURE_INVALID (subject digest, name, storedAt, or one signature bit)', async () => {
    const jws = parseJws(v1.attestation);
    const statement = JSON.parse(Buffer.from(jws.payload, 'base64url').toString('utf8')) as PublishStatement;
    const edits: ((s: PublishStatement) => void)[] = [
      (s) => (s.subject[0].digest.sha256 = digestOfBytes(v2.bytes).slice(7)),
      (s) => (s.subject[0].name = 'io.github.acme/widgets@9.9.9'),
      (s) => (s.predicate.storedAt = '2001-01-01T00:00:00.000Z'),
      (s) => (s.predicate.publisher = 'io.github.evil'),
    ];
    for (const edit of edits) {
      const copy = structuredClone(statement);
      edit(copy);
      const forged = {
        ...jws,
        payload: Buffer.from(canonicalizeToBytes(copy as unknown as JsonValue)).toString('base64url'),
      };
      await expectVerifyCode(verifyAttestation(encode(forged), jwks), 'SIGNATURE_INVALID');
    }
    const signature = Buffer.from(jws.signature, 'base64url');
    signature[0]! ^= 1;
    await expectVerifyCode(
      verifyAttestation(encode({ ...jws, signature: signature.toString('base64url') }), jwks),
      'SIGNATURE_INVALID',
    );
  });

  it('malformed attestations fail with SIGNATURE_INVALID: not JSON, not a JWS, another alg or typ, crit', async () => {
    const jws = parseJws(v1.attestation);
    await expectVerifyCode(verifyAttestation('not json', jwks), 'SIGNATURE_INVALID');
    await expectVerifyCode(verifyAttestation('{"payload":1}', jwks), 'SIGNATURE_INVALID');
    await expectVerifyCode(verifyAttestation(new Uint8Array([0xff, 0xfe]), jwks), 'SIGNATURE_INVALID');
    const header = JSON.parse(Buffer.from(jws.protected, 'base64url').toString('utf8')) as Record<string, unknown>;
    for (const changed of [
      { ...header, alg: 'ES256' },
      { ...header, alg: 'none' },
      { ...header, typ: 'JWT' },
      { ...header, crit: ['exp'] },
    ]) {
      const forged = { ...jws, protected: Buffer.from(JSON.stringify(changed)).toString('base64url') };
      await expectVerifyCode(verifyAttestation(encode(forged), jwks), 'SIGNATURE_INVALID');
    }
  });

  it('a key is judged at the attestation storedAt: outside the key window is KEY_NOT_VALID', async () => {
    const verified = await verifyAttestation(v1.attestation, jwks);
    const storedAtSeconds = Math.floor(verified.storedAt.getTime() / 1000);
    const key = jwks.keys[0]!;
    await expectVerifyCode(
      verifyAttestation(v1.attestation, { keys: [{ ...key, exp: storedAtSeconds }] }),
      'KEY_NOT_VALID',
    );
    await expectVerifyCode(
      verifyAttestation(v1.attestation, { keys: [{ ...key, nbf: storedAtSeconds + 1 }] }),
      'KEY_NOT_VALID',
    );
    await verifyAttestation(v1.attestation, { keys: [{ ...key, exp: storedAtSeconds + 1 }] });
  });
});

describe('keys', () => {
  it('computeKid is the RFC 7638 thumbprint (RFC 8037 appendix A.3 vector)', async () => {
    expect(computeKid({ crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' })).toBe(
      'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k',
    );
  });

  it('generateSigningKey writes a 0600 private JWK named by kid; loadSigningKey reads it back; a mismatched file is refused', async () => {
    const dir = makeTempDir();
    const key = generateSigningKey(dir);
    const file = join(dir, `${key.kid}.private.jwk.json`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(key.kid).toBe(computeKid(key.publicJwk));
    const loaded = loadSigningKey(dir, key.kid);
    expect(loaded.publicJwk).toEqual(key.publicJwk);
    expect(() => loadSigningKey(dir, 'missing-kid')).toThrow(ToolsealError);
    // A file named for one kid that holds another key is refused.
    const other = generateSigningKey(dir);
    copyFileSync(join(dir, `${other.kid}.private.jwk.json`), file);
    let refused: unknown;
    try {
      loadSigningKey(dir, key.kid);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ToolsealError);
    expect((refused as ToolsealError).code).toBe('INTERNAL');
    expect((refused as ToolsealError).message).toContain(other.kid);
  });

  it('signStatement is deterministic (Ed25519) and binds name, version and digest', async () => {
    const dir = makeTempDir();
    const key = generateSigningKey(dir);
    const jwks = buildJwks([{ kid: key.kid, publicJwk: key.publicJwk, notBefore: 0, notAfter: null }]);
    const statement = buildPublishStatement({
      name: 'io.github.acme/x',
      version: '1.0.0',
      digest: `sha256:${'ab'.repeat(32)}`,
      predicate: {
        registry: 'http://127.0.0.1',
        publisher: 'io.github.acme',
        storedAt: '2030-01-01T00:00:00.000Z',
        policy: 'toolseal-pipeline/v1',
        size: 10,
        previousDigest: null,
      },
    });
    const a = signStatement(statement, key);
    const b = signStatement(structuredClone(statement), key);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    // The attestation bytes are themselves JCS (RFC 8785): re-canonicalising them changes nothing.
    expect(Buffer.from(canonicalizeToBytes(JSON.parse(Buffer.from(a).toString('utf8')))).equals(Buffer.from(a))).toBe(
      true,
    );
    const verified = await verifyAttestation(a, jwks, {
      name: 'io.github.acme/x',
      version: '1.0.0',
      digest: `sha256:${'ab'.repeat(32)}`,
    });
    expect(verified.subjectName).toBe('io.github.acme/x@1.0.0');
    await expectVerifyCode(
      verifyAttestation(a, jwks, { name: 'io.github.acme/x', version: '1.0.1' }),
      'SUBJECT_MISMATCH',
    );
  });
});

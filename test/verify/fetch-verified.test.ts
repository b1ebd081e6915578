// fetchVerified / verifyFetched against a real in-process registry, and a proxying fake registry that tampers.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchVerified,
  parseManifestRef,
  verifyFetched,
  type FetchVerifiedOptions,
  type VerifyFetchedInput,
} from '../../src/verify/index.ts';
import { computeKid, type Jwks, type JwksKey, selectUsableKeys } from '../../src/attest/index.ts';
import { computeDigest, type Sha256Digest } from '../../src/pipeline/index.ts';
import { formatTlogProof, formatVerifierString, parseNote, signNote } from '../../src/log/index.ts';
import { bodyOf, type PublishOutcome } from '../../src/registry/index.ts';
import {
  canonicalOf,
  jsonBody,
  manifestFile,
  manifestVariant,
  rejectsWithCode,
  startFakeRegistry,
  startRegistry,
  throwsWithCode,
  withJson,
  type FakeRegistry,
  type TestRegistry,
} from './helpers.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

const PAYMENTS = 'io.github.acme/payments';

let real: TestRegistry;
let other: TestRegistry;
let fake: FakeRegistry;
let payments: PublishOutcome;
let paymentsNext: PublishOutcome;
let contacts: PublishOutcome;
let paymentsBytes: Uint8Array;
let contactsBytes: Uint8Array;

beforeAll(async () => {
  real = await startRegistry();
  other = await startRegistry('http://other-registry.test');
  paymentsBytes = canonicalOf(manifestFile('payments'));
  contactsBytes = canonicalOf(manifestFile('contacts-refs'));
  payments = await real.publish(manifestFile('payments'));
  paymentsNext = await real.publish(manifestVariant('payments', { version: '1.3.0' }));
  contacts = await real.publish(manifestFile('contacts-refs'));
  await real.publish(manifestFile('cafe-guide'));
  // Another registry (other keys, other log) that signs different content under the same name@version.
  await other.publish(manifestVariant('payments', { description: 'Acme payments, re-signed elsewhere.' }));
  fake = await startFakeRegistry(real.url);
});

afterAll(async () => {
  await fake?.close();
  await real?.close();
  await other?.close();
});

afterEach(async () => {
  fake.rewrite = undefined;
});

async function pinned(registry: TestRegistry): Promise<FetchVerifiedOptions> {
  return { jwks: selectUsableKeys(await registry.registry.jwks()).jwks, logKey: registry.registry.log.verifierString };
}

const attestationPath = (version: string): string => `/v1/manifests/io.github.acme/payments/${version}/attestation`;
const manifestPath = (version: string): string => `/v1/manifests/io.github.acme/payments/${version}`;

describe('fetchVerified: success', () => {
  it('fetches name@version and returns exactly the canonical bytes, with the proven evidence', async () => {
    const result = await fetchVerified(real.url, `${PAYMENTS}@1.2.0`);
    expect(Buffer.from(result.bytes).equals(Buffer.from(paymentsBytes))).toBe(true);
    expect(result.digest).toBe(computeDigest(paymentsBytes));
    expect(result.digest).toBe(payments.record.digest);
    expect(result.name).toBe(PAYMENTS);
    expect(result.version).toBe('1.2.0');
    expect(result.manifest.name).toBe(PAYMENTS);
    expect(result.manifest.tools.map((tool) => tool.name)).toContain('create_payment');
    expect(result.kid).toBe(await real.registry.activeKid());
    expect(result.logIndex).toBe(payments.record.logIndex);
    expect(Buffer.from(result.attestation).equals(Buffer.from(payments.record.attestation))).toBe(true);
    expect(result.checkpoint.origin).toBe(real.registry.log.origin);
    expect(result.checkpoint.size).toBeGreaterThan(result.logIndex);
    expect(result.storedAt).toBe(payments.record.storedAt);
    expect(result.registry).toBe(real.url);
    expect(result.status).toBe('active');
  });

  it('fetches by digest (blob + attestation binding) and returns the same bytes', async () => {
    const result = await fetchVerified(real.url, payments.record.digest);
    expect(Buffer.from(result.bytes).equals(Buffer.from(paymentsBytes))).toBe(true);
    expect(`${result.name}@${result.version}`).toBe(`${PAYMENTS}@1.2.0`);
    expect(result.logIndex).toBe(payments.record.logIndex);
    expect(Buffer.from(result.attestation).equals(Buffer.from(payments.record.attestation))).toBe(true);
  });

  it('by digest, options.name selects the binding; a name the digest is not bound to is NOT_FOUND', async () => {
    const result = await fetchVerified(real.url, contacts.record.digest, { name: 'io.github.acme/contacts@2.0.0' });
    expect(Buffer.from(result.bytes).equals(Buffer.from(contactsBytes))).toBe(true);
    await rejectsWithCode(fetchVerified(real.url, contacts.record.digest, { name: PAYMENTS }), 'NOT_FOUND');
  });

  it('verifies against pinned keys (jwks / pinnedKeys) and a pinned log key without fetching them', async () => {
    fake.requests.length = 0;
    const result = await fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real));
    expect(result.digest).toBe(payments.record.digest);
    expect(fake.requests.some((path) => path.includes('jwks') || path.includes('/log/key'))).toBe(false);
    const keys = selectUsableKeys(await real.registry.jwks()).jwks.keys;
    await expect(fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { pinnedKeys: keys })).resolves.toMatchObject({
      digest: payments.record.digest,
    });
  });

  it('a matching pin (expectedDigest or lock entry) passes', async () => {
    const digest = payments.record.digest as Sha256Digest;
    await expect(fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { expectedDigest: digest })).resolves.toBeDefined();
    await expect(fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { lock: { digest } })).resolves.toBeDefined();
  });

  it('a version signed before a key rotation still verifies (the retired key was valid when it was stored)', async () => {
    const registry = await startRegistry();
    try {
      const before = await registry.publish(manifestFile('workspace-files'));
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await registry.registry.rotateSigningKey();
      const after = await registry.publish(manifestVariant('workspace-files', { version: '0.5.0' }));
      const old = await fetchVerified(registry.url, 'io.github.acme/workspace-files@0.4.1');
      const fresh = await fetchVerified(registry.url, 'io.github.acme/workspace-files@0.5.0');
      expect(old.kid).toBe(before.record.kid);
      expect(fresh.kid).toBe(after.record.kid);
      expect(old.kid).not.toBe(fresh.kid);
    } finally {
      await registry.close();
    }
  });
});

describe('fetchVerified: refusals, each with its code', () => {
  it('a tampered byte in the manifest is DIGEST_MISMATCH (by name@version and by digest)', async () => {
    fake.rewrite = (path, response) => {
      if (path !== manifestPath('1.2.0') && !path.startsWith('/v1/blobs/')) return response;
      const body = Buffer.from(response.body);
      const at = body.indexOf('Stripe');
      body[at] = 'X'.charCodeAt(0); // still valid JSON, one byte different
      return { ...response, body };
    };
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`), 'DIGEST_MISMATCH');
    await rejectsWithCode(fetchVerified(fake.url, payments.record.digest), 'DIGEST_MISMATCH');
  });

  it("another version's attestation (validly signed, logged) is SUBJECT_MISMATCH", async () => {
    const swapped = Buffer.from(paymentsNext.record.attestation);
    fake.rewrite = (path, response) => (path === attestationPath('1.2.0') ? { ...response, body: swapped } : response);
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real)), 'SUBJECT_MISMATCH');
  });

  it("another version's bytes and attestation together (both genuine) are SUBJECT_MISMATCH", async () => {
    const nextBytes = (await fetchVerified(real.url, `${PAYMENTS}@1.3.0`)).bytes;
    fake.rewrite = (path, response) => {
      if (path === manifestPath('1.2.0')) return { ...response, body: Buffer.from(nextBytes) };
      if (path === attestationPath('1.2.0')) return { ...response, body: Buffer.from(paymentsNext.record.attestation) };
      return response;
    };
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real)), 'SUBJECT_MISMATCH');
  });

  it('an attestation by a kid the (pinned or served) JWKS does not hold is UNKNOWN_KEY', async () => {
    await rejectsWithCode(
      fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { jwks: selectUsableKeys(await other.registry.jwks()).jwks }),
      'UNKNOWN_KEY',
    );
    // The fake registry serves another registry's JWKS.
    const otherJwks = Buffer.from(JSON.stringify(await other.registry.jwks()));
    fake.rewrite = (path, response) =>
      path === '/.well-known/jwks.json' ? { ...response, body: otherJwks } : response;
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`), 'UNKNOWN_KEY');
  });

  it("a JWKS entry whose kid is not its key's thumbprint is ignored (UNKNOWN_KEY)", async () => {
    const { publicKey } = generateEd25519KeyPair();
    const x = String(publicKey.export({ format: 'jwk' }).x);
    const forged: Jwks = {
      keys: [{ kty: 'OKP', crv: 'Ed25519', x, kid: await real.registry.activeKid(), alg: 'EdDSA', use: 'sig', nbf: 0 }],
    };
    expect(computeKid({ crv: 'Ed25519', x })).not.toBe(await real.registry.activeKid());
    await rejectsWithCode(fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { jwks: forged }), 'UNKNOWN_KEY');
  });

  it('a corrupted signature is SIGNATURE_INVALID', async () => {
    fake.rewrite = (path, response) => {
      if (path !== attestationPath('1.2.0')) return response;
      const jws = jsonBody(response) as { signature: string };
      const middle = 20;
      const flipped = jws.signature[middle] === 'A' ? 'B' : 'A';
      return withJson(response, {
        ...jws,
        signature: jws.signature.slice(0, middle) + flipped + jws.signature.slice(middle + 1),
      });
    };
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real)), 'SIGNATURE_INVALID');
  });

  it('a statement changed under the original signature is SIGNATURE_INVALID', async () => {
    fake.rewrite = (path, response) => {
      if (path !== attestationPath('1.2.0')) return response;
      const jws = jsonBody(response) as { payload: string };
      const statement = JSON.parse(Buffer.from(jws.payload, 'base64url').toString('utf8')) as {
        predicate: { publisher: string };
      };
      statement.predicate.publisher = 'io.github.mallory';
      return withJson(response, { ...jws, payload: Buffer.from(JSON.stringify(statement)).toString('base64url') });
    };
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real)), 'SIGNATURE_INVALID');
  });

  it('a key whose validity window does not contain storedAt is KEY_NOT_VALID (nbf after, exp at or before)', async () => {
    const storedAtSeconds = Math.floor(Date.parse(payments.record.storedAt) / 1000);
    const key = selectUsableKeys(await real.registry.jwks()).jwks.keys.find((k) => k.kid === payments.record.kid)!;
    const later: JwksKey = { ...key, nbf: storedAtSeconds + 3600 };
    await rejectsWithCode(fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { jwks: { keys: [later] } }), 'KEY_NOT_VALID');
    const expired: JwksKey = { ...key, nbf: storedAtSeconds - 3600, exp: storedAtSeconds };
    await rejectsWithCode(fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { jwks: { keys: [expired] } }), 'KEY_NOT_VALID');
    const { nbf: _nbf, ...noWindow } = key;
    await rejectsWithCode(
      fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { jwks: { keys: [noWindow as JwksKey] } }),
      'KEY_NOT_VALID',
    );
  });

  it('no inclusion proof (the binding is missing, or has none) is NOT_IN_LOG', async () => {
    fake.rewrite = (path, response) =>
      path.startsWith('/v1/attestations/')
        ? { ...response, status: 404, body: Buffer.from('{"code":"NOT_FOUND"}') }
        : response;
    const missing = await rejectsWithCode(
      fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real)),
      'NOT_IN_LOG',
    );
    expect(missing.message).toMatch(/no inclusion proof/);
    fake.rewrite = (path, response) => {
      if (!path.startsWith('/v1/attestations/')) return response;
      const body = jsonBody(response) as { bindings: Record<string, unknown>[] };
      return withJson(response, {
        ...body,
        bindings: body.bindings.map(({ inclusionProof: _dropped, ...rest }) => rest),
      });
    };
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real)), 'NOT_IN_LOG');
  });

  it('a wrong inclusion proof (a changed hash, another index, another size) is NOT_IN_LOG', async () => {
    const mutations: ((proof: { index: number; size: number; hashes: string[] }) => void)[] = [
      (proof) => {
        proof.hashes[0] = Buffer.alloc(32, 7).toString('base64');
      },
      (proof) => {
        proof.index += 1;
      },
      (proof) => {
        proof.size -= 1;
      },
      (proof) => {
        proof.hashes = proof.hashes.slice(1);
      },
    ];
    for (const mutate of mutations) {
      fake.rewrite = (path, response) => {
        if (!path.startsWith('/v1/attestations/')) return response;
        const body = jsonBody(response) as {
          bindings: { logIndex: number; inclusionProof: { index: number; size: number; hashes: string[] } }[];
        };
        for (const binding of body.bindings) {
          mutate(binding.inclusionProof);
          binding.logIndex = binding.inclusionProof.index;
        }
        return withJson(response, body);
      };
      await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real)), 'NOT_IN_LOG');
    }
  });

  it('a proof for another leaf than the claimed logIndex is NOT_IN_LOG', async () => {
    fake.rewrite = (path, response) => {
      if (!path.startsWith('/v1/attestations/')) return response;
      const body = jsonBody(response) as { bindings: { logIndex: number }[] };
      for (const binding of body.bindings) binding.logIndex += 1;
      return withJson(response, body);
    };
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real)), 'NOT_IN_LOG');
  });

  it('a checkpoint signed by another log key is NOT_IN_LOG (pinned log key; forged note with the same origin)', async () => {
    // 1. The genuine checkpoint, but the host pins another log's key.
    await rejectsWithCode(
      fetchVerified(real.url, `${PAYMENTS}@1.2.0`, {
        jwks: selectUsableKeys(await real.registry.jwks()).jwks,
        logKey: other.registry.log.verifierString,
      }),
      'NOT_IN_LOG',
    );
    // 2. The fake registry re-signs the genuine checkpoint text with its own key under the real origin, and serves
    //    that key as the log key: a host that pinned the real log key refuses it.
    const { privateKey } = generateEd25519KeyPair();
    const origin = real.registry.log.origin;
    fake.rewrite = (path, response) => {
      if (path === '/v1/log/key')
        return { ...response, body: Buffer.from(`${formatVerifierString(origin, privateKey)}\n`) };
      if (!path.startsWith('/v1/attestations/')) return response;
      const body = jsonBody(response) as { bindings: { inclusionProof: { checkpoint: string } }[] };
      for (const binding of body.bindings) {
        binding.inclusionProof.checkpoint = signNote(parseNote(binding.inclusionProof.checkpoint).body, {
          name: origin,
          privateKey,
        });
      }
      return withJson(response, body);
    };
    const forged = await rejectsWithCode(
      fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real)),
      'NOT_IN_LOG',
    );
    expect(forged.message).toMatch(/not signed by the log key/);
    // Trust on first use: with nothing pinned, a registry that controls both the note and the key is believed.
    // This is the documented limit of TOFU; the bytes and the attestation are still the genuine ones.
    await expect(
      fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, { jwks: selectUsableKeys(await real.registry.jwks()).jwks }),
    ).resolves.toMatchObject({
      digest: payments.record.digest,
    });
  });

  it('a checkpoint of another log (validly signed by its own key) is NOT_IN_LOG', async () => {
    const foreign = (await other.registry.latestCheckpoint())!.note;
    fake.rewrite = (path, response) => {
      if (!path.startsWith('/v1/attestations/')) return response;
      const body = jsonBody(response) as { bindings: { inclusionProof: { checkpoint: string } }[] };
      for (const binding of body.bindings) binding.inclusionProof.checkpoint = foreign;
      return withJson(response, body);
    };
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, await pinned(real)), 'NOT_IN_LOG');
  });

  it('bytes other than the pinned digest are PIN_MISMATCH, even though they are validly signed', async () => {
    const wrongPin = paymentsNext.record.digest as Sha256Digest;
    await rejectsWithCode(fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { expectedDigest: wrongPin }), 'PIN_MISMATCH');
    await rejectsWithCode(fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { lock: { digest: wrongPin } }), 'PIN_MISMATCH');
    // Another registry that signs different bytes under the same name@version: all its evidence is valid.
    await expect(fetchVerified(other.url, `${PAYMENTS}@1.2.0`)).resolves.toBeDefined();
    await rejectsWithCode(
      fetchVerified(other.url, `${PAYMENTS}@1.2.0`, { expectedDigest: payments.record.digest as Sha256Digest }),
      'PIN_MISMATCH',
    );
  });
});

describe('fetchVerified: transport limits', () => {
  it('a response over the size limit is FETCH_FAILED', async () => {
    const error = await rejectsWithCode(
      fetchVerified(real.url, `${PAYMENTS}@1.2.0`, { maxResponseBytes: 512 }),
      'FETCH_FAILED',
    );
    expect(error.message).toMatch(/limit/);
    // Without a Content-Length the streamed body is still cut off at the limit.
    fake.rewrite = (path, response) =>
      path === manifestPath('1.2.0') ? { ...response, body: Buffer.alloc(4096, 0x20) } : response;
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, { maxResponseBytes: 1024 }), 'FETCH_FAILED');
  });

  it('a registry that never answers is FETCH_FAILED after the timeout', async () => {
    fake.rewrite = (path, response) => (path === manifestPath('1.2.0') ? 'hang' : response);
    const started = Date.now();
    const error = await rejectsWithCode(
      fetchVerified(fake.url, `${PAYMENTS}@1.2.0`, { timeoutMs: 300 }),
      'FETCH_FAILED',
    );
    expect(error.message).toMatch(/300 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('an unreachable registry is FETCH_FAILED; an unknown version is NOT_FOUND; a server error is FETCH_FAILED', async () => {
    await rejectsWithCode(
      fetchVerified('http://127.0.0.1:9', `${PAYMENTS}@1.2.0`, { timeoutMs: 2000 }),
      'FETCH_FAILED',
    );
    await rejectsWithCode(fetchVerified(real.url, `${PAYMENTS}@9.9.9`), 'NOT_FOUND');
    fake.rewrite = (path, response) =>
      path === manifestPath('1.2.0')
        ? { ...response, status: 500, body: Buffer.from('{"code":"SIGNATURE_INVALID"}') }
        : response;
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`), 'FETCH_FAILED');
  });

  it('a redirect is not followed (FETCH_FAILED)', async () => {
    fake.rewrite = (path, response) =>
      path === manifestPath('1.2.0')
        ? { status: 302, headers: { location: `${real.url}${manifestPath('1.3.0')}` }, body: Buffer.alloc(0) }
        : response;
    await rejectsWithCode(fetchVerified(fake.url, `${PAYMENTS}@1.2.0`), 'FETCH_FAILED');
  });

  it('references must be name@exact-version or sha256:<hex>', async () => {
    expect(parseManifestRef(`${PAYMENTS}@1.2.0`)).toEqual({ kind: 'version', name: PAYMENTS, version: '1.2.0' });
    expect(parseManifestRef(`sha256:${'a'.repeat(64)}`)).toEqual({
      kind: 'digest',
      digest: `sha256:${'a'.repeat(64)}`,
    });
    for (const bad of [
      `${PAYMENTS}@latest`,
      `${PAYMENTS}@^1.2.0`,
      PAYMENTS,
      'payments@1.2.0',
      `sha256:${'A'.repeat(64)}`,
      `${PAYMENTS}@1.2`,
    ]) {
      throwsWithCode(() => parseManifestRef(bad), 'BAD_REQUEST');
    }
  });
});

describe('verifyFetched: pure checks on in-memory inputs', () => {
  let realJwks: Jwks;
  beforeAll(async () => {
    realJwks = selectUsableKeys(await real.registry.jwks()).jwks;
  });

  function inputs(): VerifyFetchedInput {
    return {
      bytes: paymentsBytes,
      attestation: new Uint8Array(payments.record.attestation),
      inclusion: {
        index: payments.inclusion.index,
        size: payments.inclusion.size,
        hashes: payments.inclusion.hashes,
        checkpoint: payments.inclusion.checkpoint,
      },
      jwks: realJwks,
      logKey: real.registry.log.verifierString,
      expected: { name: PAYMENTS, version: '1.2.0' },
    };
  }

  it('passes on genuine inputs, with the inclusion as an object or as a C2SP tlog-proof text', async () => {
    const result = verifyFetched(inputs());
    expect(result.digest).toBe(payments.record.digest);
    const text = formatTlogProof({
      index: payments.inclusion.index,
      proof: payments.inclusion.hashes.map((hash) => new Uint8Array(Buffer.from(hash, 'base64'))),
      checkpoint: payments.inclusion.checkpoint,
    });
    expect(verifyFetched({ ...inputs(), inclusion: text }).logIndex).toBe(payments.inclusion.index);
  });

  it('recomputes the digest: an attestation for other bytes is DIGEST_MISMATCH; the pin is checked first', async () => {
    const bytes = canonicalOf(manifestVariant('payments', { description: 'changed' }));
    throwsWithCode(() => verifyFetched({ ...inputs(), bytes }), 'DIGEST_MISMATCH');
    throwsWithCode(
      () =>
        verifyFetched({
          ...inputs(),
          bytes,
          expected: { ...inputs().expected, digest: payments.record.digest as Sha256Digest },
        }),
      'PIN_MISMATCH',
    );
  });

  it('the subject must be the name@version asked for', async () => {
    throwsWithCode(
      () => verifyFetched({ ...inputs(), expected: { name: PAYMENTS, version: '1.3.0' } }),
      'SUBJECT_MISMATCH',
    );
    throwsWithCode(
      () => verifyFetched({ ...inputs(), expected: { name: 'io.github.acme/contacts', version: '1.2.0' } }),
      'SUBJECT_MISMATCH',
    );
  });

  it('a missing inclusion, or a checkpoint whose body was altered, is NOT_IN_LOG', async () => {
    throwsWithCode(() => verifyFetched({ ...inputs(), inclusion: undefined }), 'NOT_IN_LOG');
    const note = payments.inclusion.checkpoint;
    const body = bodyOf(note);
    const altered = note.replace(
      body,
      body.replace(/\n(\d+)\n/, (_m, size: string) => `\n${Number(size) + 1}\n`),
    );
    throwsWithCode(
      () =>
        verifyFetched({
          ...inputs(),
          inclusion: { ...(inputs().inclusion as object as { index: number; hashes: string[] }), checkpoint: altered },
        }),
      'NOT_IN_LOG',
    );
  });

  it('a malformed pinned log key is the caller error BAD_REQUEST', async () => {
    throwsWithCode(() => verifyFetched({ ...inputs(), logKey: 'not-a-verifier' }), 'BAD_REQUEST');
  });
});

// Key rotation: the old key is retired (kept in the JWKS with exp), old attestations still verify, new publishes
// use the new kid, and keys are judged by the attestation's storedAt, not by the time of verification.

import { afterAll, describe, expect, it } from 'vitest';
import {
  buildPublishStatement,
  selectUsableKeys,
  signStatement,
  verifyAttestation,
  type Jwks,
} from '../../src/attest/index.ts';
import { ToolsealError } from '../../src/core/errors.ts';
import { openRegistry } from '../../src/registry/index.ts';
import {
  bodyBytes,
  cleanupTempDirs,
  createTestEnv,
  digestOfBytes,
  manifestBytes,
  postManifest,
} from '../helpers/registry-helpers.ts';
import { loadSigningKey } from '../../src/keys/key-files.ts';
import { openStore } from '../../src/store/sqlite/index.ts';

afterAll(cleanupTempDirs);

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

function fakeClock(): { clock: () => Date; set(ms: number): void } {
  let now = T0;
  return { clock: () => new Date(now), set: (ms) => (now = ms) };
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolsealError);
  expect((error as ToolsealError).code).toBe(code);
}

describe('registry.rotateSigningKey()', () => {
  it('retires the old key with exp, activates a new kid, logs the rotation; old and new attestations verify with the JWKS', async () => {
    const time = fakeClock();
    const env = await createTestEnv({ onDisk: true, clock: time.clock });
    const oldKid = await env.registry.activeKid();

    time.set(T0 + 500);
    expect((await postManifest(env.app, manifestBytes({ version: '1.0.0' }), env.token)).status).toBe(201);
    const logSizeBefore = await env.store.getLogSize();

    time.set(T0 + 10_250);
    const result = await env.registry.rotateSigningKey();
    expect(result.retired).toBe(oldKid);
    expect(result.active).not.toBe(oldKid);
    expect(await env.registry.activeKid()).toBe(result.active);

    // The rotation is a 'key' leaf in the log, naming the retired key and its end.
    const [entry] = await env.store.readLogEntries(logSizeBefore, logSizeBefore + 1);
    expect(entry!.kind).toBe('key');
    expect(JSON.parse(entry!.data.toString('utf8'))).toMatchObject({
      type: 'toolseal.key/v1',
      kid: result.active,
      notBefore: (T0 + 10_000) / 1000,
      retires: { kid: oldKid, notAfter: (T0 + 11_000) / 1000 },
    });
    expect((await env.store.latestCheckpoint())!.size).toBe(logSizeBefore + 1);

    time.set(T0 + 20_000);
    expect((await postManifest(env.app, manifestBytes({ version: '1.1.0' }), env.token)).status).toBe(201);
    expect((await env.store.getVersion('io.github.acme/widgets', '1.0.0'))!.kid).toBe(oldKid);
    expect((await env.store.getVersion('io.github.acme/widgets', '1.1.0'))!.kid).toBe(result.active);

    const jwks = (await (await env.app.request('/.well-known/jwks.json')).json()) as Jwks;
    expect(jwks.keys.map((key) => [key.kid, key.nbf, key.exp])).toEqual([
      [oldKid, T0 / 1000, (T0 + 11_000) / 1000],
      [result.active, (T0 + 10_000) / 1000, undefined],
      // The Sigstore bundle key rotated with it (issue 26): the old one valid through the rotation's second, the new
      // one from the next (windows adjoin).
      [result.bundle.retired, T0 / 1000, (T0 + 11_000) / 1000],
      [result.bundle.active, (T0 + 11_000) / 1000, undefined],
    ]);
    const health = (await (await env.app.request('/healthz')).json()) as { activeKid: string };
    expect(health.activeKid).toBe(result.active);

    for (const [version, kid] of [
      ['1.0.0', oldKid],
      ['1.1.0', result.active],
    ] as const) {
      const bytes = await bodyBytes(await env.app.request(`/v1/manifests/io.github.acme/widgets/${version}`));
      const attestation = await bodyBytes(
        await env.app.request(`/v1/manifests/io.github.acme/widgets/${version}/attestation`),
      );
      const verified = await verifyAttestation(attestation, jwks, {
        name: 'io.github.acme/widgets',
        version,
        digest: digestOfBytes(bytes),
      });
      expect(verified.kid).toBe(kid);
    }

    // Keys are judged by the attestation's storedAt: the retired key signing "after" its exp is refused,
    // the new key signing "before" its nbf is refused, whatever the time of verification.
    const oldKey = loadSigningKey(env.keysDir, oldKid);
    const newKey = loadSigningKey(env.keysDir, result.active);
    const statementAt = (storedAt: number) =>
      buildPublishStatement({
        name: 'io.github.acme/widgets',
        version: '9.0.0',
        digest: `sha256:${'ab'.repeat(32)}`,
        predicate: {
          registry: env.registry.origin,
          publisher: 'io.github.acme',
          storedAt: new Date(storedAt).toISOString(),
          policy: 'toolseal-pipeline/v1',
          size: 1,
          previousDigest: null,
        },
      });
    await expectCode(verifyAttestation(signStatement(statementAt(T0 + 11_000), oldKey), jwks), 'KEY_NOT_VALID');
    await verifyAttestation(signStatement(statementAt(T0 + 10_999), oldKey), jwks);
    await expectCode(verifyAttestation(signStatement(statementAt(T0 + 9_999), newKey), jwks), 'KEY_NOT_VALID');
    await verifyAttestation(signStatement(statementAt(T0 + 10_000), newKey), jwks);
    await env.close();
  });

  it('a registry re-opened on the same data and keys signs with the rotated key; one that shares the store reports and signs with it at once', async () => {
    const env = await createTestEnv({ onDisk: true });
    expect((await postManifest(env.app, manifestBytes({ version: '1.0.0' }), env.token)).status).toBe(201);
    // Another process (e.g. `toolseal keys rotate`) rotates through its own connection.
    const otherStore = openStore({ dataDir: env.dataDir });
    const other = await openRegistry({ store: otherStore, keysDir: env.keysDir, origin: 'http://127.0.0.1:1' });
    const { active } = await other.rotateSigningKey();
    await otherStore.close();
    expect(await env.registry.activeKid()).toBe(active);
    expect((await postManifest(env.app, manifestBytes({ version: '1.1.0' }), env.token)).status).toBe(201);
    expect((await env.store.getVersion('io.github.acme/widgets', '1.1.0'))!.kid).toBe(active);
    expect(await env.registry.activeKid()).toBe(active);
    await env.close();

    const reopenedStore = openStore({ dataDir: env.dataDir });
    const reopened = await openRegistry({ store: reopenedStore, keysDir: env.keysDir, origin: 'http://127.0.0.1:1' });
    expect(await reopened.activeKid()).toBe(active);
    expect(selectUsableKeys(await reopened.jwks()).jwks.keys).toHaveLength(2);
    for (const version of ['1.0.0', '1.1.0']) {
      const record = await reopened.getVersionRecord('io.github.acme/widgets', version);
      await verifyAttestation(record.attestation, selectUsableKeys(await reopened.jwks()).jwks, {
        name: record.name,
        version,
        digest: record.digest as `sha256:${string}`,
      });
    }
    await reopenedStore.close();
  });

  it('rotating twice keeps every key in the JWKS with its window, and each attestation verifies under its own key', async () => {
    const time = fakeClock();
    const env = await createTestEnv({ clock: time.clock });
    const kids = [await env.registry.activeKid()];
    for (let i = 0; i < 3; i++) {
      time.set(T0 + i * 5_000 + 100);
      expect((await postManifest(env.app, manifestBytes({ version: `1.${i}.0` }), env.token)).status).toBe(201);
      time.set(T0 + i * 5_000 + 2_000);
      if (i < 2) kids.push((await env.registry.rotateSigningKey()).active);
    }
    const { jwks } = selectUsableKeys(await env.registry.jwks());
    expect(jwks.keys.map((key) => key.kid)).toEqual(kids);
    expect(jwks.keys.filter((key) => key.exp === undefined).map((key) => key.kid)).toEqual([kids[2]]);
    for (let i = 0; i < 3; i++) {
      const record = (await env.store.getVersion('io.github.acme/widgets', `1.${i}.0`))!;
      const verified = await verifyAttestation(record.attestation, jwks, {
        digest: record.digest as `sha256:${string}`,
      });
      expect(verified.kid).toBe(kids[i]);
    }
    await env.close();
  });
});

// The mirror's Sigstore bundles (issue 26 §1, src/mirror/mirror-bundles.ts): a bundle the registry serves altered (its
// signature, another version's bundle, its proof, its logged body) is refused with its code and not written, and the
// run stops before its checkpoint and state; the next honest run writes it. A bundle the registry backfills for a
// version mirrored earlier (the registry restarted on a database without bundle rows) is found by its leaf's digest
// and copied by the next run.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SigstoreBundleJson } from '../../src/attest/index.ts';
import { mirrorRegistry } from '../../src/mirror/mirror-registry.ts';
import { bundlePath, versionPath } from '../../src/protocol/routes.ts';
import type { PublisherRecord } from '../../src/registry/index.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { sqliteDatabaseOf } from '../../src/store/sqlite/index.ts';
import { verifyBundle } from '../../src/verify/index.ts';
import { makeFolder, removeFolders } from '../cli/cli-helpers.ts';
import { manifestBytes } from '../helpers/registry-helpers.ts';

const NAME = 'io.github.acme/widgets';
const BUNDLE_FILE = (version: string) => `v1/manifests/io.github.acme/widgets/${version}/bundle`;

let root: string;
let server: RunningRegistryServer;
let acme: PublisherRecord;

async function start(port = 0): Promise<RunningRegistryServer> {
  return await startRegistryServer({
    dataDir: join(root, 'data'),
    keysDir: join(root, 'keys'),
    origin: 'http://127.0.0.1',
    port,
    app: { onUnexpectedError: () => {} },
  });
}

beforeAll(async () => {
  root = makeFolder('toolseal-mirror-bundles-');
  server = await start();
  acme = (await server.registry.createPublisher('io.github.acme')).publisher;
  for (const version of ['1.0.0', '1.1.0']) await server.registry.publish(manifestBytes({ version }), acme);
}, 120_000);

afterAll(async () => {
  await server?.close();
  removeFolders();
});

/** A fetch that passes everything on but the bundle of 1.1.0, whose served JSON `change` rewrites. */
function alteringBundle(change: (bundle: SigstoreBundleJson, other: SigstoreBundleJson) => SigstoreBundleJson) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    if (!String(input).endsWith(bundlePath(NAME, '1.1.0'))) return response;
    const other = (await (await fetch(`${server.url}${bundlePath(NAME, '1.0.0')}`)).json()) as SigstoreBundleJson;
    const body = JSON.stringify(change((await response.json()) as SigstoreBundleJson, other));
    return new Response(body, {
      status: 200,
      headers: { 'Content-Type': 'application/vnd.dev.sigstore.bundle.v0.3+json' },
    });
  };
}

async function readBundleFile(out: string, version: string): Promise<Buffer> {
  return await readFile(join(out, BUNDLE_FILE(version)));
}

async function expectVerifies(out: string, version: string, registry = server): Promise<void> {
  const verified = verifyBundle({
    bytes: await readFile(join(out, 'v1/manifests/io.github.acme/widgets', version, 'index.json')),
    bundle: await readBundleFile(out, version),
    bundleKeys: await registry.registry.jwks(),
    logKey: registry.registry.log.verifierString,
    expected: { name: NAME, version },
  });
  expect(verified.version).toBe(version);
}

describe('the mirror refuses a bundle that does not verify', () => {
  const cases: [string, (bundle: SigstoreBundleJson, other: SigstoreBundleJson) => SigstoreBundleJson, string][] = [
    [
      'an altered signature',
      (bundle) => {
        const signature = Buffer.from(bundle.dsseEnvelope.signatures[0].sig, 'base64');
        signature[12] = (signature[12] ?? 0) ^ 1;
        bundle.dsseEnvelope.signatures[0].sig = signature.toString('base64');
        return bundle;
      },
      'SIGNATURE_INVALID',
    ],
    ['another version’s bundle', (_bundle, other) => other, 'SUBJECT_MISMATCH'],
    [
      'an altered inclusion proof',
      (bundle) => {
        bundle.verificationMaterial.tlogEntries[0].inclusionProof.hashes[0] = Buffer.alloc(32, 9).toString('base64');
        return bundle;
      },
      'NOT_IN_LOG',
    ],
    [
      // verifyBundle compares the served body with the leaf it rebuilds (the mirror then also checks it is the
      // mirrored tree's leaf at its index before proving it against its own checkpoint).
      'another logged body than the one its signature rebuilds',
      (bundle, other) => {
        bundle.verificationMaterial.tlogEntries[0].canonicalizedBody =
          other.verificationMaterial.tlogEntries[0].canonicalizedBody;
        return bundle;
      },
      'SIGNATURE_INVALID',
    ],
  ];

  for (const [what, change, code] of cases) {
    it(`${what}: ${code}, not written, no checkpoint or state; the next run writes the genuine one`, async () => {
      const out = join(makeFolder('toolseal-mirror-bad-bundle-'), 'mirror');
      const run = mirrorRegistry({ registry: server.url, out, fetch: alteringBundle(change) });
      await expect(run).rejects.toMatchObject({
        code,
        message: expect.stringMatching(/^the bundle of io\.github\.acme\/widgets@1\.1\.0 (is refused: )?/),
      });
      expect(existsSync(join(out, BUNDLE_FILE('1.1.0')))).toBe(false);
      expect(existsSync(join(out, 'v1/log/checkpoint'))).toBe(false);
      expect(existsSync(join(out, '.toolseal-mirror.json'))).toBe(false);
      const honest = await mirrorRegistry({ registry: server.url, out });
      expect(honest.written).toContain(BUNDLE_FILE('1.1.0'));
      await expectVerifies(out, '1.1.0');
    }, 120_000);
  }
});

describe('a bundle the registry backfills after its version was mirrored', () => {
  it('is found by its leaf and copied by the next run; the versions without one get none until then', async () => {
    const out = join(makeFolder('toolseal-mirror-backfill-'), 'mirror');
    // As a database from before issue 26: the version has no bundle row (its leaf stays: the log is append-only).
    await server.registry.publish(manifestBytes({ version: '1.2.0' }), acme);
    const db = sqliteDatabaseOf(server.store);
    const versionId = (await server.store.getVersion(NAME, '1.2.0'))!.id;
    db.exec('DROP TRIGGER IF EXISTS version_bundles_no_delete');
    db.prepare('DELETE FROM version_bundles WHERE version_id = ?').run(versionId);
    expect((await fetch(`${server.url}${bundlePath(NAME, '1.2.0')}`)).status).toBe(404);

    const first = await mirrorRegistry({ registry: server.url, out });
    expect(first).toMatchObject({ entries: { attestation: 3, bundle: 3 }, bundles: 2 });
    expect(existsSync(join(out, BUNDLE_FILE('1.2.0')))).toBe(false);
    const kept = await readBundleFile(out, '1.0.0');

    // The registry restarts (same port, same data): it backfills 1.2.0's bundle as a new leaf.
    const port = server.port;
    await server.close();
    await new Promise((resolve) => setTimeout(resolve, 200)); // clients notice their closed keep-alive sockets
    server = await start(port);
    expect((await fetch(`${server.url}${bundlePath(NAME, '1.2.0')}`)).status).toBe(200);
    const fetched: string[] = [];
    const second = await mirrorRegistry({
      registry: server.url,
      out,
      fetch: (input, init) => {
        fetched.push(new URL(String(input)).pathname);
        return fetch(input, init);
      },
    });
    expect(second).toMatchObject({ entries: { attestation: 0, bundle: 1 }, bundles: 1 });
    expect(second.written).toContain(BUNDLE_FILE('1.2.0'));
    expect(fetched.filter((path) => path.endsWith('/bundle'))).toEqual([bundlePath(NAME, '1.2.0')]);
    expect(fetched).not.toContain(versionPath(NAME, '1.2.0'));
    await expectVerifies(out, '1.2.0');
    // The bundles mirrored before are kept as they were (their proof against the older checkpoint stays valid).
    expect((await readBundleFile(out, '1.0.0')).equals(kept)).toBe(true);
    await expectVerifies(out, '1.0.0');
  }, 120_000);
});

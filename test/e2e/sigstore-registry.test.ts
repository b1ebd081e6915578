// Issue 26 end to end: a real registry (its writer thread committing publishes) signs a Sigstore bundle for every
// version it publishes; each bundle and the trusted root are fetched over HTTP and verified by the real
// @sigstore/verify (on Node ≥ 22: test/helpers/node22.ts) with tlog threshold 1 and no timestamp authority: every
// example, a yanked version, bundles signed before and after `keys rotate`; altered ones, and one checked against
// another registry's trusted root, are refused; `toolseal get --bundle` against the registry writes a bundle the same
// verifier accepts.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BundleKeyValidity,
  buildBundleKeyring,
  type PublicKeyJson,
  SIGSTORE_BUNDLE_MEDIA_TYPE,
  type SigstoreBundleJson,
  TRUSTED_ROOT_MEDIA_TYPE,
  type TrustedRootJson,
} from '../../src/attest/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { bundlePath } from '../../src/protocol/routes.ts';
import { type RunningRegistryServer, seedDevRegistry, startRegistryServer } from '../../src/server/index.ts';
import { copyJson, runSigstoreVerifyAll, type SigstoreCase } from '../attest/sigstore-fixture.ts';
import { jsonLine, makeFolder, removeFolders, toolseal } from '../cli/cli-helpers.ts';
import { cleanupTempDirs, makeTempDir, repoRoot } from '../helpers/registry-helpers.ts';

const examplesDir = join(repoRoot, 'manifests');
const examples = readdirSync(examplesDir)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .map((file) => runPipeline(readFileSync(join(examplesDir, file))));

let registry: RunningRegistryServer;
let other: RunningRegistryServer;
let token: string;

async function startServer(pipelineWorkers: number): Promise<RunningRegistryServer> {
  const root = makeTempDir();
  return await startRegistryServer({
    dataDir: join(root, 'data'),
    keysDir: join(root, 'keys'),
    port: 0,
    pipelineWorkers,
    app: { onUnexpectedError: (error) => console.error(error) },
  });
}

beforeAll(async () => {
  // One pipeline worker: publishes are signed and committed on the writer thread.
  registry = await startServer(1);
  other = await startServer(0);
  const seed = await seedDevRegistry(registry.registry, makeTempDir(), examplesDir);
  expect(
    seed.published.every((line) => line.startsWith('published ')),
    seed.published.join('\n'),
  ).toBe(true);
  token = seed.token!;
  await seedDevRegistry(other.registry, makeTempDir(), examplesDir);
}, 120_000);

afterAll(async () => {
  await registry?.close();
  await other?.close();
  cleanupTempDirs();
  removeFolders();
});

async function getJson<T>(server: RunningRegistryServer, path: string, type: string): Promise<T> {
  const response = await fetch(`${server.url}${path}`);
  expect(response.status, path).toBe(200);
  expect(response.headers.get('content-type')).toBe(type);
  return (await response.json()) as T;
}

/** The trusted root and, from the served JWKS, the bundle keys by hint with their windows (nbf/exp → validFor). */
async function trustOf(
  server: RunningRegistryServer,
): Promise<{ trustedRoot: TrustedRootJson; keys: Record<string, PublicKeyJson> }> {
  const trustedRoot = await getJson<TrustedRootJson>(server, '/v1/sigstore/trusted-root.json', TRUSTED_ROOT_MEDIA_TYPE);
  const jwks = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as {
    keys: Record<string, unknown>[];
  };
  const validities: BundleKeyValidity[] = jwks.keys
    .filter((key) => key['kty'] === 'EC')
    .map((key) => ({
      kid: key['kid'] as string,
      publicJwk: key as unknown as BundleKeyValidity['publicJwk'],
      notBefore: key['nbf'] as number,
      notAfter: (key['exp'] as number | undefined) ?? null,
    }));
  return { trustedRoot, keys: buildBundleKeyring(validities) };
}

const bundleOf = (server: RunningRegistryServer, name: string, version: string): Promise<SigstoreBundleJson> =>
  getJson<SigstoreBundleJson>(server, bundlePath(name, version), SIGSTORE_BUNDLE_MEDIA_TYPE);

describe('Sigstore bundles served by a running registry', () => {
  it('every example, a yanked version and versions signed before and after keys rotate verify with @sigstore/verify; altered ones do not', async () => {
    const [first, second] = examples;
    // A yanked version keeps its bundle.
    const yank = await fetch(`${registry.url}/v1/manifests/${first!.name}/${first!.version}/yank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'superseded' }),
    });
    expect(yank.status).toBe(200);
    const beforeRotation = await bundleOf(registry, second!.name, second!.version);
    const rotated = await registry.registry.rotateSigningKey();
    expect(rotated.bundle.retired).toBe(beforeRotation.verificationMaterial.publicKey.hint);
    // A version published once the new bundle key's window has begun (the next second) is signed by it.
    const { keys: served } = (await (await fetch(`${registry.url}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string; nbf: number }[];
    };
    const newFrom = served.find((key) => key.kid === rotated.bundle.active)!.nbf * 1000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, newFrom - Date.now() + 20)));
    const next = JSON.parse(Buffer.from(second!.canonicalBytes).toString('utf8')) as Record<string, unknown>;
    next['version'] = '99.0.0';
    const published = await fetch(`${registry.url}/v1/manifests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(next),
    });
    expect(published.status).toBe(201);
    // The publish answer and the attestation name the bundle.
    const bundleLink = `<${bundlePath(second!.name, '99.0.0')}>; rel="bundle"; type="${SIGSTORE_BUNDLE_MEDIA_TYPE}"`;
    expect(published.headers.get('link')).toBe(bundleLink);
    const attested = await fetch(`${registry.url}/v1/manifests/${second!.name}/99.0.0/attestation`);
    expect(attested.headers.get('link')).toBe(bundleLink);

    const trust = await trustOf(registry);
    expect(Object.keys(trust.keys)).toEqual([rotated.bundle.retired, rotated.bundle.active]);
    const genuine: SigstoreBundleJson[] = [];
    for (const example of examples) genuine.push(await bundleOf(registry, example.name, example.version));
    const after = await bundleOf(registry, second!.name, '99.0.0');
    expect(after.verificationMaterial.publicKey.hint).toBe(rotated.bundle.active);
    // The bundle signed before the rotation, served now: same envelope and promise, a newer checkpoint and proof.
    const sameBefore = genuine[1]!;
    expect(sameBefore.dsseEnvelope).toEqual(beforeRotation.dsseEnvelope);
    expect(Number(sameBefore.verificationMaterial.tlogEntries[0].inclusionProof.treeSize)).toBeGreaterThan(
      Number(beforeRotation.verificationMaterial.tlogEntries[0].inclusionProof.treeSize),
    );
    // The envelope carries exactly the statement the JWS attestation carries.
    const attestation = (await (
      await fetch(`${registry.url}/v1/manifests/${first!.name}/${first!.version}/attestation`)
    ).json()) as { payload: string };
    expect(Buffer.from(genuine[0]!.dsseEnvelope.payload, 'base64')).toEqual(
      Buffer.from(attestation.payload, 'base64url'),
    );

    const altered = (change: (bundle: SigstoreBundleJson) => void): SigstoreBundleJson => {
      const copy = copyJson(genuine[0]!);
      change(copy);
      return copy;
    };
    const entryOf = (bundle: SigstoreBundleJson) => bundle.verificationMaterial.tlogEntries[0];
    const flip = (base64: string): string => {
      const bytes = Buffer.from(base64, 'base64');
      bytes[bytes.length - 1]! ^= 1;
      return bytes.toString('base64');
    };
    const cases: SigstoreCase[] = [
      ...[...genuine, beforeRotation, after].map((bundle) => ({ bundle, ...trust })),
      // Altered payload, signature, proof and checkpoint.
      {
        bundle: altered((b) => {
          const text = Buffer.from(b.dsseEnvelope.payload, 'base64').toString('utf8');
          b.dsseEnvelope.payload = Buffer.from(text.replace('"io.github.acme"', '"io.github.evil"')).toString('base64');
        }),
        ...trust,
      },
      { bundle: altered((b) => (b.dsseEnvelope.signatures[0].sig = flip(b.dsseEnvelope.signatures[0].sig))), ...trust },
      {
        bundle: altered((b) => (entryOf(b).inclusionProof.hashes[0] = flip(entryOf(b).inclusionProof.hashes[0]!))),
        ...trust,
      },
      {
        bundle: altered((b) => {
          const proof = entryOf(b).inclusionProof;
          proof.checkpoint.envelope = proof.checkpoint.envelope.replace(
            `\n${proof.treeSize}\n`,
            `\n${Number(proof.treeSize) + 1}\n`,
          );
        }),
        ...trust,
      },
      // The genuine bundle against another registry's trusted root and bundle keys.
      { bundle: genuine[0]!, ...(await trustOf(other)) },
    ];
    const verdicts = runSigstoreVerifyAll(cases);
    const genuineCount = genuine.length + 2;
    expect(verdicts.slice(0, genuineCount)).toEqual(Array.from({ length: genuineCount }, () => ({ ok: true })));
    for (const [i, verdict] of verdicts.slice(genuineCount).entries())
      expect(verdict.ok, `altered case ${i}`).toBe(false);
  }, 180_000);

  it('an unknown version has no bundle (problem+json NOT_FOUND, as the manifest route)', async () => {
    const response = await fetch(`${registry.url}${bundlePath(examples[0]!.name, '0.0.0-nope')}`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await response.json()) as { code: string }).code).toBe('NOT_FOUND');
    const post = await fetch(`${registry.url}/v1/sigstore/trusted-root.json`, { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('toolseal get --bundle against the registry writes a bundle @sigstore/verify accepts', async () => {
    const cwd = makeFolder();
    const example = examples[examples.length - 1]!;
    const ref = `${example.name}@${example.version}`;
    const run = await toolseal(['get', ref, '--registry', registry.url, '-o', 'm.json', '--bundle', 'b.json'], { cwd });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(jsonLine(run.stdout)).toMatchObject({ format: 'bundle', digest: example.digest });
    expect(readFileSync(join(cwd, 'm.json'))).toEqual(Buffer.from(example.canonicalBytes));
    const [verdict] = runSigstoreVerifyAll([
      { bundle: JSON.parse(readFileSync(join(cwd, 'b.json'), 'utf8')), ...(await trustOf(registry)) },
    ]);
    expect(verdict).toEqual({ ok: true });
  }, 60_000);
});

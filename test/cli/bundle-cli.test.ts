// `toolseal get --bundle` and `toolseal verify --bundle` (issue 26) end to end: bundle keys made by src/keys, a log
// holding the attestation and the bundle leaf, a bundle assembled by our functions and served by a small HTTP server
// on the route the issue names (the registry does not serve it yet); the file `get --bundle` writes is then checked by
// the real @sigstore/verify against the trusted root built from the same keys and log origin.

import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assembleBundle,
  buildBundleJwksKeys,
  buildJwks,
  buildPublishStatement,
  buildRegistryTrustMaterial,
  createSigningKey,
  deriveLogOrigin,
  exportSpkiPem,
  serializeStatementJcs,
  signBundleEntry,
  signInclusionPromise,
  signStatement,
} from '../../src/attest/index.ts';
import { loadOrCreateBundleKeys, rotateBundleKey } from '../../src/keys/bundle-key-files.ts';
import {
  computeRootHash,
  createMemoryNodeStore,
  formatVerifierString,
  generateInclusionProof,
  hashLeaf,
  signCheckpoint,
} from '../../src/log/index.ts';
import { bundlePath, ROUTES, versionPath } from '../../src/protocol/routes.ts';
import { manifestBytes, NAME, published, runSigstoreVerify, VERSION } from '../attest/sigstore-fixture.ts';
import { jsonLine, makeFolder, removeFolders, toolseal } from './cli-helpers.ts';

const now = Math.floor(Date.now() / 1000);
let server: Server;
let registry: string;
/** What the fixture server answers, by path; the bundle route can be swapped for an altered bundle. */
const routes = new Map<string, Uint8Array | string>();
let trust: ReturnType<typeof buildRegistryTrustMaterial>;
let genuineBundle: string;
let logVerifier: string;
let servedJwks: string;
let bundleKid: string;
let bundlePem: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const body = routes.get(request.url ?? '');
    if (body === undefined) {
      response.writeHead(404, { 'content-type': 'application/problem+json' });
      response.end('{"type":"about:blank","title":"Not Found","status":404,"code":"NOT_FOUND"}');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // The registry's keys: the log key and the P-256 bundle keys in a keys folder, rotated once (the bundle is signed
  // by the second key; the first stays published with its end).
  const keysDir = makeFolder('toolseal-bundle-keys-');
  loadOrCreateBundleKeys(keysDir, now - 7200);
  rotateBundleKey(keysDir, now - 3600);
  const { active: bundleKey, keys: bundleKeys } = loadOrCreateBundleKeys(keysDir, now);
  bundleKid = bundleKey.kid;
  bundlePem = exportSpkiPem(bundleKey.publicKey);
  const jwsKey = createSigningKey();
  const logKey = createSigningKey();
  const origin = deriveLogOrigin(registry);

  // A publish: the attestation leaf and, right after it, the bundle leaf of the same statement.
  const statement = buildPublishStatement({
    name: NAME,
    version: VERSION,
    digest: published.digest,
    predicate: {
      registry,
      publisher: 'io.github.acme',
      storedAt: new Date(now * 1000).toISOString(),
      policy: 'p',
      size: published.size,
      previousDigest: null,
    },
  });
  const entry = signBundleEntry(Buffer.from(serializeStatementJcs(statement), 'utf8'), bundleKey);
  const store = createMemoryNodeStore();
  store.append(hashLeaf(Buffer.from('an earlier entry')));
  store.append(hashLeaf(signStatement(statement, jwsKey)));
  const logIndex = store.append(hashLeaf(entry.leaf));
  const signer = { name: origin, privateKey: logKey.privateKey };
  const head = { origin, size: store.size, rootHash: computeRootHash(store, store.size) };
  const checkpoint = signCheckpoint(head, signer, undefined, []);
  const bundle = assembleBundle({
    entry,
    kid: bundleKey.kid,
    log: { origin, publicKey: logKey.publicKey },
    logIndex,
    integratedTime: now,
    promise: signInclusionPromise(entry.leaf, now, logIndex, signer),
    proof: generateInclusionProof(store, logIndex, store.size),
    checkpoint,
  });
  genuineBundle = JSON.stringify(bundle);
  logVerifier = formatVerifierString(origin, logKey.publicKey);
  servedJwks = JSON.stringify({
    keys: [
      ...buildJwks([{ kid: jwsKey.kid, publicJwk: jwsKey.publicJwk, notBefore: now - 7200, notAfter: null }]).keys,
      ...buildBundleJwksKeys(bundleKeys),
    ],
  });
  trust = buildRegistryTrustMaterial({
    publicUrl: registry,
    logOrigin: origin,
    logPublicKey: logKey.publicKey,
    logNotBefore: now - 7200,
    bundleKeys,
  });
  routes.set(versionPath(NAME, VERSION), manifestBytes);
  routes.set(bundlePath(NAME, VERSION), genuineBundle);
  routes.set(ROUTES.jwks, servedJwks);
  routes.set(ROUTES.logKey, `${logVerifier}\n`);
});

afterAll(async () => {
  removeFolders();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('toolseal get --bundle', () => {
  it('fetches, verifies and writes the bytes and the bundle; @sigstore/verify verifies the written bundle', async () => {
    const cwd = makeFolder();
    const run = await toolseal(
      ['get', `${NAME}@${VERSION}`, '--registry', registry, '-o', 'm.json', '--bundle', 'm.sigstore.json'],
      { cwd },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(jsonLine(run.stdout)).toMatchObject({
      written: 'm.json',
      bundle: 'm.sigstore.json',
      locked: false,
      format: 'bundle',
      name: NAME,
      version: VERSION,
      digest: published.digest,
      kid: bundleKid,
      integratedTime: now,
      logIndex: 2,
      checkpoint: { origin: '127.0.0.1', size: 3 },
      registry,
    });
    expect(readFileSync(join(cwd, 'm.json'))).toEqual(Buffer.from(manifestBytes));
    const written = readFileSync(join(cwd, 'm.sigstore.json'), 'utf8');
    expect(written).toBe(genuineBundle);
    const verdict = runSigstoreVerify({
      bundle: JSON.parse(written),
      trustedRoot: trust.trustedRoot,
      keys: trust.keyring,
    });
    expect(verdict).toEqual({ ok: true });
  });

  it('refuses an altered bundle from the registry and writes nothing', async () => {
    const cwd = makeFolder();
    const altered = JSON.parse(genuineBundle);
    const body = Buffer.from(altered.dsseEnvelope.payload, 'base64').toString('utf8');
    altered.dsseEnvelope.payload = Buffer.from(body.replace('io.github.acme"', 'io.github.evil"')).toString('base64');
    routes.set(bundlePath(NAME, VERSION), JSON.stringify(altered));
    try {
      const run = await toolseal(
        ['get', `${NAME}@${VERSION}`, '--registry', registry, '-o', 'm.json', '--bundle', 'm.sigstore.json'],
        { cwd },
      );
      expect(run.code).toBe(1);
      expect(jsonLine(run.stderr)).toEqual({
        code: 'SIGNATURE_INVALID',
        message: 'the DSSE signature does not verify with the bundle key',
      });
      expect(() => readFileSync(join(cwd, 'm.json'))).toThrow();
      expect(() => readFileSync(join(cwd, 'm.sigstore.json'))).toThrow();
    } finally {
      routes.set(bundlePath(NAME, VERSION), genuineBundle);
    }
  });
});

describe('toolseal verify --bundle', () => {
  it('verifies local files with pinned keys and no registry at all', async () => {
    const cwd = makeFolder();
    writeFileSync(join(cwd, 'm.json'), manifestBytes);
    writeFileSync(join(cwd, 'm.sigstore.json'), genuineBundle);
    writeFileSync(join(cwd, 'jwks.json'), servedJwks);
    const args = ['verify', `${NAME}@${VERSION}`, '--bundle', 'm.sigstore.json', '--manifest', 'm.json'];
    const run = await toolseal([...args, '--jwks', 'jwks.json', '--log-key', logVerifier], { cwd });
    expect(run.stderr).toBe('');
    expect(jsonLine(run.stdout)).toEqual({
      verified: true,
      format: 'bundle',
      name: NAME,
      version: VERSION,
      digest: published.digest,
      size: manifestBytes.byteLength,
      kid: bundleKid,
      storedAt: new Date(now * 1000).toISOString(),
      integratedTime: now,
      logIndex: 2,
      checkpoint: { origin: '127.0.0.1', size: 3 },
    });
  });

  it('fetches the bytes and keys it is not given, and refuses another version (SUBJECT_MISMATCH)', async () => {
    const cwd = makeFolder();
    writeFileSync(join(cwd, 'm.sigstore.json'), genuineBundle);
    const ok = await toolseal(['verify', `${NAME}@${VERSION}`, '--bundle', 'm.sigstore.json', '--registry', registry], {
      cwd,
    });
    expect(jsonLine(ok.stdout)).toMatchObject({ verified: true, registry, kid: bundleKid });
    routes.set(versionPath(NAME, '9.9.9'), manifestBytes);
    const other = await toolseal(['verify', `${NAME}@9.9.9`, '--bundle', 'm.sigstore.json', '--registry', registry], {
      cwd,
    });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('SUBJECT_MISMATCH');
  });

  it('refuses --bundle with --locked, and --manifest without --bundle (usage errors, exit 2)', async () => {
    const cwd = makeFolder();
    const locked = await toolseal(['verify', `${NAME}@${VERSION}`, '--bundle', 'b', '--locked'], { cwd });
    expect(locked.code).toBe(2);
    expect(locked.stderr).toContain('--bundle does not take --locked yet');
    const manifest = await toolseal(['verify', `${NAME}@${VERSION}`, '--manifest', 'm.json'], { cwd });
    expect(manifest.code).toBe(2);
    expect(manifest.stderr).toContain('--manifest FILE goes with --bundle FILE');
  });
});

describe('toolseal keys pem', () => {
  it('prints the PEM of the bundle key a bundle hints at, from the served JWKS; an unknown kid is UNKNOWN_KEY', async () => {
    const cwd = makeFolder();
    writeFileSync(join(cwd, 'jwks.json'), servedJwks);
    const run = await toolseal(['keys', 'pem', '--jwks', 'jwks.json', '--kid', bundleKid], { cwd });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(bundlePem);
    expect(run.stdout.startsWith('-----BEGIN PUBLIC KEY-----\n')).toBe(true);
    const hint = JSON.parse(genuineBundle).verificationMaterial.publicKey.hint;
    expect(hint).toBe(bundleKid);
    const unknown = await toolseal(['keys', 'pem', '--jwks', 'jwks.json', '--kid', 'x'.repeat(43)], { cwd });
    expect(unknown.code).toBe(1);
    expect(jsonLine(unknown.stderr)).toEqual({
      code: 'UNKNOWN_KEY',
      message: `the JWKS has no P-256 bundle key ${'x'.repeat(43)}`,
    });
  });
});

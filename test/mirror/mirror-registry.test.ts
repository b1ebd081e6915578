// toolseal mirror end to end (issue 16 §3): a registry started in process (versions published, one yanked, the
// signing key rotated), mirrored by the CLI into a folder served by a static server that answers as the nginx
// configuration of docs/deploy.md; then verify, get, pin, guard and audit against the mirror URL unchanged; a
// resumed run after more publishes (only new files), an interrupted run, and a tampered mirror that hosts refuse.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeDigest } from '../../src/core/digest.ts';
import { formatEntryBundlePath, formatTilePath } from '../../src/log/index.ts';
import { mirrorRegistry } from '../../src/mirror/mirror-registry.ts';
import {
  attestationPath,
  attestationsByDigestPath,
  blobPath,
  bundleByDigestPath,
  bundlePath,
  manifestPath,
  versionPath,
} from '../../src/protocol/routes.ts';
import type { PublisherRecord, Registry } from '../../src/registry/index.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { fetchVerified, verifyBundle } from '../../src/verify/index.ts';
import { cleanEnv, jsonLine, makeFolder, removeFolders, toolseal } from '../cli/cli-helpers.ts';
import { fixtureCommand, jsonLines, toolsealBin } from '../fixtures/guard-env.ts';
import { FIXTURE_MANIFEST_NAME, FIXTURE_NAMESPACE, fixtureTools } from '../fixtures/mcp-tools.ts';
import { initialize, manifestWithCapabilities, presentable, rawGuard, REF } from '../guard/guard-helpers.ts';
import { manifestBytes } from '../helpers/registry-helpers.ts';
import { type StaticServer, startStaticServer } from './static-server.ts';

const NAME = 'io.github.acme/widgets';
const ODD_VERSION = '2.0.0-rc.1+build.5'; // a `+` the URL percent-encodes and the file name keeps

let server: RunningRegistryServer;
let registry: Registry;
let acme: PublisherRecord;
let out: string;
let mirror: StaticServer;
let work: string;
let sizeAfterFirstRun: number;

async function publish(version: string): Promise<void> {
  await registry.publish(manifestBytes({ name: NAME, version, description: `widgets ${version}` }), acme);
}

beforeAll(async () => {
  const root = makeFolder('toolseal-mirror-');
  server = await startRegistryServer({
    dataDir: join(root, 'data'),
    keysDir: join(root, 'keys'),
    origin: 'http://127.0.0.1',
    port: 0,
    app: { onUnexpectedError: () => {} },
  });
  registry = server.registry;
  acme = (await registry.createPublisher('io.github.acme')).publisher;
  const fixture = (await registry.createPublisher(FIXTURE_NAMESPACE)).publisher;
  for (const version of ['1.0.0', '1.1.0', ODD_VERSION]) await publish(version);
  await registry.publish(Buffer.from(JSON.stringify(manifestWithCapabilities(fixtureTools))), fixture);
  await registry.yank(acme, NAME, '1.0.0', 'broken build');
  await registry.rotateSigningKey();
  await publish('1.2.0');
  out = join(root, 'mirror');
  work = makeFolder('toolseal-mirror-work-');
  const run = await toolseal(['mirror', '--registry', server.url, '--out', out], { cwd: work });
  expect(run.code, run.stderr).toBe(0);
  const printed = jsonLine(run.stdout);
  sizeAfterFirstRun = (await registry.latestCheckpoint())?.size ?? 0;
  expect(printed).toMatchObject({
    previousSize: 0,
    size: sizeAfterFirstRun,
    entries: { attestation: 5, yank: 1, bundle: 5, other: 2 }, // other: the two key leaves
    bundles: 5,
  });
  mirror = await startStaticServer(out);
}, 120_000);

afterAll(async () => {
  await mirror?.close();
  await server?.close();
  removeFolders();
});

async function get(base: string, path: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const response = await fetch(`${base}${path}`);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    bytes: Buffer.from(await response.arrayBuffer()),
  };
}

/** Every file under `dir` (relative path → sha256), without the mirror's own state. */
async function listFiles(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const name = relative(dir, path);
    if (name === '.toolseal-mirror.json') continue;
    files[name] = createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
  }
  return files;
}

function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a static mirror of the read API', () => {
  it('answers every read route with the registry’s exact bytes and content types', async () => {
    const size = sizeAfterFirstRun;
    const exact: [string, string][] = [
      [versionPath(NAME, '1.1.0'), 'application/json'],
      [versionPath(NAME, ODD_VERSION), 'application/json'],
      [attestationPath(NAME, '1.2.0'), 'application/jose+json'],
      ['/.well-known/jwks.json', 'application/json'],
      ['/v1/log/key', 'text/plain; charset=utf-8'],
      ['/v1/log/checkpoint', 'text/plain; charset=utf-8'],
      [`/v1/log/${formatEntryBundlePath(0, size)}`, 'application/octet-stream'],
      [`/v1/log/${formatTilePath(0, 0, size)}`, 'application/octet-stream'],
    ];
    for (const [path, type] of exact) {
      const [direct, mirrored] = [await get(server.url, path), await get(mirror.url, path)];
      expect(mirrored.status, path).toBe(200);
      expect(mirrored.type, path).toBe(type);
      expect(mirrored.bytes.equals(direct.bytes), path).toBe(true);
    }
    const bytes = (await get(server.url, versionPath(NAME, '1.1.0'))).bytes;
    expect((await get(mirror.url, blobPath(computeDigest(bytes)))).bytes.equals(bytes)).toBe(true);
    const listing = JSON.parse((await get(mirror.url, manifestPath(NAME))).bytes.toString('utf8'));
    expect(listing).toEqual(JSON.parse((await get(server.url, manifestPath(NAME))).bytes.toString('utf8')));
    expect(listing.versions.find((v: { version: string }) => v.version === '1.0.0')).toMatchObject({
      status: 'yanked',
      yankReason: 'broken build',
    });
    const index = JSON.parse((await get(mirror.url, '/v1/manifests')).bytes.toString('utf8'));
    expect(index.items.map((item: { name: string }) => item.name).sort()).toEqual([FIXTURE_MANIFEST_NAME, NAME]);
    const missing = await get(mirror.url, '/v1/log/proof/consistency?from=1&to=2');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.bytes.toString('utf8'))).toMatchObject({ code: 'NOT_FOUND' });
    expect((await get(mirror.url, '/.toolseal-mirror.json')).status).toBe(404);
  }, 120_000);

  it("serves each version's Sigstore bundle, proven against the mirror's checkpoint; fetchVerified checks it", async () => {
    const checkpoint = (await get(mirror.url, '/v1/log/checkpoint')).bytes.toString('utf8');
    const jwks = await registry.jwks();
    for (const version of ['1.0.0', '1.1.0', ODD_VERSION, '1.2.0']) {
      const path = bundlePath(NAME, version);
      const [direct, mirrored] = [await get(server.url, path), await get(mirror.url, path)];
      expect(mirrored.status, path).toBe(200);
      expect(mirrored.type).toBe('application/vnd.dev.sigstore.bundle.v0.3+json');
      const [ours, theirs] = [mirrored, direct].map((answer) => JSON.parse(answer.bytes.toString('utf8')));
      // The registry's bundle, but for its inclusion proof: against the mirror's own checkpoint of that run.
      const { inclusionProof, ...entry } = ours.verificationMaterial.tlogEntries[0];
      const { inclusionProof: _theirs, ...theirEntry } = theirs.verificationMaterial.tlogEntries[0];
      expect(entry).toEqual(theirEntry);
      expect(ours.dsseEnvelope).toEqual(theirs.dsseEnvelope);
      expect(inclusionProof.checkpoint.envelope).toBe(checkpoint);
      expect(inclusionProof.treeSize).toBe(String(sizeAfterFirstRun));
      const bytes = (await get(mirror.url, versionPath(NAME, version))).bytes;
      const verified = verifyBundle({
        bytes,
        bundle: mirrored.bytes,
        bundleKeys: jwks,
        logKey: registry.log.verifierString,
        expected: { name: NAME, version },
      });
      expect(verified.checkpoint.size).toBe(sizeAfterFirstRun);
    }
    const fetched = await fetchVerified(mirror.url, `${NAME}@1.2.0`, { format: 'bundle' });
    expect(fetched).toMatchObject({ format: 'bundle', name: NAME, version: '1.2.0', registry: mirror.url });
    // The by-digest route is not in the layout (a blob is a file, not a folder): the mirror's 404.
    expect((await get(mirror.url, bundleByDigestPath(fetched.digest))).status).toBe(404);
  }, 120_000);

  it('serves tiles and entry bundles gzip-compressed from .gz siblings when the client accepts it', async () => {
    const path = `/v1/log/${formatEntryBundlePath(0, sizeAfterFirstRun)}`;
    const plain = await readFile(join(out, path));
    expect(gunzipSync(await readFile(join(out, `${path}.gz`))).equals(plain)).toBe(true);
    const raw = await rawGet(`${mirror.url}${path}`, { 'Accept-Encoding': 'gzip' });
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(raw.body).equals(plain)).toBe(true);
  }, 120_000);

  it('verify, get and pin work against the mirror URL unchanged (a yanked version is refused by pin)', async () => {
    const verify = await toolseal(['verify', `${NAME}@1.2.0`, '--registry', mirror.url], { cwd: work });
    expect(verify.code, verify.stderr).toBe(0);
    const got = await toolseal(['get', `${NAME}@${ODD_VERSION}`, '--registry', mirror.url, '-o', 'odd.json'], {
      cwd: work,
    });
    expect(got.code, got.stderr).toBe(0);
    const direct = (await get(server.url, versionPath(NAME, ODD_VERSION))).bytes;
    expect((await readFile(join(work, 'odd.json'))).equals(direct)).toBe(true);
    // By digest too (the blob and the attestations-by-digest answer, its proof against the mirror's checkpoint).
    expect(await fetchVerified(mirror.url, computeDigest(direct))).toMatchObject({ name: NAME, version: ODD_VERSION });
    const yanked = await toolseal(['pin', `${NAME}@1.0.0`, '--registry', mirror.url], { cwd: work });
    expect(yanked.code).toBe(1);
    expect(jsonLine(yanked.stderr)).toMatchObject({ code: 'VERSION_YANKED' });
    for (const version of ['1.1.0', ODD_VERSION, '1.2.0']) {
      const pin = await toolseal(['pin', `${NAME}@${version}`, '--registry', mirror.url], { cwd: work });
      expect(pin.code, pin.stderr).toBe(0);
    }
  }, 120_000);

  it('guard verifies against the mirror and presents the signed tools', async () => {
    const session = rawGuard([
      toolsealBin,
      'guard',
      '--manifest',
      REF,
      '--registry',
      mirror.url,
      '--',
      ...fixtureCommand('faithful'),
    ]);
    session.send(initialize);
    await session.response(0);
    session.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const listed = JSON.parse(await session.response(1)) as { result: { tools: unknown[] } };
    const signed = (await get(server.url, versionPath(FIXTURE_MANIFEST_NAME, '1.0.0'))).bytes;
    expect(listed.result.tools).toEqual(presentable(signed));
    session.child.stdin.end();
    expect(await session.exit).toBe(0);
    expect(jsonLines(session.stderr())).toMatchObject([{ event: 'verified', digest: computeDigest(signed) }]);
  }, 120_000);

  it('audit walks the mirror’s log and remembers it', async () => {
    const audit = await toolseal(['audit', '--registry', mirror.url, '--state', 'audit.json', '--json'], { cwd: work });
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    expect(jsonLine(audit.stdout)).toMatchObject({ ok: true, consistency: 'first-audit' });
  }, 120_000);
});

describe('resuming, interrupting and tampering', () => {
  let copy: string;
  let secondRun: Awaited<ReturnType<typeof mirrorRegistry>>;

  it('a second run after more publishes fetches and writes only what is new', async () => {
    copy = join(makeFolder('toolseal-mirror-copy-'), 'mirror');
    await cp(out, copy, { recursive: true });
    await publish('1.3.0');
    await registry.yank(acme, NAME, '1.1.0', 'superseded');
    const oldVersionFile = join(out, 'v1/manifests/io.github.acme/widgets/1.2.0/index.json');
    const before = (await stat(oldVersionFile)).mtimeMs;
    const fetched: string[] = [];
    const counting: typeof fetch = (input, init) => {
      fetched.push(new URL(String(input)).pathname);
      return fetch(input, init);
    };
    secondRun = await mirrorRegistry({ registry: server.url, out, fetch: counting });
    expect(secondRun).toMatchObject({
      previousSize: sizeAfterFirstRun,
      entries: { attestation: 1, yank: 1, bundle: 1, other: 0 },
      bundles: 1,
    });
    // Only the new version's bytes and bundle were fetched; no version mirrored before was fetched or written again
    // (their bundles are kept).
    expect(fetched.filter((path) => path.startsWith(`${manifestPath(NAME)}/`))).toEqual([
      versionPath(NAME, '1.3.0'),
      bundlePath(NAME, '1.3.0'),
    ]);
    const written = secondRun.written;
    expect(written).toContain('v1/manifests/io.github.acme/widgets/1.3.0/index.json');
    expect(written).toContain('v1/manifests/io.github.acme/widgets/1.3.0/bundle');
    expect(written).toContain('v1/manifests/io.github.acme/widgets/index.json');
    expect(written).toContain('v1/log/checkpoint');
    expect(written.filter((file) => /widgets\/1\.[012]\.0\/|\+build/.test(file))).toEqual([]);
    const yankedDigest = computeDigest((await get(server.url, versionPath(NAME, '1.1.0'))).bytes);
    expect(written).toContain(`v1/attestations/${yankedDigest}`);
    expect(written).not.toContain('.well-known/jwks.json');
    expect((await stat(oldVersionFile)).mtimeMs).toBe(before);
    // A run with nothing new fetches only the key, the checkpoint and the JWKS, and writes nothing.
    fetched.length = 0;
    expect((await mirrorRegistry({ registry: server.url, out, fetch: counting })).written).toEqual([]);
    expect(fetched.sort()).toEqual(['/.well-known/jwks.json', '/v1/log/checkpoint', '/v1/log/key']);
  }, 120_000);

  it('hosts and auditors follow the grown mirror: consistency comes from its tiles', async () => {
    mirror.requests.length = 0;
    const verifyAll = await toolseal(['verify', '--locked', '--all', '--registry', mirror.url], { cwd: work });
    expect(verifyAll.code, verifyAll.stdout + verifyAll.stderr).toBe(0);
    // The pinned versions' proofs are against two mirrored checkpoints: the verifier related them through tiles.
    expect(mirror.requests.some((path) => path.startsWith('/v1/log/proof/consistency'))).toBe(true);
    expect(mirror.requests.some((path) => path.startsWith('/v1/log/tile/0/'))).toBe(true);
    mirror.requests.length = 0;
    const audit = await toolseal(['audit', '--registry', mirror.url, '--state', 'audit.json', '--json'], { cwd: work });
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    expect(jsonLine(audit.stdout)).toMatchObject({ ok: true, consistency: 'proven' });
    expect(mirror.requests.some((path) => path.startsWith('/v1/log/proof/consistency'))).toBe(true);
    expect(
      mirror.requests.some((path) => path.startsWith('/v1/log/tile/1/') || path.startsWith('/v1/log/tile/0/')),
    ).toBe(true);
  }, 120_000);

  it('an interrupted run leaves the last complete mirror; the next run completes it exactly', async () => {
    const stateBefore = await readFile(join(copy, '.toolseal-mirror.json'), 'utf8');
    let calls = 0;
    const failing: typeof fetch = (input, init) => {
      calls++;
      if (calls > 6) return Promise.reject(new Error('connection reset'));
      return fetch(input, init);
    };
    await expect(mirrorRegistry({ registry: server.url, out: copy, fetch: failing })).rejects.toMatchObject({
      code: 'FETCH_FAILED',
    });
    expect(await readFile(join(copy, '.toolseal-mirror.json'), 'utf8')).toBe(stateBefore);
    const resumed = await mirrorRegistry({ registry: server.url, out: copy });
    expect(resumed.previousSize).toBe(sizeAfterFirstRun);
    expect(await listFiles(copy)).toEqual(await listFiles(out));
  }, 120_000);

  it('a mirror killed mid-run (SIGKILL) leaves no torn file; the next run completes it exactly', async () => {
    const killed = join(makeFolder('toolseal-mirror-killed-'), 'mirror');
    const child = spawn(process.execPath, [toolsealBin, 'mirror', '--registry', server.url, '--out', killed], {
      env: cleanEnv(),
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const deadline = Date.now() + 30_000;
    while (!existsSync(join(killed, '.toolseal-mirror.staging')) && child.exitCode === null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await new Promise((resolve) => setTimeout(resolve, 40));
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(join(killed, '.toolseal-mirror.json'))).toBe(false); // it was killed before it finished
    const fresh = join(makeFolder('toolseal-mirror-fresh-'), 'mirror');
    await mirrorRegistry({ registry: server.url, out: fresh });
    await mirrorRegistry({ registry: server.url, out: killed });
    // Nothing left over (staging, temporary files) and every file exactly what an uninterrupted run wrote.
    expect(await listFiles(killed)).toEqual(await listFiles(fresh));
  }, 120_000);

  it('a tampered mirror is refused by verify and by the next mirror run', async () => {
    const tampered = join(makeFolder('toolseal-mirror-bad-'), 'mirror');
    await cp(out, tampered, { recursive: true });
    const file = join(tampered, 'v1/manifests/io.github.acme/widgets/1.3.0/index.json');
    const bytes = await readFile(file);
    await writeFile(file, Buffer.from(bytes.toString('utf8').replace('widgets 1.3.0', 'widgets 1.3.1')));
    const bad = await startStaticServer(tampered);
    try {
      const verify = await toolseal(['verify', `${NAME}@1.3.0`, '--registry', bad.url], { cwd: work });
      expect(verify.code).toBe(1);
      expect(['DIGEST_MISMATCH', 'NOT_IN_LOG', 'SIGNATURE_INVALID']).toContain(jsonLine(verify.stderr)['code']);
      const got = await toolseal(['get', `${NAME}@1.3.0`, '--registry', bad.url, '-o', 'bad.json'], { cwd: work });
      expect(got.code).toBe(1);
      await expect(stat(join(work, 'bad.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await bad.close();
    }
    const size = secondRun.size;
    await writeFile(join(tampered, `v1/log/${formatTilePath(0, 0, size)}`), Buffer.alloc(size * 32));
    await publish('1.4.0');
    await expect(mirrorRegistry({ registry: server.url, out: tampered })).rejects.toMatchObject({
      code: 'INTEGRITY_ERROR',
    });
    expect(attestationsByDigestPath(computeDigest(bytes))).toContain('sha256:');
  }, 120_000);
});

// Crash test: publish continuously over real HTTP, SIGKILL the server mid-stream (requests in flight), restart it on
// the same data, and check that fsck finds every stored row intact and every acknowledged publish is present.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyAttestation, type Jwks } from '../../src/attest/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import {
  cleanupTempDirs,
  digestOfBytes,
  makeTempDir,
  manifestBytes,
  runCli,
  startServerProcess,
  type ServerProcess,
} from '../helpers/registry-helpers.ts';

const WORKERS = 6;
const KILL_AFTER_ACKS = 30;
const MAX_ATTEMPTS = 400;
const DEADLINE_MS = 20_000;
const NAME = 'io.github.acme/crash';

const servers: ServerProcess[] = [];
afterAll(() => {
  for (const server of servers) server.kill();
  cleanupTempDirs();
});

describe('SIGKILL mid-stream', () => {
  it('after a restart, fsck passes and every acknowledged publish is fetchable with its acknowledged digest', async () => {
    const root = makeTempDir();
    const dataDir = join(root, 'data');
    const keysDir = join(root, 'keys');
    // With a worker, so publishes are committed on the writer thread (what serve does on any machine with 2+ cores).
    const args = ['--port', '0', '--data', dataDir, '--keys', keysDir, '--pipeline-workers', '1'];
    const first = await startServerProcess([...args, '--dev']);
    servers.push(first);
    const token = readFileSync(join(dataDir, 'dev-token.txt'), 'utf8').trim();

    const acknowledged = new Map<string, string>(); // version → digest the server acknowledged
    let attempts = 0;
    let inFlightAtKill = 0;
    let inFlight = 0;
    let killed = false;
    const started = Date.now();

    const worker = async (): Promise<void> => {
      while (!killed && attempts < MAX_ATTEMPTS && Date.now() - started < DEADLINE_MS) {
        const version = `1.0.${attempts++}`;
        // Sizes vary (a few hundred bytes to ~40 KB) so some writes span several pages.
        const bytes = manifestBytes({
          name: NAME,
          version,
          description: `crash ${version} ${'x'.repeat((attempts * 997) % 40_000)}`,
        });
        inFlight++;
        let status: number;
        let body: { digest?: string; version?: string };
        try {
          const response = await fetch(`${first.url}/v1/manifests`, {
            method: 'POST',
            body: bytes,
            headers: { Authorization: `Bearer ${token}` },
          });
          status = response.status;
          body = (await response.json()) as { digest?: string; version?: string };
        } catch (error) {
          // After the kill, requests fail with a connection error: they were never acknowledged.
          if (!killed) throw error;
          continue;
        } finally {
          inFlight--;
        }
        // Every answer that did arrive, before or after the kill, is judged.
        expect([200, 201], JSON.stringify(body)).toContain(status);
        expect(body.version).toBe(version);
        expect(body.digest).toBe(runPipeline(bytes).digest);
        acknowledged.set(version, body.digest!);
        if (acknowledged.size === KILL_AFTER_ACKS && !killed) {
          killed = true;
          inFlightAtKill = inFlight;
          first.child.kill('SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));

    expect(killed).toBe(true);
    expect(acknowledged.size).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
    expect(inFlightAtKill).toBeGreaterThan(0);
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

    // Restart on the same data and keys, then fsck the database (the server keeps running: WAL readers are fine).
    const second = await startServerProcess(args);
    servers.push(second);
    const fsck = await runCli(['fsck', '--data', dataDir, '--keys', keysDir]);
    expect(fsck.stdout).toMatch(/fsck: all intact\n$/);
    expect(fsck.code).toBe(0);
    expect(fsck.stdout).not.toContain('PROBLEM');

    const jwks = (await (await fetch(`${second.url}/.well-known/jwks.json`)).json()) as Jwks;
    for (const [version, digest] of acknowledged) {
      const response = await fetch(`${second.url}/v1/manifests/${NAME}/${version}`);
      expect(response.status, version).toBe(200);
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(digestOfBytes(bytes), version).toBe(digest);
      expect(response.headers.get('ETag')).toBe(`"${digest}"`);
      const attestation = new Uint8Array(
        await (await fetch(`${second.url}/v1/manifests/${NAME}/${version}/attestation`)).arrayBuffer(),
      );
      await verifyAttestation(attestation, jwks, { name: NAME, version, digest: digestOfBytes(bytes) });
    }
    const listed = (await (await fetch(`${second.url}/v1/manifests/${NAME}`)).json()) as {
      versions: { version: string; digest: string }[];
    };
    expect(listed.versions.length).toBeGreaterThanOrEqual(acknowledged.size);
    for (const { version, digest } of listed.versions)
      if (acknowledged.has(version)) expect(digest).toBe(acknowledged.get(version));

    // The restarted registry extends the same log: a new publish works and fsck still passes afterwards.
    const after = await fetch(`${second.url}/v1/manifests`, {
      method: 'POST',
      body: manifestBytes({ name: NAME, version: '2.0.0' }),
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(after.status).toBe(201);
    second.child.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    const final = await runCli(['fsck', '--data', dataDir, '--keys', keysDir]);
    expect(final.code, final.stdout).toBe(0);
  });
});

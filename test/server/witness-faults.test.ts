// Witness faults through a real registry server (issue 25 "Bad input and faults"): one good `toolseal witness` and
// witnesses that are down, slow, answer 500, answer garbage, answer a 409 larger than the log, cosign with another
// key than the policy's, or cosign another checkpoint. Publishing goes on (201s), only the good cosignature is ever
// served (checkpoint, attestations, publish response), /healthz names each failing witness with its failure, and a
// host requiring a failing witness is refused with WITNESS_QUORUM.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import { formatCosignerVkey, signCosignature } from '../../src/log/cosignature.ts';
import { parseCheckpoint } from '../../src/log/checkpoint.ts';
import { parseNote } from '../../src/log/note.ts';
import { parseWitnessPolicy } from '../../src/log/policy.ts';
import { parseAddCheckpointRequest } from '../../src/log/witness-protocol.ts';
import type { HealthResponse } from '../../src/protocol/wire.ts';
import { startRegistryServer } from '../../src/server/start-registry-server.ts';
import { fetchVerified } from '../../src/verify/index.ts';
import { initWitness, startWitnessServer, type RunningWitness } from '../../src/witness/index.ts';
import { manifestBytes, NAMESPACE } from '../log-e2e/helpers.ts';

const dirs: string[] = [];
const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function makeDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolseal-witness-faults-'));
  dirs.push(dir);
  return dir;
}

/** A misbehaving witness: `answer` gets the request body and writes the response. */
async function startFakeWitness(answer: (body: string, respond: (s: number, t: string, b: string) => void) => void) {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () =>
      answer(Buffer.concat(chunks).toString('utf8'), (status, type, body) => {
        response.writeHead(status, { 'Content-Type': type });
        response.end(body);
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function until<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never happened: ${what}`);
}

const COSIGNED_BY_GOOD = /^— witness\.test\/good /gm;
const ANY_COSIGNATURE = /^— witness\.test\//gm;

describe('witness faults through a real registry server', () => {
  it('publishing goes on, only verified cosignatures are served, /healthz names each failing witness', async () => {
    const root = makeDir();
    const dataDir = join(root, 'data');
    const keysDir = join(root, 'keys');
    // A first start creates the log key the witnesses and the policy name.
    const first = await startRegistryServer({ dataDir, keysDir, port: 0 });
    const logKey = first.registry.log.verifierString;
    await first.close();

    const good: RunningWitness = await startWitnessServer({
      dataDir: withWitnessKey('witness.test/good'),
      host: '127.0.0.1',
      port: 0,
      logs: [logKey],
    });
    closers.push(() => good.close());
    // A real witness whose policy line carries another key under its name.
    const impostor = await startWitnessServer({
      dataDir: withWitnessKey('witness.test/wrongkey'),
      host: '127.0.0.1',
      port: 0,
      logs: [logKey],
    });
    closers.push(() => impostor.close());
    const otherKey = generateEd25519KeyPair().privateKey;
    const otherSigner = { name: 'witness.test/other', privateKey: otherKey };
    const lines = [
      `witness GOOD ${good.vkey} ${good.url}`,
      `witness DOWN ${formatCosignerVkey('witness.test/down', generateEd25519KeyPair().privateKey)} http://127.0.0.1:9`,
      `witness SLOW ${vkeyOf('witness.test/slow')} ${await startFakeWitness(() => undefined)}`,
      `witness E500 ${vkeyOf('witness.test/e500')} ${await startFakeWitness((_, respond) => respond(500, 'text/plain', 'oops\n'))}`,
      `witness JUNK ${vkeyOf('witness.test/junk')} ${await startFakeWitness((_, respond) => respond(200, 'text/plain', 'hello there\n'))}`,
      `witness BIG ${vkeyOf('witness.test/big')} ${await startFakeWitness((_, respond) => respond(409, 'text/x.tlog.size', '1000000\n'))}`,
      `witness WRONGKEY ${formatCosignerVkey('witness.test/wrongkey', generateEd25519KeyPair().privateKey)} ${impostor.url}`,
      // Cosigns, with the policy's key, a checkpoint of the same origin and size but another root.
      `witness OTHER ${formatCosignerVkey(otherSigner.name, otherKey)} ${await startFakeWitness((body, respond) => {
        const { checkpoint } = parseAddCheckpointRequest(body);
        const noteBody = parseNote(checkpoint).body;
        const forged = noteBody.replace(/\n[^\n]+\n$/, `\n${Buffer.alloc(32, 7).toString('base64')}\n`);
        respond(200, 'text/plain', signCosignature(forged, otherSigner, Math.floor(Date.now() / 1000)));
      })}`,
    ];
    const policyText = `log ${logKey}\n${lines.join('\n')}\nquorum GOOD\n`;
    const policy = parseWitnessPolicy(policyText);

    const server = await startRegistryServer({
      dataDir,
      keysDir,
      port: 0,
      witnessing: { policy, minIntervalMs: 1, timeoutMs: 2_000, initialBackoffMs: 50, maxBackoffMs: 200 },
    });
    closers.push(() => server.close());
    const { token } = await server.registry.createPublisher(NAMESPACE);
    const publish = (bytes: Uint8Array) =>
      fetch(`${server.url}/v1/manifests`, {
        method: 'POST',
        body: bytes,
        headers: { Authorization: `Bearer ${token}` },
      });

    // Publishing goes on: every publish is acknowledged at once, whatever the witnesses do.
    const started = Date.now();
    for (const name of ['a', 'b', 'c']) expect((await publish(manifestBytes(name))).status).toBe(201);
    expect(Date.now() - started).toBeLessThan(5_000);

    // The served checkpoint of the log's size (the key entry and three publishes, each an attestation and a bundle
    // leaf) carries GOOD's cosignature only.
    const size = ((await (await fetch(`${server.url}/healthz`)).json()) as HealthResponse).logSize;
    expect(size).toBe(7);
    const note = await until(async () => {
      const text = await (await fetch(`${server.url}/v1/log/checkpoint`)).text();
      return parseCheckpoint(parseNote(text).body).size === size && (text.match(COSIGNED_BY_GOOD) ?? []).length === 1
        ? text
        : undefined;
    }, 'GOOD cosigns the latest checkpoint');
    expect(note.match(ANY_COSIGNATURE)).toHaveLength(1);

    // /healthz: each failing witness is named with its failure; GOOD is not behind.
    const health = await until(async () => {
      const body = (await (await fetch(`${server.url}/healthz`)).json()) as HealthResponse;
      const failing = (body.witnesses ?? []).filter((w) => w.name !== 'GOOD');
      return failing.length === 7 && failing.every((w) => w.lastError !== null) ? body : undefined;
    }, 'every failing witness reported');
    const byName = new Map((health.witnesses ?? []).map((w) => [w.name, w]));
    expect(health.logSize).toBe(size);
    expect(byName.get('GOOD')).toEqual({
      name: 'GOOD',
      cosignedSize: size,
      behindBy: 0,
      consecutiveFailures: 0,
      lastError: null,
    });
    expect(byName.get('DOWN')?.lastError).toBe('request failed: fetch failed');
    expect(byName.get('SLOW')?.lastError).toBe('request failed: This operation was aborted');
    expect(byName.get('E500')?.lastError).toBe('answered HTTP 500');
    expect(byName.get('JUNK')?.lastError).toBe('answered 200 with a body that is not cosignature lines');
    expect(byName.get('BIG')?.lastError).toBe(
      "claims size 1000000, larger than the log's 7 (another log under our origin?)",
    );
    expect(byName.get('WRONGKEY')?.lastError).toBe(
      'no cosignature in its answer verifies for this checkpoint and its key',
    );
    expect(byName.get('OTHER')?.lastError).toBe(
      'no cosignature in its answer verifies for this checkpoint and its key',
    );
    // Never counted as cosigned: a size a witness only claims (WRONGKEY's 409s after its first answer) is not one.
    for (const name of ['DOWN', 'SLOW', 'E500', 'JUNK', 'BIG', 'WRONGKEY', 'OTHER']) {
      expect(byName.get(name)?.cosignedSize, name).toBeNull();
      expect(byName.get(name)?.consecutiveFailures, name).toBeGreaterThan(0);
    }

    // The attestations by digest and a publish answer (the same bytes again: 200) carry the same one cosignature.
    const again = await publish(manifestBytes('c'));
    expect(again.status).toBe(200);
    const republished = (await again.json()) as { digest: string; inclusionProof: { checkpoint: string } };
    expect(republished.inclusionProof.checkpoint).toBe(note);
    const bindings = (await (await fetch(`${server.url}/v1/attestations/${republished.digest}`)).json()) as {
      bindings: { inclusionProof: { checkpoint: string }; tlogProof: string }[];
    };
    expect(bindings.bindings[0]?.inclusionProof.checkpoint).toBe(note);
    expect(bindings.bindings[0]?.tlogProof.endsWith(note)).toBe(true);

    // A host: GOOD alone is a quorum; a policy needing any failing witness is refused with WITNESS_QUORUM.
    const ref = `${NAMESPACE}/c@1.0.0`;
    const verified = await fetchVerified(server.url, ref, { logKey, witnessPolicy: policy });
    expect(verified.checkpoint.size).toBe(size);
    for (const needed of ['GOOD WRONGKEY', 'GOOD OTHER', 'GOOD BIG']) {
      const strict = parseWitnessPolicy(`log ${logKey}\n${lines.join('\n')}\ngroup Q all ${needed}\nquorum Q\n`);
      await expect(fetchVerified(server.url, ref, { logKey, witnessPolicy: strict })).rejects.toMatchObject({
        code: 'WITNESS_QUORUM',
      });
    }
  }, 60_000);
});

function withWitnessKey(name: string): string {
  const dir = makeDir();
  initWitness(dir, name);
  return dir;
}

function vkeyOf(name: string): string {
  return formatCosignerVkey(name, generateEd25519KeyPair().privateKey);
}

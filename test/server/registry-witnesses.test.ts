// `toolseal serve --witness-policy` end to end (issue 25 §2): the registry as a real process, two real
// `toolseal witness serve` processes and a dead third witness. After a publish, /v1/log/checkpoint carries the two
// verified cosignatures, a host's `toolseal verify --witness-policy` (2 of 3) passes and one requiring the dead
// witness fails, /healthz names the dead witness, and the witnesses' sizes are kept in the data folder.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import { checkCosignatures, formatCosignerVkey, parseCosignerVkey } from '../../src/log/cosignature.ts';
import { parseCheckpoint } from '../../src/log/checkpoint.ts';
import { bodyOf } from '../../src/registry/transparency-log.ts';
import { WITNESS_SIZES_FILE } from '../../src/server/witnessing.ts';
import { initWitness } from '../../src/witness/index.ts';
import {
  cleanupTempDirs,
  makeTempDir,
  manifestBytes,
  runCli,
  type ServerProcess,
  startServerProcess,
} from '../helpers/registry-helpers.ts';
import { startWitnessProcess, type WitnessProcess } from '../witness/helpers.ts';

const NAME = 'io.github.acme/witnessed';
const servers: ServerProcess[] = [];
const witnesses: WitnessProcess[] = [];
afterAll(() => {
  for (const server of servers) server.kill();
  for (const witness of witnesses) witness.child.kill('SIGKILL');
  cleanupTempDirs();
});

async function until<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never happened: ${what}`);
}

describe('serve --witness-policy', () => {
  it('serves checkpoints cosigned by two live witnesses of three; a 2-of-3 host accepts them', async () => {
    const root = makeTempDir();
    const dataDir = join(root, 'data');
    const keysDir = join(root, 'keys');
    const args = ['--port', '0', '--data', dataDir, '--keys', keysDir, '--pipeline-workers', '1'];
    // A first start creates the log key the witnesses are told about.
    const first = await startServerProcess([...args, '--dev']);
    servers.push(first);
    const logKey = (await (await fetch(`${first.url}/v1/log/key`)).text()).trim();
    const token = readFileSync(join(dataDir, 'dev-token.txt'), 'utf8').trim();
    first.child.kill('SIGTERM');
    await first.exited;

    const lines: string[] = [];
    const vkeys: string[] = [];
    for (const name of ['w1', 'w2']) {
      const folder = makeTempDir();
      const vkey = initWitness(folder, `witness.test/${name}`);
      const witness = await startWitnessProcess(folder, [logKey]);
      witnesses.push(witness);
      vkeys.push(vkey);
      lines.push(`witness ${name.toUpperCase()} ${vkey} ${witness.url}`);
    }
    const dead = formatCosignerVkey('witness.test/w3', generateEd25519KeyPair().privateKey);
    lines.push(`witness W3 ${dead} http://127.0.0.1:9`);
    const policyFile = join(root, 'policy.txt');
    writeFileSync(policyFile, `log ${logKey}\n${lines.join('\n')}\ngroup Q 2 W1 W2 W3\nquorum Q\n`);
    const deadOnlyFile = join(root, 'policy-w3.txt');
    writeFileSync(deadOnlyFile, `log ${logKey}\n${lines.join('\n')}\nquorum W3\n`);

    const server = await startServerProcess([...args, '--witness-policy', policyFile]);
    servers.push(server);
    const published = await fetch(`${server.url}/v1/manifests`, {
      method: 'POST',
      body: manifestBytes({ name: NAME, version: '1.0.0', description: 'witnessed' }),
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(published.status).toBe(201);
    const { logIndex } = (await published.json()) as { logIndex: number };

    // Eventually the served checkpoint covers the publish and carries both live witnesses' cosignatures.
    const note = await until(async () => {
      const text = await (await fetch(`${server.url}/v1/log/checkpoint`)).text();
      if (parseCheckpoint(bodyOf(text)).size <= logIndex) return undefined;
      return (text.match(/^— witness\.test\//gm) ?? []).length === 2 ? text : undefined;
    }, 'two cosignatures on the served checkpoint');
    const checked = checkCosignatures(
      note,
      vkeys.map((vkey) => parseCosignerVkey(vkey)),
      Date.now() / 1000 + 60,
    );
    expect(checked.map((c) => c.status)).toEqual(['verified', 'verified']);

    // The host: 2 of 3 passes; a policy requiring the dead witness is refused with WITNESS_QUORUM.
    const ref = `${NAME}@1.0.0`;
    const verified = await runCli(['verify', ref, '--registry', server.url, '--witness-policy', policyFile]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    const refused = await runCli(['verify', ref, '--registry', server.url, '--witness-policy', deadOnlyFile]);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain('WITNESS_QUORUM');

    // /healthz: the live witnesses are not behind, the dead one is named with its failure.
    const health = (await (await fetch(`${server.url}/healthz`)).json()) as {
      logSize: number;
      witnesses: { name: string; cosignedSize: number | null; behindBy: number | null; lastError: string | null }[];
    };
    const byName = new Map(health.witnesses.map((w) => [w.name, w]));
    const size = parseCheckpoint(bodyOf(note)).size;
    expect(byName.get('W1')).toMatchObject({ cosignedSize: size, behindBy: 0 });
    expect(byName.get('W2')).toMatchObject({ cosignedSize: size, behindBy: 0 });
    expect(byName.get('W3')?.cosignedSize).toBeNull();
    expect(byName.get('W3')?.lastError).toMatch(/request failed/);

    // Each live witness's cosigned size is durable in the data folder.
    const sizes = JSON.parse(readFileSync(join(dataDir, WITNESS_SIZES_FILE), 'utf8')) as Record<string, number>;
    expect(sizes).toEqual({ W1: size, W2: size });
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
  }, 120_000);
});

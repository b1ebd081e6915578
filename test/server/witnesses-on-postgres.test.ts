// Witnesses with several registry processes on one PostgreSQL database (issue 25 §2): only the sequencer submits
// checkpoints, and it keeps each verified cosignature in the database, so a follower serves the same cosigned
// checkpoint (a 2-of-3 policy passes against either process); a kept line that does not verify is never served.
// The database: a fresh one on TOOLSEAL_TEST_DATABASE_URL's server, else PGlite behind @electric-sql/pglite-socket.

import { afterAll, describe, expect, it } from 'vitest';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import {
  checkCosignatures,
  formatCosignerVkey,
  parseCosignerVkey,
  signCosignature,
} from '../../src/log/cosignature.ts';
import { parseWitnessPolicy, verifyCheckpointWithPolicy } from '../../src/log/policy.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/start-registry-server.ts';
import { initWitness, startWitnessServer } from '../../src/witness/index.ts';
import { startPgliteSocketServer } from '../helpers/pglite-socket-server.ts';
import { cleanupTempDirs, makeTempDir, manifestBytes } from '../helpers/registry-helpers.ts';
import { createTestDatabase, testDatabaseUrl } from '../store/contract/store-backends.ts';

const TIMEOUT = 120_000;
const closers: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  cleanupTempDirs();
});

async function openDatabase(): Promise<string> {
  if (testDatabaseUrl !== undefined) {
    const database = await createTestDatabase(testDatabaseUrl);
    closers.push(database.drop);
    return database.url;
  }
  const server = await startPgliteSocketServer();
  closers.push(server.stop);
  return server.url;
}

async function until<T>(what: string, read: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never happened: ${what}`);
}

async function checkpointOf(server: RunningRegistryServer): Promise<string> {
  const response = await fetch(`${server.url}/v1/log/checkpoint`);
  expect(response.status).toBe(200);
  return await response.text();
}

describe('witnesses with two processes on one database', () => {
  it(
    'the follower serves the cosignatures the sequencer kept, and never a kept line that does not verify',
    async () => {
      const url = await openDatabase();
      const keysDir = makeTempDir();
      const first = await startRegistryServer({ dataDir: makeTempDir(), databaseUrl: url, keysDir, port: 0 });
      const logKey = first.registry.log.verifierString;
      await first.close();

      const lines: string[] = [];
      for (const name of ['w1', 'w2']) {
        const dataDir = makeTempDir();
        initWitness(dataDir, `witness.test/${name}`);
        const witness = await startWitnessServer({ dataDir, host: '127.0.0.1', port: 0, logs: [logKey] });
        closers.push(() => witness.close());
        lines.push(`witness ${name.toUpperCase()} ${witness.vkey} ${witness.url}`);
      }
      const dead = generateEd25519KeyPair().privateKey;
      lines.push(`witness W3 ${formatCosignerVkey('witness.test/w3', dead)} http://127.0.0.1:9`);
      const policyText = `log ${logKey}\n${lines.join('\n')}\ngroup Q 2 W1 W2 W3\nquorum Q\n`;
      const policy = parseWitnessPolicy(policyText);
      const witnessing = { policy, minIntervalMs: 1, initialBackoffMs: 50, maxBackoffMs: 200, onError: () => {} };
      const start = () =>
        startRegistryServer({ dataDir: makeTempDir(), databaseUrl: url, keysDir, port: 0, witnessing });

      const sequencer = await start();
      closers.push(() => sequencer.close());
      await until('the first process sequences', () =>
        sequencer.registry.sequencingRole === 'sequencer' ? true : undefined,
      );
      const follower = await start();
      closers.push(() => follower.close());
      await until('the second process follows', () =>
        follower.registry.sequencingRole === 'follower' ? true : undefined,
      );

      // Published through the follower: its job is sequenced (and the checkpoint signed) by the other process.
      const { token } = await sequencer.registry.createPublisher('io.github.acme');
      for (const version of ['1.0.0', '1.1.0']) {
        const response = await fetch(`${follower.url}/v1/manifests`, {
          method: 'POST',
          body: manifestBytes({ version }),
          headers: { Authorization: `Bearer ${token}` },
        });
        expect(response.status).toBe(201);
      }
      const size = (await sequencer.registry.latestCheckpoint())!.size;
      const cosigners = lines.slice(0, 2).map((line) => parseCosignerVkey(line.split(' ')[2] as string));
      const isCosigned = (note: string) =>
        note.includes(`\n${size}\n`) &&
        checkCosignatures(note, cosigners, Date.now() / 1000 + 60).filter((c) => c.status === 'verified').length === 2
          ? note
          : undefined;
      const fromSequencer = await until('the sequencer serves two cosignatures', async () =>
        isCosigned(await checkpointOf(sequencer)),
      );
      const fromFollower = await until('the follower serves two cosignatures', async () =>
        isCosigned(await checkpointOf(follower)),
      );
      expect(fromFollower).toBe(fromSequencer);
      expect((await follower.store.listCosignatures(size)).map((row) => row.witness)).toEqual(['W1', 'W2']);
      const nowSeconds = Date.now() / 1000;
      expect(verifyCheckpointWithPolicy(fromFollower, policy, { nowSeconds }).cosignedBy.sort()).toEqual(['W1', 'W2']);

      // Kept lines that do not verify are left out: one by the dead witness's key over another checkpoint, one with a
      // name the policy does not know. A genuine one by that witness, kept later, is served with the other two.
      const body = fromFollower.slice(0, fromFollower.indexOf('\n\n') + 1);
      const w3 = { name: 'witness.test/w3', privateKey: dead };
      const seconds = Math.floor(Date.now() / 1000);
      await follower.store.saveCosignature({ size, witness: 'W3', line: signCosignature(`${body}x\n`, w3, seconds) });
      await follower.store.saveCosignature({ size, witness: 'W9', line: signCosignature(body, w3, seconds) });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await checkpointOf(follower)).toBe(fromSequencer);
      const genuine = signCosignature(body, w3, seconds);
      await follower.store.saveCosignature({ size, witness: 'W3', line: genuine });
      const withThree = await until('the follower serves the third cosignature', async () => {
        const note = await checkpointOf(follower);
        return note.includes(genuine) ? note : undefined;
      });
      expect(withThree).toBe(`${fromSequencer}${genuine}`);
    },
    TIMEOUT,
  );
});

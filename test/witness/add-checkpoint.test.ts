// C2SP tlog-witness add-checkpoint through the witness's HTTP server (in process): every status code the spec names,
// the cosignature it returns, and concurrent requests that can never roll the witness back.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkCosignatures,
  formatAddCheckpointRequest,
  parseCosignerVkey,
  parseTlogSize,
  signNote,
} from '../../src/log/index.ts';
import { initWitness, startWitnessServer, type RunningWitness } from '../../src/witness/index.ts';
import { createTestLog, generateEd25519KeyPair, makeFolder, postCheckpoint, removeFolders } from './helpers.ts';

const log = createTestLog('log.example/a');
let witness: RunningWitness;
let dataDir: string;

beforeAll(async () => {
  dataDir = makeFolder();
  initWitness(dataDir, 'witness.example/w1');
  witness = await startWitnessServer({ dataDir, host: '127.0.0.1', port: 0, logs: [log.vkey] });
});
afterAll(async () => {
  await witness.close();
  removeFolders();
});

describe('POST /add-checkpoint', () => {
  it('cosigns a first checkpoint from old 0 (200, one verifying cosignature line), then answers 409 to old 0', async () => {
    log.append(5);
    const first = await postCheckpoint(witness.url, log.request(0));
    expect(first.status).toBe(200);
    expect(first.text).toMatch(/^\u2014 witness\.example\/w1 [A-Za-z0-9+/=]+\n$/);
    const checked = checkCosignatures(
      `${log.checkpoint()}${first.text}`,
      [parseCosignerVkey(witness.vkey)],
      Math.floor(Date.now() / 1000) + 1,
    );
    expect(checked.map((c) => c.status)).toEqual(['verified']);
    const again = await postCheckpoint(witness.url, log.request(0));
    expect(again.status).toBe(409);
    expect(again.contentType).toBe('text/x.tlog.size');
    expect(again.text).toBe('5\n');
  });

  it('cosigns a consistent extension and refuses a bad proof with 422 (state unchanged)', async () => {
    log.append(3);
    const tampered = log.proof(5, 8);
    tampered[0] = new Uint8Array(32).fill(9);
    const bad = await postCheckpoint(
      witness.url,
      formatAddCheckpointRequest({ oldSize: 5, proof: tampered, checkpoint: log.checkpoint() }),
    );
    expect(bad.status).toBe(422);
    expect((await postCheckpoint(witness.url, log.request(0))).text).toBe('5\n');
    expect((await postCheckpoint(witness.url, log.request(5))).status).toBe(200);
    expect((await postCheckpoint(witness.url, log.request(0))).text).toBe('8\n');
  });

  it('404 for an unknown origin, 403 without a valid log signature, 400 for old > size and garbage', async () => {
    const other = createTestLog('log.example/other');
    other.append(2);
    expect((await postCheckpoint(witness.url, other.request(0))).status).toBe(404);
    const forged = signNote(log.body(), { name: log.origin, privateKey: generateEd25519KeyPair().privateKey });
    expect(
      (await postCheckpoint(witness.url, formatAddCheckpointRequest({ oldSize: 8, proof: [], checkpoint: forged })))
        .status,
    ).toBe(403);
    const tooOld = formatAddCheckpointRequest({ oldSize: 9, proof: [], checkpoint: log.checkpoint() });
    expect((await postCheckpoint(witness.url, tooOld)).status).toBe(400);
    expect((await postCheckpoint(witness.url, 'hello')).status).toBe(400);
    expect((await fetch(`${witness.url}/add-checkpoint`)).status).toBe(405);
  });

  it('409 for the same size with another root; 200 again for the same checkpoint at old = size', async () => {
    const fork = createTestLog(log.origin, { privateKey: log.privateKey, salt: ' fork' }); // same key, other tree
    fork.append(8);
    const forked = await postCheckpoint(
      witness.url,
      formatAddCheckpointRequest({ oldSize: 8, proof: [], checkpoint: fork.checkpoint() }),
    );
    expect(forked.status).toBe(409);
    expect(forked.contentType).toBe('text/x.tlog.size');
    expect(forked.text).toBe('8\n');
    const impostor = createTestLog(log.origin); // another key under the same origin: 403
    impostor.append(8);
    expect((await postCheckpoint(witness.url, impostor.request(8))).status).toBe(403);
    expect((await postCheckpoint(witness.url, log.request(8))).status).toBe(200);
  });

  it('concurrent requests never roll the state back', async () => {
    const sizes: number[] = [];
    for (let i = 0; i < 6; i++) {
      log.append(1);
      sizes.push(log.size());
    }
    const start = 8;
    // Every request claims old = 8: exactly one can win; the others get 409 naming the size that won.
    const answers = await Promise.all(sizes.map((size) => postCheckpoint(witness.url, log.request(start, size))));
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    const winner = sizes[answers.findIndex((a) => a.status === 200)] as number;
    for (const answer of answers.filter((a) => a.status !== 200)) {
      expect(answer.status).toBe(409);
      expect(parseTlogSize(answer.text)).toBe(winner);
    }
    // A smaller checkpoint cannot be cosigned from the new size: old > size.
    const smaller = formatAddCheckpointRequest({ oldSize: winner, proof: [], checkpoint: log.checkpoint(start) });
    expect((await postCheckpoint(witness.url, smaller)).status).toBe(400);
    expect((await postCheckpoint(witness.url, log.request(0))).text).toBe(`${winner}\n`);
  });
});

// The witness client against two real `toolseal witness` processes and a dead one (a 2-of-3 policy), and against
// hostile fake witnesses on 127.0.0.1: slow, 500, a 409 larger than the log, garbage, a cosignature for another
// checkpoint or by another key. Nothing unverified is handed on; status() says which witness is behind and why.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  formatCosignerVkey,
  parseNote,
  parseWitnessPolicy,
  signCosignature,
  verifyCheckpointWithPolicy,
  type WitnessPolicy,
} from '../../src/log/index.ts';
import { initWitness } from '../../src/witness/index.ts';
import { createWitnessSubmitter, type CosignedEvent, type WitnessSizeStore } from '../../src/witness/submitter.ts';
import {
  createTestLog,
  generateEd25519KeyPair,
  makeFolder,
  removeFolders,
  startWitnessProcess,
  type TestLog,
  type WitnessProcess,
} from './helpers.ts';

const processes: WitnessProcess[] = [];
const fakes: Server[] = [];
afterAll(async () => {
  for (const p of processes) p.child.kill('SIGKILL');
  for (const server of fakes) {
    server.closeAllConnections();
    server.close();
  }
  removeFolders();
});

function memorySizes(): WitnessSizeStore & { saved: Map<string, number> } {
  const saved = new Map<string, number>();
  return {
    saved,
    load: async (witness) => saved.get(witness),
    save: async (witness, size) => {
      saved.set(witness, size);
    },
  };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!check()) throw new Error(`never happened: ${what}`);
}

/** A port nothing listens on: listen, note the port, close. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

interface Fake {
  url: string;
  requests: number;
  maxConcurrent: number;
}

/** A fake witness answering with `respond(body)`; counts requests and the most it had in flight at once. */
async function startFake(
  respond: (
    body: string,
  ) => Promise<{ status: number; body: string; type?: string }> | { status: number; body: string; type?: string },
): Promise<Fake> {
  let current = 0;
  const fake: Fake = { url: '', requests: 0, maxConcurrent: 0 };
  const server = createServer((request, response) => {
    fake.requests++;
    current++;
    fake.maxConcurrent = Math.max(fake.maxConcurrent, current);
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', async () => {
      const answer = await respond(body);
      current--;
      if (response.destroyed) return;
      response.writeHead(answer.status, { 'Content-Type': answer.type ?? 'text/plain' });
      response.end(answer.body);
    });
    response.on('close', () => {
      if (!response.writableFinished) current = Math.max(0, current - 1);
    });
  });
  fakes.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

function policyFor(
  log: TestLog,
  witnesses: { name: string; vkey: string; url: string }[],
  quorum: string,
): WitnessPolicy {
  return parseWitnessPolicy(
    `log ${log.vkey}\n${witnesses.map((w) => `witness ${w.name} ${w.vkey} ${w.url}`).join('\n')}\n${quorum}\n`,
  );
}

describe('against real witnesses (2 of 3, the third dead)', () => {
  const log = createTestLog('log.example/sub');
  let real: { name: string; vkey: string; url: string }[];
  let dead: string;

  beforeAll(async () => {
    real = [];
    for (const name of ['A', 'B']) {
      const dataDir = makeFolder();
      const vkey = initWitness(dataDir, `witness.example/${name}`);
      const p = await startWitnessProcess(dataDir, [log.vkey]);
      processes.push(p);
      real.push({ name, vkey, url: p.url });
    }
    dead = await deadUrl();
  });

  it('gets a quorum, reports the dead witness, and a fresh client learns the sizes from 409', async () => {
    const third = {
      name: 'C',
      vkey: formatCosignerVkey('witness.example/C', generateEd25519KeyPair().privateKey),
      url: dead,
    };
    const policy = policyFor(log, [...real, third], 'group Q 2 A B C\nquorum Q');
    const sizes = memorySizes();
    const events: CosignedEvent[] = [];
    const submitter = createWitnessSubmitter({
      policy,
      proveConsistency: async (from, to) => log.proof(from, to),
      sizes,
      onCosigned: (event) => events.push(event),
      initialBackoffMs: 20,
      maxBackoffMs: 100,
      minIntervalMs: 1,
    });
    try {
      for (let round = 0; round < 3; round++) {
        log.append(3);
        const checkpoint = log.checkpoint();
        expect(submitter.submit(checkpoint)).toBeUndefined();
        await until(() => sizes.saved.get('A') === log.size() && sizes.saved.get('B') === log.size(), 'A and B cosign');
        const merged = submitter.withCosignatures(checkpoint);
        const checked = verifyCheckpointWithPolicy(merged, policy, { nowSeconds: Date.now() / 1000 + 120 });
        expect(checked.cosignedBy.sort()).toEqual(['A', 'B']);
      }
      await until(
        () => (submitter.status().find((s) => s.witness === 'C')?.consecutiveFailures ?? 0) >= 2,
        'C retried',
      );
      const status = submitter.status();
      expect(status.find((s) => s.witness === 'A')).toMatchObject({
        cosignedSize: 9,
        behindBy: 0,
        consecutiveFailures: 0,
      });
      expect(status.find((s) => s.witness === 'C')).toMatchObject({ cosignedSize: undefined, behindBy: undefined });
      expect(status.find((s) => s.witness === 'C')?.lastError).toMatch(/request failed/);
      expect(events.every((e) => e.size <= 9 && parseNote(`${parseNote(e.checkpoint).body}\n${e.line}`))).toBe(true);
    } finally {
      submitter.close();
    }

    // A client that lost its sizes: old 0, 409 with the witness's size, then a proof from there.
    const fresh = createWitnessSubmitter({
      policy,
      proveConsistency: async (from, to) => log.proof(from, to),
      sizes: memorySizes(),
      minIntervalMs: 1,
    });
    try {
      log.append(2);
      fresh.submit(log.checkpoint());
      await until(() => fresh.status().filter((s) => s.cosignedSize === 11).length === 2, 'fresh client cosigned');
    } finally {
      fresh.close();
    }
  });
});

describe('against hostile witnesses', () => {
  const log = createTestLog('log.example/hostile');
  const key = generateEd25519KeyPair().privateKey;
  const vkey = formatCosignerVkey('witness.example/h', key);

  async function runAgainst(fake: Fake, options: { timeoutMs?: number } = {}) {
    const policy = policyFor(log, [{ name: 'H', vkey, url: fake.url }], 'quorum H');
    const events: CosignedEvent[] = [];
    const sizes = memorySizes();
    const submitter = createWitnessSubmitter({
      policy,
      proveConsistency: async (from, to) => log.proof(from, to),
      sizes,
      onCosigned: (event) => events.push(event),
      initialBackoffMs: 10,
      maxBackoffMs: 40,
      minIntervalMs: 1,
      ...options,
    });
    log.append(2);
    const checkpoint = log.checkpoint();
    submitter.submit(checkpoint);
    await until(() => (submitter.status()[0]?.consecutiveFailures ?? 0) >= 2, 'two failures');
    submitter.close();
    expect(events).toEqual([]);
    expect(sizes.saved.size).toBe(0);
    expect(submitter.withCosignatures(checkpoint)).toBe(checkpoint);
    return submitter.status()[0];
  }

  it('500', async () => {
    expect((await runAgainst(await startFake(() => ({ status: 500, body: 'oops' }))))?.lastError).toMatch(/HTTP 500/);
  });

  it('slow: times out, one request in flight at a time', async () => {
    const fake = await startFake(
      () => new Promise((resolve) => setTimeout(() => resolve({ status: 500, body: '' }), 2000)),
    );
    expect((await runAgainst(fake, { timeoutMs: 50 }))?.lastError).toMatch(/request failed/);
    expect(fake.maxConcurrent).toBe(1);
  });

  it('a 409 naming a size larger than the log', async () => {
    const status = await runAgainst(
      await startFake(() => ({ status: 409, body: '1000000\n', type: 'text/x.tlog.size' })),
    );
    expect(status?.lastError).toMatch(/claims size 1000000, larger than the log/);
  });

  it('garbage with 200', async () => {
    expect((await runAgainst(await startFake(() => ({ status: 200, body: '<html>' }))))?.lastError).toMatch(
      /not cosignature lines/,
    );
  });

  it('a cosignature for another checkpoint, and one by another key', async () => {
    const otherBody = log.body(1);
    const forOther = await startFake(() => ({
      status: 200,
      body: signCosignature(otherBody, { name: 'witness.example/h', privateKey: key }, 1000),
    }));
    expect((await runAgainst(forOther))?.lastError).toMatch(/no cosignature/);
    const byOtherKey = await startFake((body) => ({
      status: 200,
      body: signCosignature(
        parseNote(body.slice(body.indexOf('\n\n') + 2)).body,
        { name: 'witness.example/h', privateKey: generateEd25519KeyPair().privateKey },
        1000,
      ),
    }));
    expect((await runAgainst(byOtherKey))?.lastError).toMatch(/no cosignature/);
  });

  it('sends only the newest checkpoint: 20 quick submits make at most 2 requests', async () => {
    const fake = await startFake(
      () => new Promise((resolve) => setTimeout(() => resolve({ status: 503, body: '' }), 100)),
    );
    const policy = policyFor(log, [{ name: 'H', vkey, url: fake.url }], 'quorum H');
    const submitter = createWitnessSubmitter({
      policy,
      proveConsistency: async (from, to) => log.proof(from, to),
      sizes: memorySizes(),
      initialBackoffMs: 60_000,
    });
    for (let i = 0; i < 20; i++) {
      log.append(1);
      submitter.submit(log.checkpoint());
    }
    await until(() => (submitter.status()[0]?.consecutiveFailures ?? 0) >= 1, 'first failure');
    submitter.close();
    expect(fake.requests).toBeLessThanOrEqual(2);
    expect(fake.maxConcurrent).toBe(1);
  });
});

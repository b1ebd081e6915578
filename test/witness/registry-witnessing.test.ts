// End to end with the real parts: a toolseal registry (in process), two `toolseal witness` processes and a dead third
// witness, the witness client fed with the registry's checkpoints and consistency proofs (as the sequencer will),
// and a host verifying a manifest under a 2-of-3 policy with the cosignatures merged into the checkpoint.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBase64Strict } from '../../src/core/bytes.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import { formatCosignerVkey, parseWitnessPolicy } from '../../src/log/index.ts';
import { consistencyProofPath, inclusionProofPath, ROUTES } from '../../src/protocol/routes.ts';
import { fetchVerified, verifyFetched } from '../../src/verify/index.ts';
import { initWitness } from '../../src/witness/index.ts';
import { createWitnessSubmitter, type WitnessSizeStore } from '../../src/witness/submitter.ts';
import { manifestBytes, NAMESPACE, publishOverHttp, startTestRegistry, type TestRegistry } from '../log-e2e/helpers.ts';
import { makeFolder, removeFolders, startWitnessProcess, type WitnessProcess } from './helpers.ts';

let t: TestRegistry;
const processes: WitnessProcess[] = [];
beforeAll(async () => {
  t = await startTestRegistry();
});
afterAll(async () => {
  for (const p of processes) p.child.kill('SIGKILL');
  await t.close();
  removeFolders();
});

async function text(path: string): Promise<string> {
  const response = await fetch(`${t.url}${path}`);
  expect(response.status).toBe(200);
  return response.text();
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!check()) throw new Error(`never happened: ${what}`);
}

describe('registry, two witnesses and a 2-of-3 host', () => {
  it('cosigns the registry checkpoints and the host accepts the cosigned checkpoint, not the bare one', async () => {
    expect((await publishOverHttp(t, manifestBytes('one'))).status).toBe(201);
    const logKey = (await text(ROUTES.logKey)).trim();
    const witnesses: string[] = [];
    for (const name of ['w1', 'w2']) {
      const dataDir = makeFolder();
      const vkey = initWitness(dataDir, `witness.test/${name}`);
      const p = await startWitnessProcess(dataDir, [logKey]);
      processes.push(p);
      witnesses.push(`witness ${name.toUpperCase()} ${vkey} ${p.url}`);
    }
    const dead = formatCosignerVkey('witness.test/w3', generateEd25519KeyPair().privateKey);
    witnesses.push(`witness W3 ${dead} http://127.0.0.1:9`);
    const witnessPolicy = parseWitnessPolicy(`log ${logKey}\n${witnesses.join('\n')}\ngroup Q 2 W1 W2 W3\nquorum Q\n`);

    const saved = new Map<string, number>();
    const sizes: WitnessSizeStore = {
      load: async (w) => saved.get(w),
      save: async (w, size) => {
        saved.set(w, size);
      },
    };
    const submitter = createWitnessSubmitter({
      policy: witnessPolicy,
      sizes,
      proveConsistency: async (from, to) => {
        const { hashes } = JSON.parse(await text(consistencyProofPath(from, to))) as { hashes: string[] };
        return hashes.map((h) => decodeBase64Strict(h) as Uint8Array);
      },
      minIntervalMs: 1,
      initialBackoffMs: 50,
      maxBackoffMs: 200,
    });
    try {
      let checkpoint = await text(ROUTES.logCheckpoint);
      submitter.submit(checkpoint);
      // A key, then an attestation and a Sigstore bundle leaf per publish (issue 26).
      await until(() => saved.get('W1') === 3 && saved.get('W2') === 3, 'both witnesses cosign size 3');
      expect((await publishOverHttp(t, manifestBytes('two'))).status).toBe(201);
      checkpoint = await text(ROUTES.logCheckpoint);
      submitter.submit(checkpoint);
      await until(() => saved.get('W1') === 5 && saved.get('W2') === 5, 'both witnesses cosign size 5 (with a proof)');
      expect(submitter.status().find((s) => s.witness === 'W3')?.lastError).toMatch(/request failed/);

      // The host: what the registry serves today (no cosignatures) fails the policy; the merged checkpoint passes.
      const ref = `${NAMESPACE}/two@1.0.0`;
      await expect(fetchVerified(t.url, ref, { logKey, witnessPolicy })).rejects.toMatchObject({
        code: 'WITNESS_QUORUM',
      });
      const plain = await fetchVerified(t.url, ref, { logKey });
      const { hashes } = JSON.parse(await text(inclusionProofPath(plain.logIndex, 5))) as { hashes: string[] };
      const jwks = JSON.parse(await text(ROUTES.jwks));
      const verified = verifyFetched({
        bytes: plain.bytes,
        attestation: plain.attestation,
        inclusion: { index: plain.logIndex, size: 5, hashes, checkpoint: submitter.withCosignatures(checkpoint) },
        jwks,
        logKey,
        witnessPolicy,
        nowSeconds: Date.now() / 1000 + 60,
      });
      expect(verified.checkpoint.size).toBe(5);
    } finally {
      submitter.close();
    }
  });
});

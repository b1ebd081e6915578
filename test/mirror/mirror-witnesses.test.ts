// The mirror and witnesses (issue 25 §2): `toolseal mirror` serves the registry's checkpoint with its witnesses'
// cosignatures and reports them; with a witness policy a checkpoint without the quorum is refused (WITNESS_QUORUM)
// before anything is written.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import {
  checkWitnessQuorum,
  formatCosignerVkey,
  parseVerifierString,
  parseWitnessPolicy,
} from '../../src/log/index.ts';
import { mirrorRegistry } from '../../src/mirror/mirror-registry.ts';
import { makeFolder, removeFolders, startWitnessedRegistry, type WitnessedRegistry } from '../witness/helpers.ts';

let r: WitnessedRegistry;
beforeAll(async () => {
  r = await startWitnessedRegistry(['mirrored']);
}, 60_000);
afterAll(async () => {
  await r.close();
  removeFolders();
});

describe('mirror with witnesses', () => {
  it('copies the cosigned checkpoint and reports the verified witnesses', async () => {
    const served = await (await fetch(`${r.url}/v1/log/checkpoint`)).text();
    expect(served).toMatch(/^— witness\.test\/w1 /m);
    const out = makeFolder();
    const report = await mirrorRegistry({ registry: r.url, out, witnessPolicy: parseWitnessPolicy(r.policyText) });
    expect(report.cosignatures).toBe(1);
    expect(report.witnesses).toEqual(['W1']);
    const mirrored = readFileSync(join(out, 'v1/log/checkpoint'), 'utf8');
    expect(mirrored).toBe(served);
    // A host checks the mirrored checkpoint exactly as the registry's.
    const policy = parseWitnessPolicy(r.policyText);
    expect(checkWitnessQuorum(mirrored, policy, parseVerifierString(r.logKey).publicKey, Date.now() / 1000)).toEqual([
      'W1',
    ]);
  });

  it('refuses a checkpoint without the quorum and writes nothing', async () => {
    const dead = formatCosignerVkey('witness.test/w9', generateEd25519KeyPair().privateKey);
    const strict = parseWitnessPolicy(r.policyText.replace('quorum W1', `witness W9 ${dead}\nquorum W9`));
    const out = makeFolder();
    await expect(mirrorRegistry({ registry: r.url, out, witnessPolicy: strict })).rejects.toMatchObject({
      code: 'WITNESS_QUORUM',
    });
    expect(existsSync(join(out, 'v1'))).toBe(false);
    expect(readdirSync(out).filter((name) => !name.startsWith('.'))).toEqual([]);
  });
});

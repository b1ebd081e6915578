// The lockfile pins the witness policy (issue 25 §4): `toolseal pin --witness-policy` records the policy file's
// sha256 beside the registry's keys; `verify --locked` and `guard --locked` (the real CLI) and guardClient with that
// lockfile refuse to run without that very policy (KEY_NOT_PINNED) and pass with it; a lockfile with a malformed
// witnessPolicy is refused when read.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeDigest } from '../../src/core/digest.ts';
import { guardClient } from '../../src/guard/index.ts';
import { formatLockfile, parseLockfile } from '../../src/lock/lockfile.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import { formatCosignerVkey, parseWitnessPolicy } from '../../src/log/index.ts';
import { makeFolder, removeFolders, toolseal } from '../cli/cli-helpers.ts';
import { NAMESPACE } from '../log-e2e/helpers.ts';
import { startWitnessedRegistry, type WitnessedRegistry } from '../witness/helpers.ts';

const REF = `${NAMESPACE}/pinned@1.0.0`;
let r: WitnessedRegistry;
let cwd: string;
beforeAll(async () => {
  r = await startWitnessedRegistry(['pinned']);
  cwd = makeFolder();
  writeFileSync(join(cwd, 'policy.txt'), r.policyText);
  // The same log and witness, another quorum: another policy (another digest).
  writeFileSync(join(cwd, 'other.txt'), r.policyText.replace('quorum W1', 'quorum none'));
}, 60_000);
afterAll(async () => {
  await r.close();
  removeFolders();
});

describe('the lockfile pins the witness policy', () => {
  it('pin records its digest; verify and guard --locked need that very policy', async () => {
    const pinned = await toolseal(['pin', REF, '--registry', r.url, '--witness-policy', 'policy.txt'], { cwd });
    expect(pinned.code, pinned.stderr).toBe(0);
    const lock = parseLockfile(readFileSync(join(cwd, 'toolseal.lock')));
    const digest = computeDigest(new TextEncoder().encode(r.policyText));
    expect(lock.registryKeys?.[r.url]?.witnessPolicy).toBe(digest);
    expect(parseWitnessPolicy(r.policyText).digest).toBe(digest);
    // Written with the member in its place, and read back to the same text.
    expect(formatLockfile(lock)).toBe(readFileSync(join(cwd, 'toolseal.lock'), 'utf8'));
    expect(readFileSync(join(cwd, 'toolseal.lock'), 'utf8')).toContain(
      `"logKey": ${JSON.stringify(r.logKey)},\n      "witnessPolicy": "${digest}"`,
    );

    const same = await toolseal(['verify', REF, '--locked', '--registry', r.url, '--witness-policy', 'policy.txt'], {
      cwd,
    });
    expect(same.code, same.stderr).toBe(0);
    const none = await toolseal(['verify', REF, '--locked', '--registry', r.url], { cwd });
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('KEY_NOT_PINNED');
    expect(none.stderr).toContain(`witness policy ${digest}; give it with --witness-policy`);
    const other = await toolseal(['verify', REF, '--locked', '--registry', r.url, '--witness-policy', 'other.txt'], {
      cwd,
    });
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain('KEY_NOT_PINNED');
    // Without --locked the lockfile's pins do not apply: the other policy (quorum none) verifies.
    const unlocked = await toolseal(['verify', REF, '--registry', r.url, '--witness-policy', 'other.txt'], { cwd });
    expect(unlocked.code, unlocked.stderr).toBe(0);

    const guard = await toolseal(
      ['guard', '--manifest', REF, '--locked', '--registry', r.url, '--', process.execPath, '-e', ''],
      { cwd },
    );
    expect(guard.code).not.toBe(0);
    expect(guard.stderr).toContain('KEY_NOT_PINNED');
  }, 120_000);

  it('guardClient with the lockfile refuses another or no policy and passes with the pinned one', async () => {
    const policy = parseWitnessPolicy(r.policyText);
    const lockText = formatLockfile(parseLockfile(readFileSync(join(cwd, 'toolseal.lock'))));
    const lock = parseLockfile(lockText);
    const client = () => new Client({ name: 'host', version: '1.0.0' });
    await expect(guardClient(client(), { manifest: REF, registry: r.url, lock })).rejects.toMatchObject({
      code: 'KEY_NOT_PINNED',
    });
    const other = parseWitnessPolicy(r.policyText.replace('quorum W1', 'quorum none'));
    await expect(
      guardClient(client(), { manifest: REF, registry: r.url, lock, witnessPolicy: other }),
    ).rejects.toMatchObject({ code: 'KEY_NOT_PINNED' });
    const guarded = await guardClient(client(), { manifest: REF, registry: r.url, lock, witnessPolicy: policy });
    expect(guarded.verified?.name).toBe(`${NAMESPACE}/pinned`);
    // A policy whose quorum the served checkpoint lacks is WITNESS_QUORUM (no lockfile involved).
    const strict = parseWitnessPolicy(
      r.policyText.replace(
        'quorum W1',
        `witness W9 ${formatCosignerVkey('witness.test/w9', generateEd25519KeyPair().privateKey)} http://127.0.0.1:9\nquorum W9`,
      ),
    );
    await expect(
      guardClient(client(), { manifest: REF, registry: r.url, witnessPolicy: strict }),
    ).rejects.toMatchObject({ code: 'WITNESS_QUORUM' });
  }, 60_000);

  it('a lockfile whose witnessPolicy is not a sha256 digest is refused with its pointer', () => {
    const text = JSON.stringify({
      lockfileVersion: 1,
      registryKeys: { 'http://127.0.0.1:1': { attestationKeys: [], logKey: 'k', witnessPolicy: 'md5:00' } },
      manifests: {},
    });
    expect(() => parseLockfile(text)).toThrow(
      expect.objectContaining({ code: 'BAD_REQUEST', pointer: '/registryKeys/http:~1~1127.0.0.1:1/witnessPolicy' }),
    );
  });
});

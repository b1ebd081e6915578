// `toolseal verify --locked --all`: every lockfile entry verified with one verifier, one JSON line each.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatLockfile, parseLockfile } from '../../src/host/index.ts';
import { manifestFile, manifestVariant, startRegistry, type TestRegistry } from '../verify/helpers.ts';
import { makeFolder, removeFolders, toolseal } from './cli-helpers.ts';

let real: TestRegistry;

beforeAll(async () => {
  real = await startRegistry();
  await real.publish(manifestFile('payments'));
  await real.publish(manifestVariant('payments', { version: '1.3.0' }));
});

afterAll(async () => {
  removeFolders();
  await real.close();
});

const lines = (text: string): Record<string, unknown>[] =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('toolseal verify --locked --all', () => {
  it('verifies every entry, one line each, and reports a tampered pin without stopping', async () => {
    const cwd = makeFolder();
    for (const ref of ['io.github.acme/payments@1.2.0', 'io.github.acme/payments@1.3.0']) {
      expect((await toolseal(['pin', ref, '--registry', real.url], { cwd })).code).toBe(0);
    }
    const all = await toolseal(['verify', '--locked', '--all'], { cwd });
    expect(all.stderr).toBe('');
    expect(all.code).toBe(0);
    const verified = lines(all.stdout);
    expect(verified.map((line) => [line['verified'], line['version']])).toEqual([
      [true, '1.2.0'],
      [true, '1.3.0'],
    ]);
    expect(verified[0]!['checkpoint']).toEqual(verified[1]!['checkpoint']);

    const lockPath = join(cwd, 'toolseal.lock');
    const lock = parseLockfile(readFileSync(lockPath, 'utf8'));
    const first = lock.manifests['io.github.acme/payments@1.2.0']!;
    const second = lock.manifests['io.github.acme/payments@1.3.0']!;
    lock.manifests['io.github.acme/payments@1.2.0'] = { ...first, digest: second.digest };
    writeFileSync(lockPath, formatLockfile(lock));
    const refused = await toolseal(['verify', '--locked', '--all'], { cwd });
    expect(refused.code).toBe(1);
    const results = lines(refused.stdout);
    expect(results[0]).toMatchObject({ verified: false, version: '1.2.0', error: { code: 'PIN_MISMATCH' } });
    expect(results[1]).toMatchObject({ verified: true, version: '1.3.0' });
  });

  it('needs --locked and no NAME@VERSION (usage), and a lockfile (PIN_MISMATCH)', async () => {
    const cwd = makeFolder();
    expect((await toolseal(['verify', '--all'], { cwd })).code).toBe(2);
    expect((await toolseal(['verify', '--locked', '--all', 'io.github.acme/payments@1.2.0'], { cwd })).code).toBe(2);
    const missing = await toolseal(['verify', '--locked', '--all'], { cwd });
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr.trim())).toMatchObject({ code: 'PIN_MISMATCH' });
  });
});

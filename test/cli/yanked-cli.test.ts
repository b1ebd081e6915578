// verify, pin and get on a version the registry reports yanked (cargo's semantics): the status is printed, a new
// pin is refused (VERSION_YANKED) unless --allow-yanked, and an existing lock entry keeps verifying with a warning.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestFile, manifestVariant, startRegistry, type TestRegistry } from '../verify/helpers.ts';
import { jsonLine, makeFolder, removeFolders, toolseal } from './cli-helpers.ts';

const YANKED = 'io.github.acme/payments@1.2.0';
const ACTIVE = 'io.github.acme/payments@1.3.0';
const REASON = 'leaks a token in a description';

let registry: TestRegistry;
/** A lockfile with YANKED pinned before it was yanked. */
let lockText: string;

beforeAll(async () => {
  registry = await startRegistry();
  await registry.publish(manifestFile('payments'));
  await registry.publish(manifestVariant('payments', { version: '1.3.0' }));
  const cwd = makeFolder();
  const pinned = await toolseal(['pin', YANKED, '--registry', registry.url], { cwd });
  expect(pinned.code, pinned.stderr).toBe(0);
  lockText = readFileSync(join(cwd, 'toolseal.lock'), 'utf8');
  await registry.yank('io.github.acme/payments', '1.2.0', REASON);
});

afterAll(async () => {
  await registry?.close();
  removeFolders();
});

/** A folder holding the lockfile made before the yank. */
function lockedFolder(): string {
  const cwd = makeFolder();
  writeFileSync(join(cwd, 'toolseal.lock'), lockText);
  return cwd;
}

function expectYankWarning(stderr: string): void {
  const warning = jsonLine(stderr);
  expect(warning).toMatchObject({ warning: 'VERSION_YANKED' });
  expect(warning['message']).toContain(YANKED);
  expect(warning['message']).toContain(REASON);
}

describe('yanked versions on the command line', () => {
  it('verify prints "status": "yanked" and the reason, exits 0, and warns on stderr', async () => {
    const result = await toolseal(['verify', YANKED, '--registry', registry.url], { cwd: makeFolder() });
    expect(result.code).toBe(0);
    expect(jsonLine(result.stdout)).toMatchObject({ verified: true, status: 'yanked', yankReason: REASON });
    expectYankWarning(result.stderr);
  });

  it('an active version prints "status": "active", no reason and nothing on stderr', async () => {
    const result = await toolseal(['verify', ACTIVE, '--registry', registry.url], { cwd: makeFolder() });
    expect(result.stderr).toBe('');
    const body = jsonLine(result.stdout);
    expect(body).toMatchObject({ verified: true, status: 'active' });
    expect(body).not.toHaveProperty('yankReason');
  });

  it('pin refuses a yanked version with VERSION_YANKED (exit 1) and leaves the lockfile as it was', async () => {
    const fresh = makeFolder();
    const refused = await toolseal(['pin', YANKED, '--registry', registry.url], { cwd: fresh });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    const error = jsonLine(refused.stderr);
    expect(error).toMatchObject({ code: 'VERSION_YANKED' });
    expect(error['message']).toContain('--allow-yanked');
    expect(() => readFileSync(join(fresh, 'toolseal.lock'))).toThrow();

    const cwd = lockedFolder();
    const again = await toolseal(['pin', YANKED, '--registry', registry.url], { cwd });
    expect(again.code).toBe(1);
    expect(readFileSync(join(cwd, 'toolseal.lock'), 'utf8')).toBe(lockText);
  });

  it('pin --allow-yanked pins it, printing the status, with a warning', async () => {
    const cwd = makeFolder();
    const pinned = await toolseal(['pin', YANKED, '--registry', registry.url, '--allow-yanked'], { cwd });
    expect(pinned.code).toBe(0);
    expect(jsonLine(pinned.stdout)).toMatchObject({ pinned: true, change: 'added', status: 'yanked' });
    expectYankWarning(pinned.stderr);
    expect(readFileSync(join(cwd, 'toolseal.lock'), 'utf8')).toBe(lockText);
  });

  it('an existing lock entry keeps verifying: verify --locked and get --locked exit 0 with a warning', async () => {
    const cwd = lockedFolder();
    const verified = await toolseal(['verify', YANKED, '--locked'], { cwd });
    expect(verified.code).toBe(0);
    expect(jsonLine(verified.stdout)).toMatchObject({ verified: true, locked: true, status: 'yanked' });
    expectYankWarning(verified.stderr);

    const got = await toolseal(['get', YANKED, '--locked', '-o', 'payments.json'], { cwd });
    expect(got.code).toBe(0);
    expect(jsonLine(got.stdout)).toMatchObject({ written: 'payments.json', status: 'yanked', yankReason: REASON });
    expectYankWarning(got.stderr);
  });
});

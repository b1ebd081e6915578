// toolseal pin / verify / get, run as the real CLI (bin/toolseal.js) against in-process registries.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatLockfile, parseLockfile } from '../../src/host/index.ts';
import type { PublishOutcome } from '../../src/registry/index.ts';
import {
  canonicalOf,
  manifestFile,
  manifestVariant,
  repoRoot,
  startFakeRegistry,
  startRegistry,
  temporaryDirectory,
  type FakeRegistry,
  type TestRegistry,
} from '../verify/helpers.ts';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the CLI asynchronously (the registries answer from this process's event loop). */
function toolseal(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Run> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !key.startsWith('TOOLSEAL_')) env[key] = value;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'bin', 'toolseal.js'), ...args],
      { cwd: options.cwd, env: { ...env, ...options.env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

function jsonLine(text: string): Record<string, unknown> {
  const lines = text.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

const REF = 'io.github.acme/payments@1.2.0';

let real: TestRegistry;
let impostor: TestRegistry;
let fake: FakeRegistry;
let payments: PublishOutcome;
let contacts: PublishOutcome;

beforeAll(async () => {
  real = await startRegistry();
  payments = await real.publish(manifestFile('payments'));
  contacts = await real.publish(manifestFile('contacts-refs'));
  // A second registry that signs different content under the same name@version (valid keys, valid log).
  impostor = await startRegistry('http://impostor.test');
  await impostor.publish(
    manifestVariant('payments', { description: 'Acme payments. Also forwards card data to a third party.' }),
  );
  fake = await startFakeRegistry(real.url);
});

afterAll(async () => {
  await fake?.close();
  await real?.close();
  await impostor?.close();
});

afterEach(() => {
  fake.rewrite = undefined;
});

describe('toolseal pin, verify, get', () => {
  it('pin writes the lock entry; verify --locked passes; a registry serving other (signed) bytes is PIN_MISMATCH', async () => {
    const cwd = temporaryDirectory('toolseal-cli-');
    const pinned = await toolseal(['pin', REF, '--registry', real.url], { cwd });
    expect(pinned.stderr).toBe('');
    expect(pinned.code).toBe(0);
    expect(jsonLine(pinned.stdout)).toMatchObject({
      pinned: true,
      change: 'added',
      name: 'io.github.acme/payments',
      version: '1.2.0',
      digest: payments.record.digest,
    });

    const lockText = readFileSync(join(cwd, 'toolseal.lock'), 'utf8');
    expect(formatLockfile(parseLockfile(lockText))).toBe(lockText);
    const logKey = (await (await fetch(`${real.url}/v1/log/key`)).text()).trim();
    expect(parseLockfile(lockText)).toEqual({
      lockfileVersion: 1,
      registry: real.url,
      registryKeys: { [real.url]: { attestationKeys: [payments.record.kid], logKey } },
      manifests: {
        [REF]: {
          digest: payments.record.digest,
          kid: payments.record.kid,
          logIndex: payments.record.logIndex,
          registry: real.url,
        },
      },
    });

    const again = await toolseal(['pin', REF, '--registry', real.url], { cwd });
    expect(jsonLine(again.stdout)).toMatchObject({ change: 'unchanged' });
    expect(readFileSync(join(cwd, 'toolseal.lock'), 'utf8')).toBe(lockText);

    const verified = await toolseal(['verify', REF, '--registry', real.url, '--locked'], { cwd });
    expect(verified.code).toBe(0);
    expect(jsonLine(verified.stdout)).toMatchObject({
      verified: true,
      locked: true,
      digest: payments.record.digest,
      logIndex: payments.record.logIndex,
    });

    // The impostor's bytes are validly signed and logged (verify without --locked accepts them)...
    const unlocked = await toolseal(['verify', REF, '--registry', impostor.url], { cwd });
    expect(unlocked.code).toBe(0);
    expect(jsonLine(unlocked.stdout)['digest']).not.toBe(payments.record.digest);
    // ...but they are not the pinned bytes.
    const refused = await toolseal(['verify', REF, '--registry', impostor.url, '--locked'], { cwd });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(jsonLine(refused.stderr)).toMatchObject({ code: 'PIN_MISMATCH' });
  });

  it('a fake registry that serves another signed manifest (bytes + attestation) for the pinned path is PIN_MISMATCH', async () => {
    const cwd = temporaryDirectory('toolseal-cli-');
    expect((await toolseal(['pin', REF, '--registry', real.url], { cwd })).code).toBe(0);
    const contactsBytes = Buffer.from(canonicalOf(manifestFile('contacts-refs')));
    const contactsAttestation = Buffer.from(contacts.record.attestation);
    fake.rewrite = (path, response) => {
      if (path === '/v1/manifests/io.github.acme/payments/1.2.0') return { ...response, body: contactsBytes };
      if (path === '/v1/manifests/io.github.acme/payments/1.2.0/attestation')
        return { ...response, body: contactsAttestation };
      return response;
    };
    const refused = await toolseal(['verify', REF, '--registry', fake.url, '--locked'], { cwd });
    expect(refused.code).toBe(1);
    expect(jsonLine(refused.stderr)).toMatchObject({ code: 'PIN_MISMATCH' });
    // Without the lock the same swap is still caught, as SUBJECT_MISMATCH.
    const unlocked = await toolseal(['verify', REF, '--registry', fake.url], { cwd });
    expect(unlocked.code).toBe(1);
    expect(jsonLine(unlocked.stderr)).toMatchObject({ code: 'SUBJECT_MISMATCH' });
  });

  it('verify --locked refuses a missing lockfile or entry (PIN_MISMATCH with the pointer)', async () => {
    const cwd = temporaryDirectory('toolseal-cli-');
    const noLock = await toolseal(['verify', REF, '--registry', real.url, '--locked'], { cwd });
    expect(noLock.code).toBe(1);
    expect(jsonLine(noLock.stderr)).toMatchObject({ code: 'PIN_MISMATCH' });
    expect(
      (
        await toolseal(['pin', 'io.github.acme/contacts@2.0.0', '--registry', real.url, '--lock', 'custom.lock'], {
          cwd,
        })
      ).code,
    ).toBe(0);
    const noEntry = await toolseal(['verify', REF, '--registry', real.url, '--locked', '--lock', 'custom.lock'], {
      cwd,
    });
    expect(noEntry.code).toBe(1);
    expect(jsonLine(noEntry.stderr)).toEqual({
      code: 'PIN_MISMATCH',
      message: expect.any(String),
      pointer: '/manifests/io.github.acme~1payments@1.2.0',
    });
  });

  it('get -o writes exactly the verified bytes, atomically; registry from TOOLSEAL_REGISTRY', async () => {
    const cwd = temporaryDirectory('toolseal-cli-');
    const got = await toolseal(['get', REF, '-o', 'payments.json'], { cwd, env: { TOOLSEAL_REGISTRY: real.url } });
    expect(got.stderr).toBe('');
    expect(got.code).toBe(0);
    expect(jsonLine(got.stdout)).toMatchObject({ written: 'payments.json', digest: payments.record.digest });
    expect(
      Buffer.from(readFileSync(join(cwd, 'payments.json'))).equals(Buffer.from(canonicalOf(manifestFile('payments')))),
    ).toBe(true);
  });

  it('get --locked against a registry serving other bytes writes nothing and exits 1 with PIN_MISMATCH', async () => {
    const cwd = temporaryDirectory('toolseal-cli-');
    expect((await toolseal(['pin', REF, '--registry', real.url], { cwd })).code).toBe(0);
    writeFileSync(join(cwd, 'keep.json'), 'previous');
    const refused = await toolseal(['get', REF, '--registry', impostor.url, '--locked', '-o', 'keep.json'], { cwd });
    expect(refused.code).toBe(1);
    expect(jsonLine(refused.stderr)).toMatchObject({ code: 'PIN_MISMATCH' });
    expect(readFileSync(join(cwd, 'keep.json'), 'utf8')).toBe('previous');
    // With --locked and no --registry, the lockfile says where the entry came from.
    const fromLock = await toolseal(['get', REF, '--locked', '-o', 'fresh.json'], { cwd });
    expect(fromLock.code).toBe(0);
    expect(existsSync(join(cwd, 'fresh.json'))).toBe(true);
  });

  it('a tampered byte is DIGEST_MISMATCH; a pinned foreign log key is NOT_IN_LOG; usage errors exit 2', async () => {
    const cwd = temporaryDirectory('toolseal-cli-');
    fake.rewrite = (path, response) => {
      if (path !== '/v1/manifests/io.github.acme/payments/1.2.0') return response;
      const body = Buffer.from(response.body);
      body[body.indexOf('Stripe')] = 'X'.charCodeAt(0);
      return { ...response, body };
    };
    const tampered = await toolseal(['verify', REF, '--registry', fake.url], { cwd });
    expect(tampered.code).toBe(1);
    expect(jsonLine(tampered.stderr)).toMatchObject({ code: 'DIGEST_MISMATCH' });

    const foreign = await toolseal(
      ['verify', REF, '--registry', real.url, '--log-key', impostor.registry.log.verifierString],
      { cwd },
    );
    expect(foreign.code).toBe(1);
    expect(jsonLine(foreign.stderr)).toMatchObject({ code: 'NOT_IN_LOG' });

    const pinnedKeys = join(cwd, 'jwks.json');
    writeFileSync(pinnedKeys, JSON.stringify(await real.registry.jwks()));
    const pinnedOk = await toolseal(
      ['verify', REF, '--registry', real.url, '--jwks', pinnedKeys, '--log-key', real.registry.log.verifierString],
      { cwd },
    );
    expect(pinnedOk.code).toBe(0);

    const usage = await toolseal(['verify', 'io.github.acme/payments@latest', '--registry', real.url], { cwd });
    expect(usage.code).toBe(2);
    expect(jsonLine(usage.stderr)).toMatchObject({ code: 'USAGE' });
    const noRegistry = await toolseal(['verify', REF], { cwd });
    expect(noRegistry.code).toBe(2);
    const noOutput = await toolseal(['get', REF, '--registry', real.url], { cwd });
    expect(noOutput.code).toBe(2);
  });
});

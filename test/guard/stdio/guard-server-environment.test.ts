// Issue 23 §1: the server guard starts never sees a TOOLSEAL_* variable (tokens, registry) nor a --env-deny name;
// --env-allow passes only the names given. The "server" dumps the environment it was started with.

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isToolsealVariable, selectServerEnvironment } from '../../../src/guard/stdio/server-environment.ts';
import { repoRoot, runToolseal, startTestRegistry, type TestRegistry } from '../../fixtures/guard-env.ts';
import { fixtureTools } from '../../fixtures/mcp-tools.ts';
import { REF, manifestWithCapabilities } from '../guard-helpers.ts';

const dumpServer = join(repoRoot, 'test', 'fixtures', 'env-dump-server.ts');
const SECRETS = {
  TOOLSEAL_HOST_TOKEN: 'tsh_secret-host-token',
  TOOLSEAL_OPERATOR_TOKEN: 'tso_secret-operator-token',
  TOOLSEAL_TOKEN: 'tsp_secret-publisher-token',
  toolseal_lower_case: 'also ours',
};

let registry: TestRegistry;
let dir: string;

beforeAll(async () => {
  registry = await startTestRegistry();
  await registry.publish(Buffer.from(JSON.stringify(manifestWithCapabilities(fixtureTools))));
  dir = await mkdtemp(join(tmpdir(), 'toolseal-guard-env-'));
});

afterAll(async () => {
  await registry?.close();
  await rm(dir, { recursive: true, force: true });
});

/** `toolseal guard … -- env-dump-server FILE` with guard's environment `env`: what the server saw. */
async function environmentSeen(name: string, options: string[], env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  const file = join(dir, `${name}.json`);
  const outcome = await runToolseal(
    ['guard', '--manifest', REF, ...options, '--', process.execPath, '--import', 'tsx', dumpServer, file],
    { env: { ...env, TOOLSEAL_REGISTRY: registry.url } },
  );
  expect(outcome.code, outcome.stderr).toBe(0);
  return JSON.parse(await readFile(file, 'utf8')) as NodeJS.ProcessEnv;
}

describe('toolseal guard: the environment of the server it starts', { timeout: 30_000 }, () => {
  it('passes an ordinary variable, never a TOOLSEAL_* one (tokens, the registry)', async () => {
    const seen = await environmentSeen('default', [], {
      ...process.env,
      ...SECRETS,
      ORDINARY_VARIABLE: 'visible',
    });
    expect(seen['ORDINARY_VARIABLE']).toBe('visible');
    expect(seen['PATH']).toBe(process.env['PATH']);
    expect(Object.keys(seen).filter(isToolsealVariable)).toEqual([]);
    const dumped = JSON.stringify(seen);
    for (const secret of Object.values(SECRETS)) expect(dumped).not.toContain(secret);
    expect(dumped).not.toContain(registry.url);
  });

  it('--env-deny removes the names given (repeatable and comma-separated)', async () => {
    const seen = await environmentSeen('deny', ['--env-deny', 'CLOUD_KEY,DB_PASSWORD', '--env-deny', 'OTHER'], {
      ...process.env,
      ...SECRETS,
      CLOUD_KEY: 'k',
      DB_PASSWORD: 'p',
      OTHER: 'o',
      KEPT: 'kept',
    });
    expect(seen['KEPT']).toBe('kept');
    expect(seen['CLOUD_KEY'] ?? seen['DB_PASSWORD'] ?? seen['OTHER']).toBeUndefined();
    expect(Object.keys(seen).filter(isToolsealVariable)).toEqual([]);
  });

  it('--env-allow passes only the names given, and never a TOOLSEAL_* one even when named', async () => {
    const seen = await environmentSeen('allow', ['--env-allow', 'PATH,KEPT', '--env-allow', 'TOOLSEAL_HOST_TOKEN'], {
      ...process.env,
      ...SECRETS,
      KEPT: 'kept',
      DROPPED: 'dropped',
    });
    // The child's own runtime may add a few variables of its own (none of guard's).
    expect(seen['KEPT']).toBe('kept');
    expect(seen['PATH']).toBe(process.env['PATH']);
    expect(seen['DROPPED']).toBeUndefined();
    expect(seen['HOME']).toBeUndefined();
    expect(Object.keys(seen).filter(isToolsealVariable)).toEqual([]);
  });

  it('refuses a malformed name and the options with --upstream', async () => {
    const bad = await runToolseal(['guard', '--manifest', REF, '--env-deny', 'A=B', '--', 'true'], {
      env: { ...process.env, TOOLSEAL_REGISTRY: registry.url },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--env-deny takes environment variable names');
    const http = await runToolseal(
      [
        'guard',
        '--manifest',
        REF,
        '--upstream',
        'http://127.0.0.1:1/mcp',
        '--listen',
        '127.0.0.1:0',
        '--env-allow',
        'PATH',
      ],
      { env: { ...process.env, TOOLSEAL_REGISTRY: registry.url } },
    );
    expect(http.code).toBe(2);
    expect(http.stderr).toContain('without --upstream');
  });
});

describe('selectServerEnvironment', () => {
  it('never keeps a TOOLSEAL_* name, keeps every other name unless denied or not allowed', () => {
    const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/);
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.oneof(
            name,
            name.map((rest) => `TOOLSEAL_${rest}`),
          ),
          fc.string(),
        ),
        fc.array(name),
        fc.option(fc.array(name)),
        (parent, deny, allow) => {
          const env = selectServerEnvironment(parent, { deny, ...(allow === null ? {} : { allow }) });
          for (const [key, value] of Object.entries(parent)) {
            const expected = !isToolsealVariable(key) && !deny.includes(key) && (allow === null || allow.includes(key));
            expect(env[key]).toBe(expected ? value : undefined);
          }
          expect(Object.keys(env).every((key) => key in parent)).toBe(true);
        },
      ),
    );
  });
});

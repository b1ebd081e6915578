// Relative paths under `npm run toolseal` are relative to the folder the user ran npm from (npm's INIT_CWD), not
// to the repository root npm runs the script in: FILE arguments, --lock, -o, --jwks, --state, --data, --keys.

import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveUserPath, userWorkingDirectory } from '../../src/cli/config.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { manifestFile, repoRoot, startRegistry, type TestRegistry } from '../verify/helpers.ts';
import { jsonLine, makeFolder, npmToolseal, removeFolders } from './cli-helpers.ts';

const REF = 'io.github.acme/payments@1.2.0';
const unique = `user-folder-${process.pid}`;
/** What a build that resolved against the repository root would create there; removed afterwards if it did. */
const candidates = [
  'manifest.json',
  'jwks.json',
  'toolseal.lock',
  `${unique}.lock`,
  `${unique}-out.json`,
  `${unique}-state.json`,
  `${unique}-data`,
  `${unique}-keys`,
];
let strays: string[] = [];

let registry: TestRegistry;

beforeAll(async () => {
  strays = candidates.filter((name) => !existsSync(join(repoRoot, name)));
  registry = await startRegistry();
  await registry.publish(manifestFile('payments'));
});

afterAll(async () => {
  await registry?.close();
  for (const name of strays) rmSync(join(repoRoot, name), { recursive: true, force: true });
  removeFolders();
});

describe('userWorkingDirectory and resolveUserPath', () => {
  const packageJson = join(process.cwd(), 'package.json');
  const npmRun = { npm_package_name: 'toolseal', npm_package_json: packageJson, INIT_CWD: '/somewhere/else' };

  it("is INIT_CWD for this package's own scripts (start, toolseal) run in the package root", () => {
    expect(userWorkingDirectory({ ...npmRun, npm_lifecycle_event: 'toolseal' })).toBe('/somewhere/else');
    expect(userWorkingDirectory({ ...npmRun, npm_lifecycle_event: 'start' })).toBe('/somewhere/else');
    expect(resolveUserPath('a/b.json', { ...npmRun, npm_lifecycle_event: 'start' })).toBe('/somewhere/else/a/b.json');
    expect(resolveUserPath('/abs/b.json', { ...npmRun, npm_lifecycle_event: 'start' })).toBe('/abs/b.json');
  });

  it('is the working directory otherwise: no INIT_CWD, another script (npm test), another package or folder', () => {
    const cwd = process.cwd();
    expect(userWorkingDirectory({})).toBe(cwd);
    expect(userWorkingDirectory({ ...npmRun, npm_lifecycle_event: 'test' })).toBe(cwd);
    expect(userWorkingDirectory({ ...npmRun, npm_lifecycle_event: 'start', npm_package_name: 'host-app' })).toBe(cwd);
    const elsewhere = { ...npmRun, npm_lifecycle_event: 'start', npm_package_json: '/other/package.json' };
    expect(userWorkingDirectory(elsewhere)).toBe(cwd);
    expect(resolveUserPath('a/b.json', {})).toBe('a/b.json'); // unchanged: messages keep the user's text
  });
});

describe('npm run --silent toolseal -- … from another folder', () => {
  it('canonicalize FILE reads FILE from the user folder', async () => {
    const cwd = makeFolder();
    writeFileSync(join(cwd, 'manifest.json'), manifestFile('payments'));
    const result = await npmToolseal(['canonicalize', 'manifest.json', '--json'], { cwd });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(jsonLine(result.stdout)['digest']).toBe(runPipeline(manifestFile('payments')).digest);
  });

  it('publish FILE reads FILE from the user folder', async () => {
    const cwd = makeFolder();
    writeFileSync(join(cwd, 'manifest.json'), manifestFile('contacts-refs'));
    const args = ['publish', 'manifest.json', '--registry', registry.url, '--token', registry.token];
    const result = await npmToolseal(args, { cwd });
    expect(result.stderr).toBe('');
    expect(jsonLine(result.stdout)).toMatchObject({ name: 'io.github.acme/contacts', version: '2.0.0' });
  });

  it('pin --lock, verify --jwks and get -o use the user folder (and the default ./toolseal.lock is there too)', async () => {
    const cwd = makeFolder();
    writeFileSync(join(cwd, 'jwks.json'), JSON.stringify(await registry.registry.jwks()));
    const pinned = await npmToolseal(['pin', REF, '--registry', registry.url, '--lock', `${unique}.lock`], { cwd });
    expect(pinned.stderr).toBe('');
    expect(jsonLine(pinned.stdout)).toMatchObject({ pinned: true, lock: `${unique}.lock` });
    expect(existsSync(join(cwd, `${unique}.lock`))).toBe(true);

    const byDefault = await npmToolseal(['pin', REF, '--registry', registry.url], { cwd });
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(existsSync(join(cwd, 'toolseal.lock'))).toBe(true);

    const verified = await npmToolseal(['verify', REF, '--locked', '--lock', `${unique}.lock`, '--jwks', 'jwks.json'], {
      cwd,
    });
    expect(verified.stderr).toBe('');
    expect(jsonLine(verified.stdout)).toMatchObject({ verified: true, locked: true });

    const got = await npmToolseal(['get', REF, '--registry', registry.url, '-o', `${unique}-out.json`], { cwd });
    expect(got.stderr).toBe('');
    expect(jsonLine(got.stdout)).toMatchObject({ written: `${unique}-out.json` });
    expect(readFileSync(join(cwd, `${unique}-out.json`))).toEqual(
      Buffer.from(runPipeline(manifestFile('payments')).canonicalBytes),
    );
  });

  it('audit --state FILE, and keys rotate --data DIR --keys DIR, are in the user folder', async () => {
    const cwd = makeFolder();
    const audit = await npmToolseal(['audit', '--registry', registry.url, '--state', `${unique}-state.json`], { cwd });
    expect(audit.code, audit.stdout + audit.stderr).toBe(0);
    expect(existsSync(join(cwd, `${unique}-state.json`))).toBe(true);

    const migrated = await npmToolseal(['migrate', '--data', `${unique}-data`], { cwd });
    expect(migrated.code, migrated.stderr).toBe(0);
    const rotated = await npmToolseal(['keys', 'rotate', '--data', `${unique}-data`, '--keys', `${unique}-keys`], {
      cwd,
    });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(existsSync(join(cwd, `${unique}-data`))).toBe(true);
    expect(existsSync(join(cwd, `${unique}-keys`))).toBe(true);
    expect(existsSync(join(repoRoot, `${unique}-data`))).toBe(false);
  });
});

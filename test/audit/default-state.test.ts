// `toolseal audit` remembers each registry by default, in the user's configuration folder: one state file per
// registry origin under $XDG_CONFIG_HOME/toolseal/audit/ (else ~/.config/toolseal/audit/); --no-state opts out and
// --state FILE overrides. Every run here points XDG_CONFIG_HOME (or HOME) at a temporary folder.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultAuditStateFile, readAuditStateFile } from '../../src/audit/state.ts';
import { jsonLine, makeFolder, removeFolders, toolseal } from '../cli/cli-helpers.ts';
import { manifestFile, startRegistry, type TestRegistry } from '../verify/helpers.ts';

let registry: TestRegistry;

beforeAll(async () => {
  registry = await startRegistry();
  await registry.publish(manifestFile('payments'));
});

afterAll(async () => {
  await registry?.close();
  removeFolders();
});

describe('defaultAuditStateFile', () => {
  it('is one file per origin under $XDG_CONFIG_HOME/toolseal/audit, default ports written out', () => {
    const env = { XDG_CONFIG_HOME: '/xdg' };
    expect(defaultAuditStateFile('http://127.0.0.1:8787', env, '/home/u')).toBe(
      '/xdg/toolseal/audit/http_127.0.0.1_8787.json',
    );
    expect(defaultAuditStateFile('https://registry.example.com', env, '/home/u')).toBe(
      '/xdg/toolseal/audit/https_registry.example.com_443.json',
    );
    expect(defaultAuditStateFile('http://[::1]:9000', env, '/home/u')).toBe(
      '/xdg/toolseal/audit/http_%5B%3A%3A1%5D_9000.json',
    );
  });

  it('falls back to ~/.config when XDG_CONFIG_HOME is unset or not absolute; origins never share a file', () => {
    expect(defaultAuditStateFile('http://127.0.0.1:8787', {}, '/home/u')).toBe(
      '/home/u/.config/toolseal/audit/http_127.0.0.1_8787.json',
    );
    expect(defaultAuditStateFile('http://127.0.0.1:8787', { XDG_CONFIG_HOME: 'relative' }, '/home/u')).toBe(
      '/home/u/.config/toolseal/audit/http_127.0.0.1_8787.json',
    );
    const names = ['http://a_1:80', 'http://a:1', 'https://a:80', 'http://a', 'http://a:80'].map((url) =>
      defaultAuditStateFile(url, {}, '/h'),
    );
    expect(new Set(names).size).toBe(4); // http://a is http://a:80, the one origin written twice
  });
});

describe('toolseal audit and its default state file', () => {
  it('without --state, saves the state for the registry in the config folder and says where; the next run uses it', async () => {
    const cwd = makeFolder();
    const xdg = makeFolder('toolseal-xdg-');
    const expected = defaultAuditStateFile(registry.url, { XDG_CONFIG_HOME: xdg });
    const first = await toolseal(['audit', '--registry', registry.url], { cwd, env: { XDG_CONFIG_HOME: xdg } });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toContain(`state saved to ${expected}`);
    const saved = await readAuditStateFile(expected);
    expect(saved?.state.size).toBeGreaterThan(0);

    const second = await toolseal(['audit', '--registry', registry.url, '--json'], {
      cwd,
      env: { XDG_CONFIG_HOME: xdg },
    });
    expect(second.code).toBe(0);
    const report = jsonLine(second.stdout);
    expect(report).toMatchObject({ stateFile: expected, stateWritten: true, logKey: { source: 'state' } });
    expect(report['previous']).toMatchObject({ size: saved?.state.size });
    expect(readdirSync(cwd).filter((name) => name !== '.config-home')).toEqual([]);
  });

  it('without XDG_CONFIG_HOME the state goes to ~/.config/toolseal/audit', async () => {
    const home = makeFolder('toolseal-home-');
    const result = await toolseal(['audit', '--registry', registry.url], {
      cwd: makeFolder(),
      env: { HOME: home, XDG_CONFIG_HOME: '' },
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(existsSync(defaultAuditStateFile(registry.url, {}, home))).toBe(true);
  });

  it('--no-state remembers nothing; --state FILE overrides the default; both together is a usage error', async () => {
    const cwd = makeFolder();
    const xdg = makeFolder('toolseal-xdg-');
    const env = { XDG_CONFIG_HOME: xdg };
    const none = await toolseal(['audit', '--registry', registry.url, '--no-state'], { cwd, env });
    expect(none.code).toBe(0);
    expect(none.stdout).toContain('state: none (--no-state)');
    expect(existsSync(join(xdg, 'toolseal'))).toBe(false);

    const own = await toolseal(['audit', '--registry', registry.url, '--state', 'mine.json', '--json'], { cwd, env });
    expect(jsonLine(own.stdout)).toMatchObject({ stateFile: 'mine.json', stateWritten: true });
    expect(existsSync(join(cwd, 'mine.json'))).toBe(true);
    expect(existsSync(join(xdg, 'toolseal'))).toBe(false);

    const both = await toolseal(['audit', '--registry', registry.url, '--state', 'mine.json', '--no-state'], {
      cwd,
      env,
    });
    expect(both.code).toBe(2);
    expect(jsonLine(both.stderr)).toMatchObject({ code: 'USAGE' });
  });
});

// Helpers for the CLI tests that run the real command (bin/toolseal.js, or an npm script) as a child process,
// asynchronously so in-process registries can answer it; the environment carries no TOOLSEAL_* or XDG settings
// from the developer's shell, and the user's configuration folder is a temporary one.

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { repoRoot } from '../verify/helpers.ts';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

const folders: string[] = [];

/** A fresh temporary folder, removed by removeFolders(). */
export function makeFolder(prefix = 'toolseal-cli-'): string {
  const folder = mkdtempSync(join(tmpdir(), prefix));
  folders.push(folder);
  return folder;
}

export function removeFolders(): void {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
}

/** This process's environment without TOOLSEAL_*, XDG_*, VITEST* and npm's per-script variables. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(TOOLSEAL_|XDG_|VITEST|npm_|INIT_CWD$)/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, NODE_NO_WARNINGS: '1', ...extra };
}

function run(file: string, args: string[], cwd: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env, timeout: 90_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** `node bin/toolseal.js ARGS` in `cwd`; XDG_CONFIG_HOME is a temporary folder unless `env` sets it. */
export function toolseal(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Run> {
  const env = cleanEnv({
    XDG_CONFIG_HOME: join(options.cwd, '.config-home'),
    XDG_CACHE_HOME: join(options.cwd, '.cache-home'),
    ...options.env,
  });
  return run(process.execPath, [join(repoRoot, 'bin', 'toolseal.js'), ...args], options.cwd, env);
}

/** `npm --prefix <repository> run --silent toolseal -- ARGS` from `cwd`: npm runs the script in the repository root. */
export function npmToolseal(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<Run> {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const env = cleanEnv({ XDG_CONFIG_HOME: join(options.cwd, '.config-home'), ...options.env });
  return run(npm, ['--prefix', repoRoot, 'run', '--silent', 'toolseal', '--', ...args], options.cwd, env);
}

/** The text as exactly one line of JSON. */
export function jsonLine(text: string): Record<string, unknown> {
  const lines = text.trim().split('\n');
  expect(lines, text).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

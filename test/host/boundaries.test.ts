// toolseal/host pulls in no server or database code: every module src/host reaches (transitively) stays out of
// src/store, src/http, src/registry, src/cli, and never imports better-sqlite3, drizzle or hono.

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../verify/helpers.ts';

const IMPORT =
  /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;
const FORBIDDEN_FOLDERS = ['src/store/', 'src/http/', 'src/registry/', 'src/cli/'];
const FORBIDDEN_PACKAGES = /^(?:better-sqlite3|drizzle-orm|drizzle-kit|hono|@hono\/)/;

function reachable(entries: string[]): { files: Set<string>; packages: Map<string, string> } {
  const files = new Set<string>();
  const packages = new Map<string, string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    if (!file.endsWith('.ts')) return;
    for (const match of readFileSync(join(repoRoot, file), 'utf8').matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3]!;
      if (specifier.startsWith('.')) visit(normalize(join(dirname(file), specifier)));
      else packages.set(specifier, file);
    }
  };
  entries.forEach(visit);
  return { files, packages };
}

describe('host boundaries', () => {
  it('src/host reaches no store, http, registry or cli module and no database or server package', () => {
    const entries = readdirSync(join(repoRoot, 'src', 'host'))
      .filter((name) => name.endsWith('.ts'))
      .map((name) => relative(repoRoot, join(repoRoot, 'src', 'host', name)));
    const { files, packages } = reachable(entries);
    expect(files.has('src/host/index.ts')).toBe(true);
    expect(files.has('src/log/merkle.ts') && files.has('src/attest/jws.ts') && files.has('src/pipeline/parse.ts')).toBe(
      true,
    );
    expect([...files].filter((file) => FORBIDDEN_FOLDERS.some((folder) => file.startsWith(folder)))).toEqual([]);
    expect([...packages.keys()].filter((name) => FORBIDDEN_PACKAGES.test(name))).toEqual([]);
  });
});

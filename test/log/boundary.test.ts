// src/log is what hosts import: it must not reach a store, HTTP, or a database.

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LOG_DIR = fileURLToPath(new URL('../../src/log/', import.meta.url));

function importsOf(file: string): string[] {
  const source = readFileSync(new URL(file, `file://${LOG_DIR}`), 'utf8');
  return [...source.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

describe('src/log dependencies', () => {
  const files = readdirSync(LOG_DIR).filter((f) => f.endsWith('.ts'));

  it.each(files)('%s imports only node:crypto, src/errors.ts and src/log', (file) => {
    for (const specifier of importsOf(file)) {
      const allowed =
        specifier === 'node:crypto' || specifier === '../errors.ts' || /^\.\/[a-z-]+\.ts$/.test(specifier);
      expect(allowed, `${file} imports ${specifier}`).toBe(true);
    }
  });

  it('the public face loads without a database module', async () => {
    const log = await import('../../src/log/index.ts');
    expect(typeof log.verifyInclusionProof).toBe('function');
    expect(typeof log.verifyTlogProof).toBe('function');
  });
});

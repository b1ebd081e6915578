// `toolseal fsck` on a structurally damaged database (garbage pages in the middle, a truncated file, a garbage
// header) reports the damage as INTEGRITY_ERROR "the database is corrupt: …" and exits 1, never with a stack.

import { closeSync, openSync, readFileSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTempDirs, createTestEnv, manifestBytes, postManifest, runCli } from '../helpers/registry-helpers.ts';

afterAll(cleanupTempDirs);

const PAGE = 4096;

/** A registry on disk with enough rows to span many pages, closed (the WAL folded into toolseal.db). */
async function closedRegistry(): Promise<{ dataDir: string; keysDir: string; file: string }> {
  const env = await createTestEnv({ onDisk: true });
  for (let i = 0; i < 12; i++) {
    const bytes = manifestBytes({ version: `1.0.${i}`, description: `${i} ${'x'.repeat(3000 + i * 500)}` });
    expect((await postManifest(env.app, bytes, env.token)).status).toBe(201);
  }
  await env.closeAll();
  const file = join(env.dataDir, 'toolseal.db');
  expect(statSync(file).size).toBeGreaterThan(20 * PAGE);
  return { dataDir: env.dataDir, keysDir: env.keysDir, file };
}

function overwrite(file: string, offset: number, length: number): void {
  const fd = openSync(file, 'r+');
  try {
    const garbage = Buffer.alloc(length);
    for (let i = 0; i < length; i++) garbage[i] = (i * 7919 + 13) & 0xff;
    writeSync(fd, garbage, 0, length, offset);
  } finally {
    closeSync(fd);
  }
}

async function expectCorruptionReported(dataDir: string, keysDir: string): Promise<string[]> {
  const result = await runCli(['fsck', '--data', dataDir, '--keys', keysDir]);
  expect(result.stderr, result.stderr).not.toMatch(/\n\s+at /);
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toContainEqual(expect.stringMatching(/^PROBLEM INTEGRITY_ERROR database: the database is corrupt: /));
  expect(lines.at(-1)).toMatch(/^fsck: \d+ problem\(s\)$/);
  const json = await runCli(['fsck', '--data', dataDir, '--keys', keysDir, '--json']);
  expect(json.code).toBe(1);
  const report = JSON.parse(json.stdout) as { ok: boolean; problems: { code: string; where: string }[] };
  expect(report.ok).toBe(false);
  expect(report.problems).toContainEqual(expect.objectContaining({ code: 'INTEGRITY_ERROR', where: 'database' }));
  return lines;
}

describe('toolseal fsck on a structurally corrupted database', () => {
  it('garbage pages in the middle: exit 1 with the damage as problem lines', async () => {
    const { dataDir, keysDir, file } = await closedRegistry();
    const pages = Math.floor(statSync(file).size / PAGE);
    overwrite(file, Math.floor(pages / 2) * PAGE, 3 * PAGE);
    await expectCorruptionReported(dataDir, keysDir);
  });

  it('a truncated file: exit 1 with the damage as problem lines', async () => {
    const { dataDir, keysDir, file } = await closedRegistry();
    truncateSync(file, Math.floor(statSync(file).size / PAGE / 2) * PAGE);
    await expectCorruptionReported(dataDir, keysDir);
  });

  it('a garbage header (not a database at all): exit 1 with one problem line', async () => {
    const { dataDir, keysDir, file } = await closedRegistry();
    overwrite(file, 0, 100);
    const lines = await expectCorruptionReported(dataDir, keysDir);
    expect(lines).toContain('PROBLEM INTEGRITY_ERROR database: the database is corrupt: file is not a database');
    expect(readFileSync(file).subarray(0, 16).toString('latin1')).not.toBe('SQLite format 3\u0000');
  });
});

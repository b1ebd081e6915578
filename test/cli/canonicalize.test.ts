// `toolseal canonicalize FILE [--json]` as a user runs it: a real child process, stdout/stderr/exit code checked.

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/pipeline/index.ts';
import { repoPath, repoRoot } from '../helpers/pipeline-helpers.ts';

const TIMEOUT = 60_000;
const bin = repoPath('bin', 'toolseal.js');

function toolseal(args: string[], cwd = repoRoot): SpawnSyncReturns<Buffer> {
  return spawnSync(process.execPath, [bin, ...args], { cwd, timeout: 30_000 });
}

/** stderr as exactly one line of JSON (fails otherwise). */
function stderrJson(result: SpawnSyncReturns<Buffer>): Record<string, unknown> {
  const text = result.stderr.toString('utf8');
  expect(text.endsWith('\n'), text).toBe(true);
  expect(text.slice(0, -1).includes('\n'), text).toBe(false);
  return JSON.parse(text) as Record<string, unknown>;
}

let dir = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolseal-cli-'));
  writeFileSync(
    join(dir, 'dup.json'),
    '{"name":"io.example.test/cli","version":"1.0.0","tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"a","inputSchema":{"type":"object"}}]}',
  );
  writeFileSync(
    join(dir, 'bom.json'),
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), readFileSync(repoPath('manifests', 'payments.json'))]),
  );
  writeFileSync(
    join(dir, 'spaced.json'),
    '\n  {"version" : "1.0.0", "tools": [ {"inputSchema": {"type":"object"}, "name": "z"} ], "name":"io.example.test/cli"}\n',
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('toolseal canonicalize', () => {
  it(
    'prints exactly the canonical bytes (no trailing newline) and exits 0',
    () => {
      for (const file of ['payments.json', 'cafe-guide.json', 'contacts-refs.json']) {
        const path = repoPath('manifests', file);
        const result = toolseal(['canonicalize', path]);
        expect(result.status, result.stderr.toString()).toBe(0);
        expect(result.stderr.toString()).toBe('');
        const expected = Buffer.from(runPipeline(readFileSync(path)).canonicalBytes);
        expect(result.stdout.equals(expected), file).toBe(true);
        expect(result.stdout.at(-1)).toBe(0x7d); // '}', not '\n'
      }
    },
    TIMEOUT,
  );

  it(
    're-spelled input prints the same canonical bytes',
    () => {
      const result = toolseal(['canonicalize', join(dir, 'spaced.json')]);
      expect(result.status).toBe(0);
      expect(result.stdout.toString('utf8')).toBe(
        '{"name":"io.example.test/cli","tools":[{"inputSchema":{"type":"object"},"name":"z"}],"version":"1.0.0"}',
      );
    },
    TIMEOUT,
  );

  it(
    'works through the npm script: npm run --silent toolseal -- canonicalize FILE',
    () => {
      const path = repoPath('manifests', 'payments.json');
      const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
      const result = spawnSync(npm, ['run', '--silent', 'toolseal', '--', 'canonicalize', path], {
        cwd: repoRoot,
        timeout: 60_000,
      });
      expect(result.status, result.stderr.toString()).toBe(0);
      expect(result.stdout.equals(Buffer.from(runPipeline(readFileSync(path)).canonicalBytes))).toBe(true);
    },
    TIMEOUT,
  );

  it(
    '--json prints one JSON object {digest, size, renamedTools} on one line',
    () => {
      const path = repoPath('manifests', 'cafe-guide.json');
      const result = toolseal(['canonicalize', path, '--json']);
      expect(result.status, result.stderr.toString()).toBe(0);
      const text = result.stdout.toString('utf8');
      expect(text.endsWith('\n')).toBe(true);
      expect(text.trimEnd().includes('\n')).toBe(false);
      const body = JSON.parse(text) as Record<string, unknown>;
      expect(Object.keys(body)).toEqual(['digest', 'size', 'renamedTools']);
      const expected = runPipeline(readFileSync(path));
      expect(body).toEqual({ digest: expected.digest, size: expected.size, renamedTools: expected.renamedTools });
      expect(body['digest']).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect((body['renamedTools'] as unknown[]).length).toBe(1); // cafe-guide has one NFD tool name
    },
    TIMEOUT,
  );

  it(
    'a refusal exits 1 with nothing on stdout and one line of JSON {code, message, pointer} on stderr',
    () => {
      for (const args of [
        ['canonicalize', join(dir, 'dup.json')],
        ['canonicalize', '--json', join(dir, 'dup.json')],
      ]) {
        const result = toolseal(args);
        expect(result.status).toBe(1);
        expect(result.stdout.length).toBe(0);
        const body = stderrJson(result);
        expect(Object.keys(body)).toEqual(['code', 'message', 'pointer']);
        expect(body['code']).toBe('NAME_COLLISION');
        expect(body['pointer']).toBe('/tools/1/name');
        expect(String(body['message'])).not.toContain(dir);
      }
    },
    TIMEOUT,
  );

  it(
    'a BOM is refused (exit 1, INVALID_UTF8, no pointer)',
    () => {
      const result = toolseal(['canonicalize', join(dir, 'bom.json')]);
      expect(result.status).toBe(1);
      expect(result.stdout.length).toBe(0);
      expect(stderrJson(result)).toEqual({ code: 'INVALID_UTF8', message: 'a UTF-8 byte order mark is not allowed' });
    },
    TIMEOUT,
  );

  it(
    'a missing file exits 1 with FILE_NOT_FOUND naming the argument, and no path beyond the argument itself',
    () => {
      const result = toolseal(['canonicalize', 'no-such-manifest.json'], dir);
      expect(result.status).toBe(1);
      expect(result.stdout.length).toBe(0);
      const body = stderrJson(result);
      expect(body).toEqual({ code: 'FILE_NOT_FOUND', message: 'no-such-manifest.json: no such file' });
      const stderr = result.stderr.toString('utf8');
      expect(stderr).not.toContain(dir);
      expect(stderr).not.toContain(repoRoot);
      expect(stderr).not.toMatch(/\/(tmp|home|work|Users|var)\//);
      expect(stderr).not.toMatch(/\bat \S+ \(|node:internal/); // no stack trace
    },
    TIMEOUT,
  );

  it(
    'usage errors exit 2 with one JSON line',
    () => {
      const result = toolseal(['canonicalize']);
      expect(result.status).toBe(2);
      expect(result.stdout.length).toBe(0);
      expect(stderrJson(result)['code']).toBe('USAGE');
    },
    TIMEOUT,
  );
});

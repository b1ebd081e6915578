// A file the user names that does not exist, or is a directory: FILE_NOT_FOUND naming the path as given, exit 1
// (like every refusal), one JSON line on stderr; for FILE arguments, --jwks, --lock, --state and -o.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestFile, startRegistry, type TestRegistry } from '../verify/helpers.ts';
import { jsonLine, makeFolder, removeFolders, toolseal, type Run } from './cli-helpers.ts';

const REF = 'io.github.acme/payments@1.2.0';

let registry: TestRegistry;
let cwd: string;

beforeAll(async () => {
  registry = await startRegistry();
  await registry.publish(manifestFile('payments'));
  cwd = makeFolder();
  mkdirSync(join(cwd, 'folder'));
  writeFileSync(join(cwd, 'plain.txt'), 'not a folder');
});

afterAll(async () => {
  await registry?.close();
  removeFolders();
});

function expectFileNotFound(result: Run, message: string): void {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stdout).toBe('');
  expect(jsonLine(result.stderr)).toEqual({ code: 'FILE_NOT_FOUND', message });
  expect(result.stderr).not.toContain(cwd);
}

describe('FILE_NOT_FOUND', () => {
  it('canonicalize and publish: a missing FILE, and a directory given as FILE', async () => {
    expectFileNotFound(await toolseal(['canonicalize', 'missing.json'], { cwd }), 'missing.json: no such file');
    expectFileNotFound(await toolseal(['canonicalize', 'folder'], { cwd }), 'folder: is a directory, expected a file');
    expectFileNotFound(
      await toolseal(['canonicalize', 'plain.txt/inner.json'], { cwd }),
      'plain.txt/inner.json: no such file',
    );
    expectFileNotFound(
      await toolseal(['publish', 'nested/missing.json', '--registry', registry.url, '--token', registry.token], {
        cwd,
      }),
      'nested/missing.json: no such file',
    );
  });

  it('verify --jwks: a missing file or a directory, named with the flag', async () => {
    const args = ['verify', REF, '--registry', registry.url, '--jwks'];
    expectFileNotFound(await toolseal([...args, 'keys.json'], { cwd }), '--jwks keys.json: no such file');
    expectFileNotFound(await toolseal([...args, 'folder'], { cwd }), '--jwks folder: is a directory, expected a file');
  });

  it('--lock and --state given a directory; get -o into a missing folder or onto a directory', async () => {
    expectFileNotFound(
      await toolseal(['pin', REF, '--registry', registry.url, '--lock', 'folder'], { cwd }),
      '--lock folder: is a directory, expected a file',
    );
    expectFileNotFound(
      await toolseal(['audit', '--registry', registry.url, '--state', 'folder'], { cwd }),
      '--state folder: is a directory, expected a file',
    );
    expectFileNotFound(
      await toolseal(['get', REF, '--registry', registry.url, '-o', 'no/such/dir/out.json'], { cwd }),
      '-o no/such/dir/out.json: its folder does not exist',
    );
    expectFileNotFound(
      await toolseal(['get', REF, '--registry', registry.url, '-o', 'folder'], { cwd }),
      '-o folder: is a directory, expected a file',
    );
  });
});

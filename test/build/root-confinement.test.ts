// Only files under the root are read: traversal out of it, absolute paths, symlinks out and `file:` URLs outside are
// EXTERNAL_REF at the pointer of the ref; a missing file is FILE_NOT_FOUND naming its path relative to the root.

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildManifest } from '../../src/build/build-manifest.ts';
import type { JsonObject } from '../../src/core/json.ts';
import { expectBuildRefusal, manifestOf, removeTrees, writeTree } from './helpers.ts';

afterAll(removeTrees);

const at = '/tools/0/inputSchema/properties/x/$ref';

/** A folder whose manifest refers to `ref` from /tools/0/inputSchema/properties/x, plus `files`. */
function folderWithRef(ref: string, files: Record<string, JsonObject> = {}): string {
  return writeTree({
    'manifest.json': manifestOf({ type: 'object', properties: { x: { $ref: ref } } }),
    ...files,
  });
}

/** A file outside any build root. */
function outsideFile(): string {
  const dir = writeTree({ 'secret.json': { type: 'string', description: 'outside the root' } });
  return join(dir, 'secret.json');
}

describe('refused: reading outside the root', () => {
  it('traversal out of the root (../../etc/hostname), also percent-encoded or with backslashes', async () => {
    for (const ref of [
      '../../etc/hostname',
      'schemas/../../x.json',
      '%2e%2e/%2e%2e/etc/hostname',
      '..\\..\\etc\\hostname',
    ]) {
      const root = folderWithRef(ref);
      const refusal = await expectBuildRefusal(buildManifest(join(root, 'manifest.json')), 'EXTERNAL_REF', at);
      expect(refusal.message).toContain('outside the root');
      expect(refusal.message).not.toContain(root);
    }
  });

  it('an absolute path, even one inside the root', async () => {
    const root = folderWithRef('/etc/hostname');
    const refusal = await expectBuildRefusal(buildManifest(join(root, 'manifest.json')), 'EXTERNAL_REF', at);
    expect(refusal.message).toContain('absolute path');
    const inside = writeTree({ 'x.json': { type: 'string' } });
    writeFileSync(
      join(inside, 'manifest.json'),
      JSON.stringify(manifestOf({ type: 'object', properties: { x: { $ref: join(inside, 'x.json') } } })),
    );
    await expectBuildRefusal(buildManifest(join(inside, 'manifest.json')), 'EXTERNAL_REF', at);
  });

  it('a symlink that leads outside (a file, or a folder on the way)', async () => {
    const secret = outsideFile();
    const root = folderWithRef('schemas/link.json');
    mkdirSync(join(root, 'schemas'));
    symlinkSync(secret, join(root, 'schemas', 'link.json'));
    const refusal = await expectBuildRefusal(buildManifest(join(root, 'manifest.json')), 'EXTERNAL_REF', at);
    expect(refusal.message).toContain('schemas/link.json is a symlink that leads outside the root');

    const viaFolder = folderWithRef('shared/secret.json');
    symlinkSync(join(secret, '..'), join(viaFolder, 'shared'));
    await expectBuildRefusal(buildManifest(join(viaFolder, 'manifest.json')), 'EXTERNAL_REF', at);
  });

  it('a symlink that stays inside the root is followed', async () => {
    const root = folderWithRef('link.json', { 'real/x.json': { type: 'string' } });
    symlinkSync(join(root, 'real', 'x.json'), join(root, 'link.json'));
    const built = await buildManifest(join(root, 'manifest.json'));
    expect(built.documents).toEqual(['manifest.json', 'real/x.json']);
  });

  it('a file: URL outside the root is refused; one inside it is read', async () => {
    const outside = folderWithRef(pathToFileURL(outsideFile()).href);
    await expectBuildRefusal(buildManifest(join(outside, 'manifest.json')), 'EXTERNAL_REF', at);
    const hosted = folderWithRef('file://example.com/x.json');
    await expectBuildRefusal(buildManifest(join(hosted, 'manifest.json')), 'EXTERNAL_REF', at);
    const inside = writeTree({ 'x.json': { type: 'string' } });
    writeFileSync(
      join(inside, 'manifest.json'),
      JSON.stringify(
        manifestOf({ type: 'object', properties: { x: { $ref: pathToFileURL(join(inside, 'x.json')).href } } }),
      ),
    );
    expect((await buildManifest(join(inside, 'manifest.json'))).documents).toEqual(['manifest.json', 'x.json']);
  });

  it('`..` that stays inside --root is fine; the same folder without --root is refused', async () => {
    const root = writeTree({
      'vendor/manifest.json': manifestOf({ type: 'object', properties: { x: { $ref: '../common/money.json' } } }),
      'common/money.json': { type: 'integer' },
    });
    const manifest = join(root, 'vendor', 'manifest.json');
    await expectBuildRefusal(buildManifest(manifest), 'EXTERNAL_REF', at);
    expect((await buildManifest(manifest, { root })).documents).toEqual(['vendor/manifest.json', 'common/money.json']);
  });

  it('a traversal written inside a schema file: the pointer of the manifest ref, the message names the file', async () => {
    const root = folderWithRef('schemas/a.json', {
      'schemas/a.json': { type: 'object', properties: { leak: { $ref: '../../../etc/hostname' } } },
    });
    const refusal = await expectBuildRefusal(buildManifest(join(root, 'manifest.json')), 'EXTERNAL_REF', at);
    expect(refusal.message).toContain('in schemas/a.json at /properties/leak/$ref');
  });

  it('the manifest itself must lie under --root', async () => {
    const root = folderWithRef('x.json');
    const elsewhere = writeTree({});
    await expectBuildRefusal(
      buildManifest(join(root, 'manifest.json'), { root: elsewhere }),
      'EXTERNAL_REF',
      undefined,
    );
  });

  it('other schemes (urn:, data:, a drive letter) are EXTERNAL_REF', async () => {
    for (const ref of ['urn:example:x', 'data:application/json,{}', 'C:/schemas/x.json']) {
      const root = folderWithRef(ref);
      await expectBuildRefusal(buildManifest(join(root, 'manifest.json')), 'EXTERNAL_REF', at);
    }
  });
});

describe('a ref to a missing file', () => {
  it('is FILE_NOT_FOUND with its path relative to the root, never the absolute one', async () => {
    const root = folderWithRef('schemas/nope.json#/$defs/x');
    const refusal = await expectBuildRefusal(buildManifest(join(root, 'manifest.json')), 'FILE_NOT_FOUND', at);
    expect(refusal.message).toContain('schemas/nope.json');
    expect(refusal.message).not.toContain(root);
  });

  it('a folder is not a schema file', async () => {
    const root = folderWithRef('schemas', { 'schemas/x.json': { type: 'string' } });
    const refusal = await expectBuildRefusal(buildManifest(join(root, 'manifest.json')), 'FILE_NOT_FOUND', at);
    expect(refusal.message).toContain('schemas: is not a regular file');
  });

  it('a missing manifest or root is FILE_NOT_FOUND', async () => {
    const root = writeTree({});
    await expectBuildRefusal(buildManifest(join(root, 'missing.json')), 'FILE_NOT_FOUND', undefined);
    await expectBuildRefusal(
      buildManifest(join(root, 'missing.json'), { root: join(root, 'nowhere') }),
      'FILE_NOT_FOUND',
      undefined,
    );
  });
});

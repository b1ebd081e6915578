// `toolseal manifest build FILE -o OUT [--root DIR] [--allow-http]`: writes OUT atomically as 2-space JSON, prints one
// JSON object {file, name, version, digest} (the digest canonicalize and publish compute), and writes nothing on a
// refusal. The worked example in manifests/split/ builds, and stays out of what `serve --dev` publishes.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { buildManifestFile, manifestBuildUsage, runManifestBuildCommand } from '../../src/cli/manifest-build.ts';
import { UsageError } from '../../src/cli/output.ts';
import { ToolsealError } from '../../src/core/errors.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { manifestOf, removeTrees, writeTree } from '../build/helpers.ts';
import { repoPath } from '../helpers/pipeline-helpers.ts';
import { runCli } from '../helpers/registry-helpers.ts';
import { startRegistryServer } from '../../src/server/index.ts';

afterAll(removeTrees);
afterEach(async () => vi.restoreAllMocks());

const example = repoPath('manifests', 'split', 'shipping.json');

/** Run the command in process; what it printed on stdout. */
async function run(args: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: string | Uint8Array, callback?: () => void) => {
    stdout += String(chunk);
    callback?.();
    return true;
  }) as typeof process.stdout.write);
  const code = await runManifestBuildCommand(args);
  vi.restoreAllMocks();
  return { code, stdout };
}

describe('toolseal manifest build', () => {
  it('builds the worked example: OUT is 2-space JSON with only local refs; stdout is {file, name, version, digest}', async () => {
    const out = join(writeTree({}), 'built.json');
    const { code, stdout } = await run([example, '-o', out]);
    expect(code).toBe(0);
    const printed = JSON.parse(stdout) as Record<string, unknown>;
    const text = readFileSync(out, 'utf8');
    const local = runPipeline(readFileSync(out));
    expect(printed).toEqual({ file: out, name: 'io.github.acme/shipping', version: '1.0.0', digest: local.digest });
    expect(stdout.endsWith('}\n')).toBe(true);
    expect(text).toBe(`${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    expect(text).not.toMatch(/"\$ref": "(?!#)/);
    expect(text).toContain('"$ref": "#/$defs/address"');
  });

  it('replaces an existing OUT atomically, leaving no temporary file beside it', async () => {
    const dir = writeTree({});
    const out = join(dir, 'built.json');
    writeFileSync(out, 'old');
    await run([example, '-o', out]);
    expect(readFileSync(out, 'utf8').startsWith('{\n')).toBe(true);
    expect(readdirSync(dir)).toEqual(['built.json']);
  });

  it('a refusal writes nothing (here a cycle across files, CIRCULAR_REF naming them)', async () => {
    const root = writeTree({
      'manifest.json': manifestOf({ type: 'object', properties: { a: { $ref: 'a.json' } } }),
      'a.json': { properties: { b: { $ref: 'b.json' } } },
      'b.json': { properties: { a: { $ref: 'a.json' } } },
    });
    const out = join(root, 'built.json');
    const refusal = await run([join(root, 'manifest.json'), '-o', out]).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ToolsealError);
    expect((refusal as ToolsealError).code).toBe('CIRCULAR_REF');
    expect((refusal as ToolsealError).message).toContain('a.json → b.json → a.json');
    expect(existsSync(out)).toBe(false);
  });

  it('--root widens what may be read; without it `..` out of the manifest folder is refused', async () => {
    const root = writeTree({
      'vendor/manifest.json': manifestOf({ type: 'object', properties: { m: { $ref: '../common/money.json' } } }),
      'common/money.json': { type: 'integer' },
    });
    const out = join(root, 'built.json');
    await expect(run([join(root, 'vendor', 'manifest.json'), '-o', out])).rejects.toMatchObject({
      code: 'EXTERNAL_REF',
    });
    expect((await run([join(root, 'vendor', 'manifest.json'), '-o', out, '--root', root])).code).toBe(0);
  });

  it('usage errors: no FILE, no -o, extra arguments, or -o naming the manifest itself', async () => {
    await expect(runManifestBuildCommand([example])).rejects.toBeInstanceOf(UsageError);
    await expect(runManifestBuildCommand(['-o', 'x.json'])).rejects.toBeInstanceOf(UsageError);
    await expect(runManifestBuildCommand([example, example, '-o', 'x.json'])).rejects.toBeInstanceOf(UsageError);
    await expect(runManifestBuildCommand([example, '-o', example])).rejects.toThrow(/manifest itself/);
    expect(manifestBuildUsage).toContain('toolseal manifest build FILE -o OUT [--root DIR] [--allow-http]');
  });

  it('buildManifestFile (what publish --build uploads) gives the bytes whose digest the command prints', async () => {
    const built = await buildManifestFile(example);
    expect(runPipeline(built.bytes).digest).toBe(built.result.digest);
    expect(Buffer.from(built.bytes).toString('utf8')).toBe(built.text);
  });

  it('the split example lives in its own folder, so `serve --dev` (manifests/*.json) does not publish it', async () => {
    const published = readdirSync(repoPath('manifests')).filter((name) => name.endsWith('.json'));
    expect(published).not.toContain('shipping.json');
    expect(readdirSync(repoPath('manifests', 'split', 'schemas')).sort()).toEqual(['address.json', 'money.json']);
  });

  it('through the bin: exit 0 and one JSON line; a refusal is one JSON line on stderr, exit 1', async () => {
    const out = join(writeTree({}), 'built.json');
    const ok = await runCli(['manifest', 'build', example, '-o', out]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ file: out, name: 'io.github.acme/shipping' });
    const root = writeTree({
      'manifest.json': manifestOf({ type: 'object', properties: { x: { $ref: '../../etc/hostname' } } }),
    });
    const refused = await runCli(['manifest', 'build', join(root, 'manifest.json'), '-o', join(root, 'o.json')]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({
      code: 'EXTERNAL_REF',
      pointer: '/tools/0/inputSchema/properties/x/$ref',
    });
  });
});

describe('toolseal publish --build', () => {
  it('publishes the built manifest of a split folder: the registry stores exactly the digest the build prints', async () => {
    const keysDir = join(writeTree({}), 'keys');
    const server = await startRegistryServer({ dataDir: ':memory:', keysDir, port: 0 });
    try {
      const { token } = await server.registry.createPublisher('io.github.acme');
      const built = await buildManifestFile(example);
      const refused = await runCli(['publish', example, '--registry', server.url, '--token', token]);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr).code).toBe('EXTERNAL_REF');
      const published = await runCli(['publish', example, '--build', '--registry', server.url, '--token', token]);
      expect(published.code, published.stderr).toBe(0);
      expect(JSON.parse(published.stdout)).toMatchObject({ digest: built.result.digest, created: true });
      expect((await server.registry.getManifest('io.github.acme/shipping', '1.0.0')).digest).toBe(built.result.digest);
      const misplaced = await runCli(['publish', example, '--root', '.', '--registry', server.url, '--token', token]);
      expect(misplaced.code).toBe(2);
      expect(JSON.parse(misplaced.stderr).code).toBe('USAGE');
    } finally {
      await server.close();
    }
  });
});

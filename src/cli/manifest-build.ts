// `toolseal manifest build FILE -o OUT [--root DIR] [--allow-http]`: one self-contained manifest from a manifest whose
// schemas `$ref` files (README "Schemas split across files"). Argv and printing only; the build is src/build/.

import { realpath } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { BuildOptions, BuiltManifest } from '../build/build-manifest.ts';
import { writeFileAtomic } from '../lock/atomic-file.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { readUserFile } from './user-files.ts';

export const manifestBuildUsage = `toolseal manifest build FILE -o OUT [--root DIR] [--allow-http] [--server-json SERVER_JSON]
  Reads the manifest FILE, whose tool schemas may $ref schema files, and writes OUT: one self-contained
  manifest in which every ref to another file has become a local ref (#/$defs/...) to a copy inside the
  tool schema that uses it, ready for canonicalize and publish. Only files under --root (default: FILE's
  folder) are read; no network access unless --allow-http (then https: only, each document at most 1 MiB
  and 10 s). OUT is run through the publish pipeline, then written atomically as 2-space JSON; prints one
  JSON object {file, name, version, digest}. A refusal (with its JSON pointer) writes nothing.
  --server-json takes the signed "server" member (packages, remotes, repository, ...) from the vendor's
  MCP Registry server.json, whose name and version must be the manifest's.`;

export interface ManifestBuildOptions {
  root?: string | undefined;
  allowHttp?: boolean | undefined;
}

/** `args` are the words after `manifest build`. */
export async function runManifestBuildCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      output: { type: 'string', short: 'o' },
      root: { type: 'string' },
      'allow-http': { type: 'boolean' },
      'server-json': { type: 'string' },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  if (file === undefined || positionals.length > 1 || values.output === undefined)
    throw new UsageError(manifestBuildUsage);
  if (await isSameFile(file, values.output))
    throw new UsageError('-o names the manifest itself; write the built manifest to another file');
  const built = await buildManifestFile(file, { root: values.root, allowHttp: values['allow-http'] });
  const serverJson = values['server-json'];
  const final =
    serverJson === undefined
      ? built
      : (await import('../build/from-server-json.ts')).attachServerJson(
          built.manifest,
          await readUserFile(serverJson, '--server-json'),
        );
  await writeFileAtomic(values.output, final.text);
  const { name, version, digest } = final.result;
  await writeStdout(`${JSON.stringify({ file: values.output, name, version, digest })}\n`);
  return 0;
}

/**
 * Build the manifest at `path` without writing anything (what `publish --build` uploads: `bytes`). The build
 * module, and json-schema-ref-parser with it, is loaded only when a build runs.
 */
export async function buildManifestFile(path: string, options: ManifestBuildOptions = {}): Promise<BuiltManifest> {
  const { buildManifest } = await import('../build/build-manifest.ts');
  const buildOptions: BuildOptions = { allowHttp: options.allowHttp === true };
  if (options.root !== undefined) buildOptions.root = options.root;
  return buildManifest(path, buildOptions);
}

async function isSameFile(a: string, b: string): Promise<boolean> {
  const [first, second] = await Promise.all([a, b].map((path) => realpath(path).catch(() => undefined)));
  return first !== undefined && first === second;
}

// `toolseal mirror`: the read side of a registry as static files in the API's URL layout (src/mirror/, issue 16 §3).

import { parseArgs } from 'node:util';
import { mirrorRegistry } from '../mirror/mirror-registry.ts';
import { resolveRegistryUrl, resolveUserPath } from './config.ts';
import { type ExitCode, UsageError, writeStdout } from './output.ts';
import { readWitnessPolicyFile } from './verify.ts';

export const mirrorUsage = `toolseal mirror --registry URL --out DIR [--witness-policy FILE]
  Copies the registry's read API into DIR as static files in the same URL layout (manifest bytes, their
  attestations and Sigstore bundles, version listings, blobs, attestations by digest, the JWKS, the log key, the
  checkpoint, tiles and entry bundles, the tiles also as .gz), verifying what it copies: the checkpoint's
  signature, the log's entries against its root, every tile against the tree, every manifest's bytes against its
  attested digest, every Sigstore bundle (then proven against the mirror's checkpoint; kept by later runs).
  Incremental and resumable: DIR/.toolseal-mirror.json remembers the mirrored log size; a run fetches only
  the entries after it, writes each file atomically and the checkpoint last. Serve DIR as docs/deploy.md
  shows (nginx); hosts verify against it exactly as against the registry. TOOLSEAL_REGISTRY may stand for
  --registry. The checkpoint is copied with its witnesses' cosignatures (every run, so cosignatures that came
  later are served too). --witness-policy FILE: a C2SP tlog-policy the checkpoint must meet (else WITNESS_QUORUM,
  nothing written). Prints one JSON object: the sizes, the cosignature lines on the checkpoint ("cosignatures"),
  with a policy the witnesses verified ("witnesses"), the new entries by kind, the bundles written ("bundles")
  and how many files were written.`;

export async function runMirrorCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: { registry: { type: 'string' }, out: { type: 'string' }, 'witness-policy': { type: 'string' } },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  if (values.out === undefined || values.out === '') throw new UsageError('--out DIR is required');
  const witnessPolicy =
    values['witness-policy'] === undefined ? undefined : await readWitnessPolicyFile(values['witness-policy']);
  const report = await mirrorRegistry({
    registry: resolveRegistryUrl(values.registry),
    out: resolveUserPath(values.out),
    ...(witnessPolicy === undefined ? {} : { witnessPolicy }),
  });
  const { written, ...rest } = report;
  await writeStdout(`${JSON.stringify({ ...rest, out: values.out, written: written.length })}\n`);
  return 0;
}

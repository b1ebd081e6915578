// `toolseal publish FILE`: run the pipeline locally, publish, and refuse loudly if the server's digest differs.

import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { verifyAttestation } from '../attest/index.ts';
import { acquireIdToken } from '../client/id-token.ts';
import { RegistryClient } from '../client/registry-client.ts';
import { readStreamWithin } from '../core/stream.ts';
import { ToolsealError } from '../core/errors.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import { runPipeline } from '../pipeline/index.ts';
import { resolveRegistryUrl, resolveToken } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { buildManifestFile } from './manifest-build.ts';
import { readUserFile } from './user-files.ts';

export const publishUsage = `toolseal publish FILE --registry URL (--token T | --oidc [--id-token FILE|-] [--audience AUD]) [--build [--root DIR] [--allow-http]]
  Runs the publish pipeline locally (a dry run of the exact bytes), uploads FILE, and checks that the
  registry computed the same digest and signed an attestation for it with a key from its JWKS.
  TOOLSEAL_REGISTRY and TOOLSEAL_TOKEN may stand for the flags. FILE is relative to the folder the command
  was run from (FILE_NOT_FOUND when it does not exist). Prints one JSON object. A registry that answers
  503 SERVER_BUSY (it wrote nothing) is asked again up to 4 times, waiting as its Retry-After says (backoff
  from 250 ms otherwise); then SERVER_BUSY.
  With --build, FILE may $ref schema files: it is built first exactly as by toolseal manifest build
  (--root and --allow-http as there; nothing is written) and the built manifest is what is published.
  --oidc (trusted publishing, docs/trusted-publishing.md): publish with the CI's short-lived OIDC ID token instead
  of a token: from --id-token FILE (- for stdin), else TOOLSEAL_ID_TOKEN, else GitHub Actions'
  ACTIONS_ID_TOKEN_REQUEST_URL/ACTIONS_ID_TOKEN_REQUEST_TOKEN asked for --audience (default: the registry URL).
  The output then has "provenance": how the registry attested the publish was authorised.`;

export async function runPublishCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      registry: { type: 'string' },
      token: { type: 'string' },
      build: { type: 'boolean' },
      root: { type: 'string' },
      'allow-http': { type: 'boolean' },
      oidc: { type: 'boolean' },
      'id-token': { type: 'string' },
      audience: { type: 'string' },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  if (file === undefined) throw new UsageError('missing FILE');
  if (positionals.length > 1) throw new UsageError(`expected one FILE, got ${positionals.length} arguments`);
  const registry = resolveRegistryUrl(values.registry);
  const token = values.oidc === true ? await readIdToken(values, registry) : resolveToken(values.token);
  if (!values.build && (values.root !== undefined || values['allow-http'] === true)) {
    throw new UsageError('--root and --allow-http go with --build');
  }
  const bytes = values.build
    ? (await buildManifestFile(file, { root: values.root, allowHttp: values['allow-http'] })).bytes
    : await readUserFile(file);
  const local = runPipeline(bytes);

  const client = new RegistryClient(registry, { token });
  const answer = await client.publish(bytes, {
    onRetry: (attempt, delayMs) =>
      process.stderr.write(`toolseal publish: the registry is busy; retry ${attempt} in ${delayMs} ms\n`),
  });
  if (answer.digest !== local.digest) {
    throw new ToolsealError(
      'DIGEST_MISMATCH',
      `the registry computed ${answer.digest} but the local pipeline computed ${local.digest}; do not trust this registry's bytes`,
    );
  }
  if (answer.name !== local.name || answer.version !== local.version) {
    throw new ToolsealError(
      'SUBJECT_MISMATCH',
      `the registry answered for ${answer.name}@${answer.version}, not ${local.name}@${local.version}`,
    );
  }
  const verified = await verifyAttestation(canonicalizeToBytes(answer.attestation), await client.jwks(), {
    name: local.name,
    version: local.version,
    digest: local.digest,
  });
  await writeStdout(
    `${JSON.stringify({
      name: local.name,
      version: local.version,
      digest: local.digest,
      size: local.size,
      created: answer.created,
      renamedTools: local.renamedTools,
      logIndex: answer.logIndex,
      url: `${registry}${answer.url}`,
      ...(values.oidc === true ? { provenance: verified.statement.predicate.provenance ?? null } : {}),
    })}\n`,
  );
  return 0;
}

/** `--oidc`: the CI's ID token (never printed; messages name only where it was looked for). */
async function readIdToken(
  values: { token?: string | undefined; 'id-token'?: string | undefined; audience?: string | undefined },
  registry: string,
): Promise<string> {
  if (values.token !== undefined) throw new UsageError('--token or --oidc, not both');
  const { token } = await acquireIdToken({
    ...(values['id-token'] === undefined ? {} : { idTokenPath: values['id-token'] }),
    audience: values.audience ?? registry,
    env: process.env,
    readFile: (path) => readUserFile(path, 'ID token '),
    readStdin: () =>
      readStreamWithin(
        Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
        16 * 1024,
        () => new UsageError('the ID token on stdin is too large'),
      ),
    fetch: (url, init) => fetch(url, init),
  });
  return token;
}

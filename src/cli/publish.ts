// `toolseal publish FILE`: run the pipeline locally, publish, and refuse loudly if the server's digest differs.

import { parseArgs } from 'node:util';
import { type ErrorCode, ToolsealError } from '../core/errors.ts';
import { isRegistryRefusalCode } from '../protocol/problem.ts';
import { runPipeline } from '../pipeline/index.ts';
import { verifyAttestation, type Jwks } from '../attest/index.ts';
import { resolveRegistryUrl, resolveToken } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { buildManifestFile } from './manifest-build.ts';
import { readUserFile } from './user-files.ts';

export const publishUsage = `toolseal publish FILE --registry URL --token T [--build [--root DIR] [--allow-http]]
  Runs the publish pipeline locally (a dry run of the exact bytes), uploads FILE, and checks that the
  registry computed the same digest and signed an attestation for it with a key from its JWKS.
  TOOLSEAL_REGISTRY and TOOLSEAL_TOKEN may stand for the flags. FILE is relative to the folder the command
  was run from (FILE_NOT_FOUND when it does not exist). Prints one JSON object.
  With --build, FILE may $ref schema files: it is built first exactly as by toolseal manifest build
  (--root and --allow-http as there; nothing is written) and the built manifest is what is published.`;

export async function runPublishCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      registry: { type: 'string' },
      token: { type: 'string' },
      build: { type: 'boolean' },
      root: { type: 'string' },
      'allow-http': { type: 'boolean' },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  if (file === undefined) throw new UsageError('missing FILE');
  if (positionals.length > 1) throw new UsageError(`expected one FILE, got ${positionals.length} arguments`);
  const registry = resolveRegistryUrl(values.registry);
  const token = resolveToken(values.token);
  if (!values.build && (values.root !== undefined || values['allow-http'] === true)) {
    throw new UsageError('--root and --allow-http go with --build');
  }
  const bytes = values.build
    ? (await buildManifestFile(file, { root: values.root, allowHttp: values['allow-http'] })).bytes
    : await readUserFile(file);
  const local = runPipeline(bytes);

  const response = await request(`${registry}/v1/manifests`, {
    method: 'POST',
    body: bytes,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
  });
  const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined;
  if (!response.ok || body === undefined) {
    // The registry's own refusal codes (pipeline, auth, conflicts) are relayed; anything else, including a
    // host-side verification code a hostile server might claim, becomes FETCH_FAILED.
    const claimed = typeof body?.['code'] === 'string' ? body['code'] : undefined;
    const code: ErrorCode = claimed !== undefined && isRegistryRefusalCode(claimed) ? claimed : 'FETCH_FAILED';
    const detail = typeof body?.['detail'] === 'string' ? body['detail'] : `HTTP ${response.status}`;
    throw new ToolsealError(
      code,
      `registry refused the publish: ${claimed !== undefined && claimed !== code ? `${claimed}: ` : ''}${detail}`,
      typeof body?.['pointer'] === 'string' ? { pointer: body['pointer'] } : undefined,
    );
  }
  if (body['digest'] !== local.digest) {
    throw new ToolsealError(
      'DIGEST_MISMATCH',
      `the registry computed ${String(body['digest'])} but the local pipeline computed ${local.digest}; do not trust this registry's bytes`,
    );
  }
  const jwks = (await (await request(`${registry}/.well-known/jwks.json`)).json()) as Jwks;
  await verifyAttestation(JSON.stringify(body['attestation']), jwks, {
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
      created: response.status === 201,
      renamedTools: local.renamedTools,
      logIndex: body['logIndex'],
      url: `${registry}${String(body['url'])}`,
    })}\n`,
  );
  return 0;
}

async function request(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (cause) {
    throw new ToolsealError('FETCH_FAILED', `could not reach ${new URL(url).origin}`, { cause });
  }
}

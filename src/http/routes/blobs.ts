// Content-addressed reads: GET /v1/blobs/{digest} (the exact bytes, through the verified cache, which remembers the
// request target for the fast read path of issue 16 §4) and
// GET /v1/attestations/{digest} (every name@version bound to those bytes, each with its RFC 9162 inclusion proof).

import type { JsonObject } from '../../core/json.ts';
import { attestationsByDigestPath, bundlePath } from '../../protocol/routes.ts';
import { type BindingDto, type BindingsResponse, JSON_CONTENT_TYPE } from '../../protocol/wire.ts';
import { ToolsealError } from '../../core/errors.ts';
import type { CheckpointRecord } from '../../store/index.ts';
import type { DigestBinding, Registry } from '../../registry/index.ts';
import type { App, CheckpointDecorator } from '../app-env.ts';
import { type ImmutableBodyCache, readRawTarget, sendVerifiedBody } from '../immutable-body-cache.ts';
import { formatInclusionProofDto, formatTlogProofText } from '../inclusion-proof.ts';
import { mountOperation } from '../operations.ts';

export function mountBlobRoutes(
  app: App,
  registry: Registry,
  cache: ImmutableBodyCache,
  cosign: CheckpointDecorator = (note) => note,
): void {
  mountOperation(app, 'blob', async (c) => {
    const digest = c.req.param('digest');
    const key = `b:${digest}`;
    let entry = cache.get(key);
    if (!entry) {
      const blob = await registry.getBlob(digest);
      const link = `<${attestationsByDigestPath(digest)}>; rel="attestation"; type="${JSON_CONTENT_TYPE}"`;
      entry = cache.put(key, blob.bytes, blob.digest, link);
    }
    cache.remember(readRawTarget(c.env), key);
    return sendVerifiedBody(entry, c.req.header('If-None-Match'));
  });

  mountOperation(app, 'attestationsByDigest', async (c) => {
    const digest = c.req.param('digest');
    const bindings = await registry.listBindings(digest);
    if (bindings.length === 0) throw new ToolsealError('NOT_FOUND', `no attestation covers ${digest}`);
    // Every binding's leaf is in a signed checkpoint before its publish is acknowledged; wait, never 404, if not.
    const checkpoint = await registry.log.awaitCheckpointIncluding(
      Math.max(...bindings.map((binding) => binding.logIndex)),
    );
    c.header('Cache-Control', 'no-cache');
    return c.json({
      digest,
      bindings: await Promise.all(bindings.map((binding) => formatBindingDto(registry, binding, checkpoint, cosign))),
    } satisfies BindingsResponse);
  });
}

async function formatBindingDto(
  registry: Registry,
  binding: DigestBinding,
  checkpoint: CheckpointRecord,
  cosign: CheckpointDecorator,
): Promise<BindingDto> {
  const proven = await registry.log.proveInclusion(binding.logIndex, checkpoint);
  const inclusion = { ...proven, checkpoint: cosign(proven.checkpoint) };
  return {
    name: binding.name,
    version: binding.version,
    publisher: binding.publisher,
    storedAt: binding.storedAt,
    kid: binding.kid,
    status: binding.status,
    ...(binding.status === 'yanked' ? { yankReason: binding.yankReason } : {}),
    logIndex: binding.logIndex,
    attestation: JSON.parse(Buffer.from(binding.attestation).toString('utf8')) as JsonObject,
    inclusionProof: formatInclusionProofDto(inclusion),
    tlogProof: formatTlogProofText(inclusion),
    bundle: bundlePath(binding.name, binding.version),
  };
}

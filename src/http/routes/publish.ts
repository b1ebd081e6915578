// POST /v1/manifests: authenticate (RFC 6750 §2.1) before a byte of the body is read, publish, answer 201 Created
// (or 200 for the same bytes again) with Location (RFC 9110 §10.2.2) and the PublishResponse body, whose checkpoint
// carries the witnesses' cosignatures already received for it (issue 25 §2; a fresh checkpoint usually has none yet:
// publishing never waits for a witness). A Link names the version's Sigstore bundle (issue 26).

import { readBearerToken } from '../auth.ts';
import { readBodyWithin } from '../body.ts';
import { formatInclusionProofDto, formatTlogProofText } from '../inclusion-proof.ts';
import { bundlePath, versionPath } from '../../protocol/routes.ts';
import { SIGSTORE_BUNDLE_MEDIA_TYPE } from '../../attest/index.ts';
import { JSON_CONTENT_TYPE, type PublishResponse } from '../../protocol/wire.ts';
import type { PublishOutcome, Registry, TrustedPublishing } from '../../registry/index.ts';
import type { App, CheckpointDecorator } from '../app-env.ts';
import { mountOperation } from '../operations.ts';

export function mountPublishRoutes(
  app: App,
  registry: Registry,
  maxBodyBytes: number,
  cosign: CheckpointDecorator = (note) => note,
  trustedPublishing?: TrustedPublishing,
): void {
  mountOperation(
    app,
    'publish',
    async (c, next) => {
      // 401 before reading a byte of the body (an OIDC ID token: when it names no trusted issuer).
      const bearer = readBearerToken(c.req.header('Authorization'));
      if (trustedPublishing === undefined) c.set('publisher', await registry.authenticate(bearer));
      else c.set('authoriser', await trustedPublishing.authenticate(bearer));
      return next();
    },
    async (c) => {
      // Bytes, never c.req.json()/text(): those accept duplicate keys, round big integers, drop a BOM.
      const bytes = await readBodyWithin(c, maxBodyBytes, 'manifest body');
      const outcome = await registry.publish(bytes, c.get('authoriser') ?? c.get('publisher'));
      c.header('Location', versionPath(outcome.record.name, outcome.record.version));
      c.header(
        'Link',
        `<${bundlePath(outcome.record.name, outcome.record.version)}>; rel="bundle"; type="${SIGSTORE_BUNDLE_MEDIA_TYPE}"`,
      );
      return c.body(formatPublishBody(outcome, cosign), outcome.created ? 201 : 200, {
        'Content-Type': JSON_CONTENT_TYPE,
      });
    },
  );
}

type PublishHead = Pick<PublishResponse, 'name' | 'version' | 'digest' | 'size'>;
type PublishTail = Omit<PublishResponse, keyof PublishHead | 'attestation'>;

/**
 * The PublishResponse as JSON text. The attestation is embedded as the stored bytes themselves (JCS JSON, just
 * signed and stored): parsing and re-serialising it per publish would only spend time writing the same text.
 */
export function formatPublishBody(outcome: PublishOutcome, cosign: CheckpointDecorator = (note) => note): string {
  const { record } = outcome;
  const inclusion = { ...outcome.inclusion, checkpoint: cosign(outcome.inclusion.checkpoint) };
  const head = JSON.stringify({
    name: record.name,
    version: record.version,
    digest: record.digest as PublishResponse['digest'],
    size: outcome.size,
  } satisfies PublishHead);
  const tail = JSON.stringify({
    renamedTools: outcome.renamedTools,
    status: record.status,
    storedAt: record.storedAt,
    logIndex: record.logIndex,
    inclusionProof: formatInclusionProofDto(inclusion),
    tlogProof: formatTlogProofText(inclusion),
    url: versionPath(record.name, record.version),
  } satisfies PublishTail);
  return `${head.slice(0, -1)},"attestation":${record.attestation.toString('utf8')},${tail.slice(1)}`;
}

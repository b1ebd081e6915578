// Sigstore over HTTP (issue 26, docs/sigstore.md): a version's bundle v0.3
// (`application/vnd.dev.sigstore.bundle.v0.3+json`, sigstore/protobuf-specs), assembled per request from what its
// publish stored, the latest signed checkpoint (with witness cosignatures when served with them) and a proof computed
// by the registry (by name@version, and by digest: GET /v1/blobs/{digest}/bundle); and the trusted root naming the log (the bundle keys are in the JWKS, nbf/exp their validFor).

import type { Context } from 'hono';
import { SIGSTORE_BUNDLE_MEDIA_TYPE, type SigstoreBundleJson, TRUSTED_ROOT_MEDIA_TYPE } from '../../attest/index.ts';
import type { Registry } from '../../registry/index.ts';
import { type App, type CheckpointDecorator, readManifestName } from '../app-env.ts';
import { mountOperation } from '../operations.ts';

export function mountSigstoreRoutes(app: App, registry: Registry, cosign: CheckpointDecorator): void {
  // The proof and checkpoint move with the log: a later request may get a larger tree (no-cache on both routes).
  const sendBundle = (c: Context, bundle: SigstoreBundleJson): Response =>
    c.body(JSON.stringify(bundle), 200, { 'Content-Type': SIGSTORE_BUNDLE_MEDIA_TYPE, 'Cache-Control': 'no-cache' });

  mountOperation(app, 'bundle', async (c) =>
    sendBundle(c, await registry.getBundle(readManifestName(c), c.req.param('version'), cosign)),
  );

  // By digest: the one version whose bytes have it (they declare their own name@version), the same bytes.
  mountOperation(app, 'bundleByDigest', async (c) =>
    sendBundle(c, await registry.getBundleByDigest(c.req.param('digest'), cosign)),
  );

  mountOperation(app, 'trustedRoot', async (c) => {
    // Exactly a TrustedRoot: protojson readers (sigstore-go, cosign) refuse unknown members, so the bundle keys are
    // not added here (a TrustedRoot has no member for keys that are not certificates).
    const { trustedRoot } = await registry.trustMaterial();
    return c.body(JSON.stringify(trustedRoot), 200, {
      'Content-Type': TRUSTED_ROOT_MEDIA_TYPE,
      'Cache-Control': 'public, max-age=60',
    });
  });
}

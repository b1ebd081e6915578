// fetchVerifiedBundle: GET a version's bytes and its Sigstore bundle v0.3 (issue 26, routes in src/protocol/routes.ts)
// through the one registry client, then verifyBundle. The keys are the pinned ones, else the registry's (TOFU).

import { normaliseRegistryUrl, RegistryClient } from '../client/registry-client.ts';
import { isSha256Digest, type Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { parseManifestRef } from '../protocol/manifest-ref.ts';
import { bundlePath, versionPath } from '../protocol/routes.ts';
import { type VerifiedBundle, verifyBundle } from './verify-bundle.ts';

export interface FetchVerifiedBundleOptions {
  /** Pinned bundle keys (a JWKS, or a list of JWKs): its P-256 keys are used. Else the registry's JWKS (TOFU). */
  jwks?: unknown;
  /** Pinned log key (C2SP verifier string). Else GET /v1/log/key (TOFU). */
  logKey?: string;
  /** A pinned digest (a lockfile entry's): other bytes are PIN_MISMATCH. */
  expectedDigest?: Sha256Digest;
  timeoutMs?: number;
  maxResponseBytes?: number;
  signal?: AbortSignal;
  fetch?: typeof fetch;
  /** The bundle bytes already at hand (`verify --bundle FILE`): not fetched. */
  bundle?: Uint8Array;
  /** The manifest bytes already at hand: not fetched. */
  bytes?: Uint8Array;
}

export interface FetchedBundle extends VerifiedBundle {
  /** The bundle bytes exactly as served and verified: what `get --bundle FILE` writes. */
  bundle: Uint8Array;
  /** The registry asked, when one was (nothing is fetched when everything is given). */
  registry: string | undefined;
}

/**
 * Fetch `ref` (`namespace/name@version`) and GET …/{version}/bundle, and verify the bundle over the bytes with
 * verifyBundle (error codes of ./index.ts). A bundle names no other version: the subject must be `ref`. What the
 * options hold (bundle, bytes, jwks, logKey) is not fetched; with all four, `registryUrl` may be undefined.
 */
export async function fetchVerifiedBundle(
  registryUrl: string | undefined,
  ref: string,
  options: FetchVerifiedBundleOptions = {},
): Promise<FetchedBundle> {
  const target = parseManifestRef(ref);
  if (target.kind !== 'version') throw new ToolsealError('BAD_REQUEST', 'a bundle is fetched by name@version');
  if (options.expectedDigest !== undefined && !isSha256Digest(options.expectedDigest)) {
    throw new ToolsealError('BAD_REQUEST', 'the pinned digest is not sha256:<hex>');
  }
  const base = registryUrl === undefined ? undefined : normaliseRegistryUrl(registryUrl);
  const http = base === undefined ? undefined : new RegistryClient(base, options);
  const fetched = <T>(given: T | undefined, fetch: (client: RegistryClient) => Promise<T>): T | Promise<T> => {
    if (given !== undefined) return given;
    if (http === undefined) {
      throw new ToolsealError(
        'BAD_REQUEST',
        'without a registry, the bytes, bundle, bundle keys and log key must be given',
      );
    }
    return fetch(http);
  };
  try {
    const [bytes, bundle, jwks, logKey] = await Promise.all([
      fetched(options.bytes, (client) => client.getBytes(versionPath(target.name, target.version))),
      fetched(options.bundle, (client) => client.getBytes(bundlePath(target.name, target.version))),
      fetched<unknown>(options.jwks, (client) => client.jwks()),
      fetched(options.logKey, (client) => client.logKey()),
    ]);
    const expected = {
      name: target.name,
      version: target.version,
      ...(options.expectedDigest === undefined ? {} : { digest: options.expectedDigest }),
    };
    const verified = verifyBundle({ bytes, bundle, bundleKeys: jwks, logKey, expected });
    return Object.assign(verified, { bundle, registry: base });
  } finally {
    http?.abortAll();
  }
}

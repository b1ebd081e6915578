// fetchVerifiedBundle: GET a version's bytes and its Sigstore bundle v0.3 (issue 26, routes in src/protocol/routes.ts)
// through the one registry client, then verifyBundle. The keys are the pinned ones, else the registry's (TOFU). By
// name@version (…/{version} and …/{version}/bundle) or by digest (/v1/blobs/{digest} and /v1/blobs/{digest}/bundle).
// fetchVerified(…, { format: 'bundle' }) (issue 26 §3) comes here through fetchVerifiedAsBundle.

import { normaliseRegistryUrl, RegistryClient } from '../client/registry-client.ts';
import { computeDigest, isSha256Digest, type Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { parseManifestRef } from '../protocol/manifest-ref.ts';
import { blobPath, bundleByDigestPath, bundlePath, versionPath } from '../protocol/routes.ts';
import { checkServedPin } from './pin.ts';
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
 * Fetch `ref` and its bundle, and verify the bundle over the bytes with verifyBundle (error codes of ./index.ts).
 *  - `namespace/name@version`: GET …/{version} and …/{version}/bundle; the subject must be `ref`.
 *  - `sha256:<hex>`: GET /v1/blobs/{digest} and /v1/blobs/{digest}/bundle; the bytes must be that digest
 *    (DIGEST_MISMATCH), the subject is the name@version the bytes and the bundle both declare.
 * What the options hold (bundle, bytes, jwks, logKey) is not fetched; with all four, `registryUrl` may be undefined.
 */
export async function fetchVerifiedBundle(
  registryUrl: string | undefined,
  ref: string,
  options: FetchVerifiedBundleOptions = {},
): Promise<FetchedBundle> {
  const target = parseManifestRef(ref);
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
    const [bytesPath, bundleAt] =
      target.kind === 'version'
        ? [versionPath(target.name, target.version), bundlePath(target.name, target.version)]
        : [blobPath(target.digest), bundleByDigestPath(target.digest)];
    const [bytes, bundle, jwks, logKey] = await Promise.all([
      fetched(options.bytes, (client) => client.getBytes(bytesPath)),
      fetched(options.bundle, (client) => client.getBytes(bundleAt)),
      fetched<unknown>(options.jwks, (client) => client.jwks()),
      fetched(options.logKey, (client) => client.logKey()),
    ]);
    const pin = options.expectedDigest;
    if (target.kind === 'digest') {
      const actual = computeDigest(bytes);
      checkServedPin(actual, pin, target); // a pin first, as verifyBundle would
      if (actual !== target.digest) {
        // Never trust the URL: the bytes must be the digest asked for, whatever bundle comes with them.
        throw new ToolsealError(
          'DIGEST_MISMATCH',
          `the registry served bytes with digest ${actual} for ${target.digest}`,
        );
      }
    }
    const expected = {
      ...(target.kind === 'version' ? { name: target.name, version: target.version } : {}),
      ...(pin === undefined ? {} : { digest: pin }),
    };
    const verified = verifyBundle({ bytes, bundle, bundleKeys: jwks, logKey, expected });
    return Object.assign(verified, { bundle, registry: base });
  } finally {
    http?.abortAll();
  }
}

/** The options of fetchVerified(…, { format: 'bundle' }) (issue 26 §3): those of the JWS path that apply to a bundle. */
export interface FetchVerifiedBundleFormatOptions {
  format: 'bundle';
  /**
   * Pinned keys (a JWKS, such as the registry's with its P-256 bundle keys, or a list of JWKs): its P-256 keys are
   * used. Without it (or pinnedKeys, the same) the registry's JWKS is fetched (TOFU).
   */
  jwks?: unknown;
  pinnedKeys?: unknown;
  /** Pinned log key (C2SP verifier string). Without it, GET /v1/log/key (TOFU). */
  logKey?: string;
  /** A pinned digest: other bytes are PIN_MISMATCH. */
  expectedDigest?: Sha256Digest;
  /** A lockfile entry for the reference: its digest is pinned like expectedDigest. */
  lock?: { digest: string };
  timeoutMs?: number;
  maxResponseBytes?: number;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

/** What fetchVerified(…, { format: 'bundle' }) answers: the verified bundle and bytes, from that registry. */
export interface FetchedManifestBundle extends FetchedBundle {
  format: 'bundle';
  registry: string;
}

/**
 * Options of the JWS path a bundle cannot honour: a binding to select (`name`) or report (`yanked`), lockfile key
 * pins (attestation kids), publisher claims and a witness policy (verifyBundle checks neither), the onVerified cache.
 */
const JWS_ONLY_OPTIONS = ['name', 'registryKeys', 'expectPublisherClaim', 'yanked', 'witnessPolicy', 'onVerified'];

/**
 * fetchVerified with `format: 'bundle'`: fetchVerifiedBundle from `registryUrl` with the pinned keys, log key and
 * digest of `options`; BAD_REQUEST (before any request) for an option only the JWS path takes.
 */
export async function fetchVerifiedAsBundle(
  registryUrl: string,
  ref: string,
  options: FetchVerifiedBundleFormatOptions,
): Promise<FetchedManifestBundle> {
  const given = options as unknown as Record<string, unknown>;
  const unsupported = JWS_ONLY_OPTIONS.filter((key) => given[key] !== undefined);
  if (unsupported.length > 0) {
    throw new ToolsealError(
      'BAD_REQUEST',
      `format 'bundle' does not take ${unsupported.join(', ')} (the JWS path does)`,
    );
  }
  const jwks = options.jwks ?? options.pinnedKeys;
  const pin = options.expectedDigest ?? options.lock?.digest;
  const fetched = await fetchVerifiedBundle(registryUrl, ref, {
    ...(jwks === undefined ? {} : { jwks }),
    ...(options.logKey === undefined ? {} : { logKey: options.logKey }),
    ...(pin === undefined ? {} : { expectedDigest: pin as Sha256Digest }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  return Object.assign(fetched, { format: 'bundle' as const, registry: normaliseRegistryUrl(registryUrl) });
}

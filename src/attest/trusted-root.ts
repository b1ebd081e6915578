// The Sigstore trusted root (sigstore/protobuf-specs sigstore_trustroot.proto, media type
// application/vnd.dev.sigstore.trustedroot+json;version=0.1) naming our log, and the bundle keys as protobuf-specs
// PublicKey messages by hint: the key set a verifier is given beside the root (sigstore-js toTrustMaterial's
// `keys`, cosign's `--key`), since a TrustedRoot has no member for signing keys that are not certificates.
//
// Origin rule: a bundle verifier accepts a checkpoint only when the name on its signature line occurs in the trusted
// root tlog's `baseUrl` (sigstore-js), and compares the checkpoint origin with the host name of `baseUrl`
// (sigstore-go). Our note key name is the log origin, so a Sigstore-compatible log's origin is exactly the host name
// of the registry's public URL: deriveLogOrigin. A log never changes origin: an existing log keeps its own.

import { createPublicKey, type KeyObject } from 'node:crypto';
import { encodeBase64 } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { computeLogKeyId, isValidKeyName } from '../log/note.ts';
import { type BundleKeyValidity, exportSpkiDer } from './p256-jwk.ts';
import { P256_KEY_DETAILS } from './rekor-entry.ts';

export const TRUSTED_ROOT_MEDIA_TYPE = 'application/vnd.dev.sigstore.trustedroot+json;version=0.1';

/** protobuf-specs TimeRange in JSON: RFC 3339 times. */
export interface TimeRangeJson {
  start: string;
  end?: string;
}

/** protobuf-specs PublicKey in JSON. */
export interface PublicKeyJson {
  rawBytes: string;
  keyDetails: string;
  validFor: TimeRangeJson;
}

export interface TrustedRootJson {
  mediaType: typeof TRUSTED_ROOT_MEDIA_TYPE;
  tlogs: {
    baseUrl: string;
    hashAlgorithm: 'SHA2_256';
    publicKey: PublicKeyJson;
    logId: { keyId: string };
  }[];
}

/**
 * The checkpoint origin a new log of the registry at `publicUrl` must have to be verified by Sigstore tools: the
 * URL's host name (no scheme, port or path; lower case, IPv6 in brackets). BAD_REQUEST when that is not a valid note
 * key name or the URL is not http(s).
 */
export function deriveLogOrigin(publicUrl: string): string {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    throw new ToolsealError('BAD_REQUEST', `the public URL ${JSON.stringify(publicUrl)} is not a URL`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.hostname === '') {
    throw new ToolsealError('BAD_REQUEST', 'the public URL must be an http(s) URL with a host name');
  }
  const origin = url.hostname;
  if (!isValidKeyName(origin)) {
    throw new ToolsealError('BAD_REQUEST', `the host name ${origin} cannot be a log origin`);
  }
  return origin;
}

export interface TrustedRootLog {
  /** The registry's public URL: the tlog's baseUrl, whose host name must be the origin. */
  baseUrl: string;
  /** The checkpoint origin (the note key name). */
  origin: string;
  /** The log's Ed25519 public key object. */
  publicKey: KeyObject;
  /** Since when the log key signs (seconds since the epoch). */
  notBefore: number;
  /** Until when, for a retired log key. */
  notAfter?: number;
}

/** The trusted root of one or more of our logs. BAD_REQUEST when an origin breaks the origin rule. */
export function buildTrustedRoot(logs: readonly TrustedRootLog[]): TrustedRootJson {
  return {
    mediaType: TRUSTED_ROOT_MEDIA_TYPE,
    tlogs: logs.map((log) => {
      if (deriveLogOrigin(log.baseUrl) !== log.origin) {
        throw new ToolsealError(
          'BAD_REQUEST',
          `the log origin ${log.origin} is not the host name of ${log.baseUrl}: Sigstore verifiers would refuse its checkpoints`,
        );
      }
      if (log.publicKey.asymmetricKeyType !== 'ed25519') {
        throw new ToolsealError('BAD_REQUEST', 'the log key is an Ed25519 key');
      }
      const publicKey = log.publicKey.type === 'private' ? createPublicKey(log.publicKey) : log.publicKey;
      return {
        baseUrl: log.baseUrl,
        hashAlgorithm: 'SHA2_256' as const,
        publicKey: {
          rawBytes: encodeBase64(exportSpkiDer(publicKey)),
          keyDetails: 'PKIX_ED25519',
          validFor: formatTimeRange(log.notBefore, log.notAfter ?? null),
        },
        logId: { keyId: encodeBase64(computeLogKeyId(log.origin, publicKey)) },
      };
    }),
  };
}

/**
 * The bundle keys by hint (kid), as protobuf-specs PublicKey messages with their validity (nbf/exp of the JWKS):
 * what sigstore-js `toTrustMaterial(root, keys)` takes; a retired key keeps its end so old bundles still verify.
 */
export function buildBundleKeyring(keys: readonly BundleKeyValidity[]): Record<string, PublicKeyJson> {
  const ring: Record<string, PublicKeyJson> = {};
  for (const key of keys) {
    const publicKey = createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: key.publicJwk.x, y: key.publicJwk.y },
      format: 'jwk',
    });
    ring[key.kid] = {
      rawBytes: encodeBase64(exportSpkiDer(publicKey)),
      keyDetails: P256_KEY_DETAILS,
      validFor: formatTimeRange(key.notBefore, key.notAfter),
    };
  }
  return ring;
}

function formatTimeRange(notBefore: number, notAfter: number | null): TimeRangeJson {
  const start = new Date(notBefore * 1000).toISOString();
  return notAfter === null ? { start } : { start, end: new Date(notAfter * 1000).toISOString() };
}

/** What a registry publishes for Sigstore verifiers: its log and its bundle keys. */
export interface RegistryTrustInput {
  /** The registry's public URL (`serve --public-url`): the tlog's baseUrl. */
  publicUrl: string;
  /** The log's checkpoint origin; a Sigstore-compatible log's is deriveLogOrigin(publicUrl). */
  logOrigin: string;
  /** The log's Ed25519 key (public or private key object). */
  logPublicKey: KeyObject;
  /** Since when the log key signs (seconds since the epoch). */
  logNotBefore: number;
  /** The bundle keys with their windows (src/keys bundle-keys.json), oldest first. */
  bundleKeys: readonly BundleKeyValidity[];
}

/**
 * The trusted root (`GET /v1/sigstore/trusted-root.json`) and the bundle keyring beside it, from the keys and the log
 * origin: pure, for the HTTP route. BAD_REQUEST when the origin is not the public URL's host name (a log that keeps an
 * older origin cannot be checked by Sigstore tools; docs/sigstore.md says how to start one that can).
 */
export function buildRegistryTrustMaterial(input: RegistryTrustInput): {
  trustedRoot: TrustedRootJson;
  keyring: Record<string, PublicKeyJson>;
} {
  const trustedRoot = buildTrustedRoot([
    {
      baseUrl: input.publicUrl,
      origin: input.logOrigin,
      publicKey: input.logPublicKey,
      notBefore: input.logNotBefore,
    },
  ]);
  return { trustedRoot, keyring: buildBundleKeyring(input.bundleKeys) };
}

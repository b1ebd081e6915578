// fetchVerified: GET a manifest and its evidence (toolseal HTTP API, src/protocol/routes.ts), then verifyFetched.

import type { Jwks, JwksKey } from '../attest/index.ts';
import type { PublisherClaimExpectation } from './publisher-claim.ts';
import { computeDigest, isSha256Digest, type Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { normaliseRegistryUrl, RegistryClient } from '../client/registry-client.ts';
import type { LockEntry, RegistryKeyPins } from '../lock/lockfile.ts';
import { checkPinnedLogKey, checkPinnedWitnessPolicy, refuseUnpinnedKey, selectPinnedKeys } from './key-pins.ts';
import type { NoteVerifier, WitnessPolicy } from '../log/index.ts';
import { formatManifestRef, type ManifestRef, parseManifestRef } from '../protocol/manifest-ref.ts';
import { attestationPath, attestationsByDigestPath, blobPath, versionPath } from '../protocol/routes.ts';
import { type Binding, findBinding, parseBindings, selectBinding } from './bindings.ts';
import {
  type FetchedManifestBundle,
  type FetchVerifiedBundleFormatOptions,
  fetchVerifiedAsBundle,
} from './fetch-bundle.ts';
import { checkServedPin } from './pin.ts';
import {
  type VerifiedManifest,
  type VerifyExpectation,
  type VerifyFetchedInput,
  verifyFetched,
} from './verify-fetched.ts';

export interface FetchVerifiedOptions {
  /** 'jws' (the default): the attestation and its proof; 'bundle' takes FetchVerifiedBundleFormatOptions instead. */
  format?: 'jws';
  /** Pinned attestation keys (a JWKS). Without it (or pinnedKeys) the registry's JWKS is fetched (TOFU). */
  jwks?: Jwks;
  /** Same as jwks, as a list of keys or a JWKS. */
  pinnedKeys?: Jwks | readonly JwksKey[];
  /** Pinned log key: the C2SP verifier string of GET /v1/log/key. Without it, it is fetched (TOFU). */
  logKey?: string;
  /** For a digest reference bound to several name@versions: which one (`namespace/name` or `namespace/name@version`). */
  name?: string;
  /** A pinned digest: other bytes are PIN_MISMATCH even when validly signed. */
  expectedDigest?: Sha256Digest;
  /** A lockfile entry for the reference: its digest is pinned like expectedDigest. */
  lock?: Pick<LockEntry, 'digest'>;
  /**
   * The registry's keys as the lockfile pinned them: only these attestation keys verify, and the log key must be
   * this one (KEY_NOT_PINNED otherwise).
   */
  registryKeys?: RegistryKeyPins;
  /** Claims the attestation's provenance must carry exactly (`--expect-publisher-claim`): else PUBLISHER_MISMATCH. */
  expectPublisherClaim?: PublisherClaimExpectation;
  /** Per-request timeout in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Largest response accepted, in bytes (default 8 MiB). */
  maxResponseBytes?: number;
  /** Abort everything. */
  signal?: AbortSignal;
  /** A fetch to send requests with (default: node:http(s) over the registry client's shared keep-alive pool). */
  fetch?: typeof fetch;
  /**
   * A version the registry reports yanked: 'allow' (default) returns it, with `status: 'yanked'` and the reason on
   * the result for the caller to act on; 'refuse' throws VERSION_YANKED once everything else verified. The status
   * is the registry's word (its binding), not proven: a registry can also hide a yank.
   */
  yanked?: YankedPolicy;
  /** A C2SP tlog-policy (parseWitnessPolicy) the checkpoint must meet: else WITNESS_QUORUM. */
  witnessPolicy?: WitnessPolicy;
  /** Told what was verified (the evidence exactly as checked, and the result): the offline cache keeps it. */
  onVerified?: (input: VerifyFetchedInput, result: FetchedManifest) => void;
}

export type YankedPolicy = 'allow' | 'refuse';

export interface FetchedManifest extends VerifiedManifest {
  /** The registry base URL the manifest was fetched from. */
  registry: string;
  /** The registry's status for this binding (`active` or `yanked`); reported, not proven. */
  status: string | undefined;
  /** The publisher's reason when the registry reports the binding yanked; reported, not proven. */
  yankReason: string | undefined;
}

/** What one reference path fetched, before any verification but the pin (and, by digest, the digest). */
interface FetchedEvidence {
  bytes: Uint8Array;
  attestation: Uint8Array;
  binding: Binding | undefined;
  expected: VerifyExpectation;
}

/**
 * Fetch `ref` (`namespace/name@version` or `sha256:<hex>`) from the registry at `registryUrl`, with its
 * attestation and log inclusion proof, and verify everything (see verifyFetched) before returning.
 *  - name@version: GET /v1/manifests/{name}/{version} and …/attestation; the inclusion proof comes from
 *    GET /v1/attestations/{sha256 of the bytes, recomputed}, binding for that name@version.
 *  - sha256:<hex>: GET /v1/blobs/{digest} and GET /v1/attestations/{digest}: the single binding, or the one
 *    options.name selects. The attestation bytes are the JCS form of the served JWS (they are logged in JCS).
 * With `format: 'bundle'` (issue 26 §3) the Sigstore bundle is verified instead (fetchVerifiedBundle, by name@version
 * or digest): the result is a FetchedManifestBundle (`format: 'bundle'`, the bundle bytes, its kid, integratedTime,
 * logIndex and checkpoint) and options only the JWS path takes are BAD_REQUEST.
 */
export function fetchVerified(
  registryUrl: string,
  ref: string,
  options: FetchVerifiedBundleFormatOptions,
): Promise<FetchedManifestBundle>;
export function fetchVerified(
  registryUrl: string,
  ref: string,
  options?: FetchVerifiedOptions,
): Promise<FetchedManifest>;
export function fetchVerified(
  registryUrl: string,
  ref: string,
  options?: FetchVerifiedOptions | FetchVerifiedBundleFormatOptions,
): Promise<FetchedManifest | FetchedManifestBundle>;
export async function fetchVerified(
  registryUrl: string,
  ref: string,
  options: FetchVerifiedOptions | FetchVerifiedBundleFormatOptions = {},
): Promise<FetchedManifest | FetchedManifestBundle> {
  if (options.format === 'bundle') return fetchVerifiedAsBundle(registryUrl, ref, options);
  if (options.format !== undefined && options.format !== 'jws') {
    throw new ToolsealError('BAD_REQUEST', `format ${JSON.stringify(options.format)} is neither 'jws' nor 'bundle'`);
  }
  return fetchVerifiedWith(registryUrl, ref, options, DEFAULT_ENGINE);
}

/** What fetchVerifiedWith asks of its caller: the trusted keys, and the verification itself. */
export interface FetchEngine {
  /** The attestation keys: options.jwks / pinnedKeys, else the registry's (the default fetches them now: TOFU). */
  jwks(
    http: RegistryClient,
    options: FetchVerifiedOptions,
  ): Jwks | readonly JwksKey[] | Promise<Jwks | readonly JwksKey[]>;
  /** The log key: options.logKey, else the registry's (the default fetches it now: TOFU). */
  logKey(http: RegistryClient, options: FetchVerifiedOptions): string | NoteVerifier | Promise<string | NoteVerifier>;
  /** Every check of verifyFetched on what was fetched (a Verifier may fetch a consistency proof first). */
  verify(http: RegistryClient, input: VerifyFetchedInput): VerifiedManifest | Promise<VerifiedManifest>;
}

/** The registry's JWKS, fetched (TOFU). */
export function fetchRegistryJwks(http: RegistryClient): Promise<Jwks> {
  return http.jwks();
}

/** The registry's log key, fetched (TOFU). */
export function fetchRegistryLogKey(http: RegistryClient): Promise<string> {
  return http.logKey();
}

const DEFAULT_ENGINE: FetchEngine = {
  jwks: (http, options) => options.jwks || options.pinnedKeys || fetchRegistryJwks(http),
  logKey: (http, options) => (options.logKey !== undefined ? options.logKey : fetchRegistryLogKey(http)),
  verify: (_http, input) => verifyFetched(input),
};

/** fetchVerified with the keys and the verification of `engine` (./verifier.ts shares what it proved). */
export async function fetchVerifiedWith(
  registryUrl: string,
  ref: string,
  options: FetchVerifiedOptions,
  engine: FetchEngine,
): Promise<FetchedManifest> {
  const base = normaliseRegistryUrl(registryUrl);
  const target = parseManifestRef(ref);
  const pin = options.expectedDigest ?? options.lock?.digest;
  if (pin !== undefined && !isSha256Digest(pin))
    throw new ToolsealError('BAD_REQUEST', `the pinned digest ${JSON.stringify(pin)} is not sha256:<hex>`);
  const http = new RegistryClient(base, options);
  try {
    const pins = options.registryKeys;
    if (pins) checkPinnedWitnessPolicy(options.witnessPolicy, pins, base);
    const jwksPromise = startFetch(
      Promise.resolve(engine.jwks(http, options)).then((jwks) => (pins ? selectPinnedKeys(jwks, pins) : jwks)),
    );
    const logKeyPromise = startFetch(
      Promise.resolve(engine.logKey(http, options)).then((logKey) => {
        if (pins) checkPinnedLogKey(logKey, pins, base);
        return logKey;
      }),
    );
    const { bytes, attestation, binding, expected } =
      target.kind === 'version'
        ? await fetchByVersion(http, target, pin)
        : await fetchByDigest(http, target, pin, options.name);
    if (pin !== undefined) expected.digest = pin;
    if (binding !== undefined) expected.logIndex = binding.logIndex;
    if (options.expectPublisherClaim !== undefined) expected.publisherClaims = options.expectPublisherClaim;
    const input: VerifyFetchedInput = {
      bytes,
      attestation,
      inclusion: binding?.inclusion,
      jwks: await jwksPromise,
      logKey: await logKeyPromise,
      expected,
      ...(options.witnessPolicy === undefined ? {} : { witnessPolicy: options.witnessPolicy }),
    };
    let verified: VerifiedManifest;
    try {
      verified = await engine.verify(http, input);
    } catch (error) {
      throw pins ? refuseUnpinnedKey(error, base) : error;
    }
    const status = binding?.status;
    if (status === 'yanked' && options.yanked === 'refuse') throw refuseYanked(verified, binding?.yankReason);
    const result = {
      ...verified,
      registry: base,
      status,
      yankReason: status === 'yanked' ? binding?.yankReason : undefined,
    };
    options.onVerified?.(input, result);
    return result;
  } finally {
    http.abortAll(); // a refusal may leave requests in flight (keys, proofs): nothing outlives the call
  }
}

/** VERSION_YANKED for a verified manifest the registry reports yanked. */
function refuseYanked(verified: VerifiedManifest, reason: string | undefined): ToolsealError {
  const ref = formatManifestRef(verified.name, verified.version);
  return new ToolsealError(
    'VERSION_YANKED',
    `${ref} is yanked by the registry${reason === undefined ? '' : ` (${JSON.stringify(reason)})`}`,
  );
}

/** A value, or a request started now and awaited later: no unhandled rejection while other requests run. */
function startFetch<T>(value: T | Promise<T>): Promise<T> {
  const promise = Promise.resolve(value);
  promise.catch(() => undefined);
  return promise;
}

/** name@version: the bytes and their attestation by name; the proof from the bindings of the recomputed digest. */
async function fetchByVersion(
  http: RegistryClient,
  target: Extract<ManifestRef, { kind: 'version' }>,
  pin: Sha256Digest | undefined,
): Promise<FetchedEvidence> {
  const attestationPromise = startFetch(http.getBytes(attestationPath(target.name, target.version)));
  const bytes = await http.getBytes(versionPath(target.name, target.version));
  // The digest is recomputed here; whatever the server says is only a lookup key for the log proof.
  const actual = computeDigest(bytes);
  // A pin needs no registry evidence: refuse other bytes before anything else can fail or be fetched.
  checkServedPin(actual, pin, target);
  const attestation = await attestationPromise;
  const binding = findBinding(await getBindings(http, actual), target.name, target.version);
  return { bytes, attestation, binding, expected: { name: target.name, version: target.version } };
}

/** sha256:<hex>: the blob, which must be that digest, and the attestation and proof of the selected binding. */
async function fetchByDigest(
  http: RegistryClient,
  target: Extract<ManifestRef, { kind: 'digest' }>,
  pin: Sha256Digest | undefined,
  wanted: string | undefined,
): Promise<FetchedEvidence> {
  const bindingsPromise = startFetch(getBindings(http, target.digest));
  const bytes = await http.getBytes(blobPath(target.digest));
  const actual = computeDigest(bytes);
  checkServedPin(actual, pin, target);
  if (actual !== target.digest) {
    // Never trust the URL either: the bytes must be the digest asked for, whatever binding comes with them.
    throw new ToolsealError('DIGEST_MISMATCH', `the registry served bytes with digest ${actual} for ${target.digest}`);
  }
  const binding = selectBinding(await bindingsPromise, target.digest, wanted);
  if (binding.attestation === undefined)
    throw new ToolsealError('FETCH_FAILED', `the registry sent no attestation for ${target.digest}`);
  return {
    bytes,
    attestation: binding.attestation,
    binding,
    expected: { name: binding.name, version: binding.version },
  };
}

/** The bindings for `digest`; an empty list when the registry has none (404). */
async function getBindings(http: RegistryClient, digest: Sha256Digest): Promise<Binding[]> {
  try {
    return parseBindings(await http.getJson(attestationsByDigestPath(digest)));
  } catch (error) {
    if (error instanceof ToolsealError && error.code === 'NOT_FOUND') return [];
    throw error;
  }
}

// Fetch a manifest and everything that proves it, then verify it all before returning a byte: the host's front door.
//
// Trust model. Nothing the registry *says* is trusted; only what it can *prove*:
//   - the digest is recomputed from the bytes (sha256), never read from a header or a JSON field;
//   - the attestation must be signed by a key of the pinned JWKS (options.jwks / options.pinnedKeys), or of the
//     registry's own JWKS when none is pinned, and that key must have been valid when the registry stored it;
//   - its subject must be exactly the name@version asked for and the recomputed digest, and the bytes must
//     declare that same name and version themselves;
//   - the exact attestation bytes must be a leaf (RFC 6962 hashLeaf) of the transparency log, proven by an
//     inclusion proof up to a checkpoint signed by the log key;
//   - with a pin (options.expectedDigest, or a lockfile entry) the bytes must be exactly the pinned ones.
//
// Trust on first use. When options.jwks and options.logKey are not given they are fetched from the same
// registry: that proves the registry is self-consistent (and that its log holds what it signed), not that it
// is the registry you meant. Pin both (the log key is its C2SP verifier string, from GET /v1/log/key) to get
// protection against a registry that is itself compromised; a lockfile pin protects pinned versions either way.
//
// Error codes (ToolsealError.code), in the order the checks run:
//   PIN_MISMATCH      the bytes are not the pinned digest (checked first: a pin needs no registry evidence)
//   UNKNOWN_KEY       no usable key with the attestation's kid (a JWKS entry whose kid is not its RFC 7638
//                     thumbprint, or that is not an Ed25519 public key, is ignored)
//   SIGNATURE_INVALID the attestation is not a well-formed JWS or its signature does not verify
//   KEY_NOT_VALID     the key's nbf/exp window does not contain the attestation's storedAt
//   SUBJECT_MISMATCH  the attestation (or the bytes' own name/version) is for another name@version
//   DIGEST_MISMATCH   sha256(bytes) is not the attested digest (tampered or swapped bytes)
//   NOT_IN_LOG        any failure of the log evidence: no proof, a malformed proof, a checkpoint not signed by
//                     the log key (another key, a bad signature, another origin), a proof that does not lead
//                     from the attestation's leaf to the checkpoint's root. One code on purpose:
//                     SIGNATURE_INVALID / UNKNOWN_KEY always mean the *attestation*, so a caller can tell a bad
//                     registry signature from bad log evidence; the message and `cause` say which part failed.
//   FETCH_FAILED      transport: unreachable, timeout, non-2xx, redirect, oversized or malformed response
//   NOT_FOUND         the registry answered 404 NOT_FOUND for the manifest or blob
//   BAD_REQUEST       a malformed reference or option (ref syntax, several bindings and no options.name...)

import { ToolsealError } from '../core/errors.ts';
import {
  canonicalizeToBytes,
  computeDigest,
  isSha256Digest,
  parseStrict,
  type JsonObject,
  type JsonValue,
  type Manifest,
  type Sha256Digest,
} from '../pipeline/index.ts';
import { computeKid, verifyAttestationSync, type Jwks, type JwksKey, type PublishStatement } from '../attest/index.ts';
import {
  hashLeaf,
  parseTlogProof,
  parseVerifierString,
  verifyCheckpoint,
  verifyInclusionProof,
  type NoteVerifier,
} from '../log/index.ts';
import {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  normaliseRegistryUrl,
  RegistryClient,
} from '../client/registry-client.ts';
import { attestationPath, attestationsByDigestPath, blobPath, ROUTES, versionPath } from '../protocol/routes.ts';
import { type ManifestRef, parseManifestRef } from '../protocol/manifest-ref.ts';
import type { LockEntry } from '../lock/lockfile.ts';

export { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS };

export { parseManifestRef, type ManifestRef };

// ── pure verification ──────────────────────────────────────────────────────

/** Evidence that an attestation is in the log: as served under `inclusionProof`, or a C2SP tlog-proof text. */
export type InclusionEvidence =
  | {
      /** Leaf index. */
      index: number;
      /** Tree size the proof is for; when given it must equal the checkpoint's. */
      size?: number;
      /** Sibling hashes, leaf to root: base64 strings or 32-byte arrays. */
      hashes: readonly (string | Uint8Array)[];
      /** The signed checkpoint (C2SP signed note), verbatim. */
      checkpoint: string;
    }
  | string;

export interface VerifyExpectation {
  /** Manifest name (`namespace/name`) asked for; the attestation subject must match. */
  name?: string;
  /** Exact version asked for; the attestation subject must match. */
  version?: string;
  /** A pinned digest (lockfile, configuration): anything else is PIN_MISMATCH, whatever is signed. */
  digest?: Sha256Digest;
  /** The log index the registry claims; the proof must be for that index. */
  logIndex?: number;
}

export interface VerifyFetchedInput {
  /** The manifest bytes exactly as received. */
  bytes: Uint8Array;
  /** The attestation bytes exactly as logged (a JCS flattened JWS). */
  attestation: Uint8Array;
  /** The inclusion proof of the attestation; undefined is NOT_IN_LOG. */
  inclusion: InclusionEvidence | undefined;
  /** Keys the attestation may be signed with (pinned, or the registry's). */
  jwks: Jwks | readonly JwksKey[];
  /** The log's C2SP note verifier string (or a parsed verifier); the checkpoint origin must be its name. */
  logKey: string | NoteVerifier;
  expected?: VerifyExpectation;
}

export interface VerifiedCheckpoint {
  origin: string;
  size: number;
  /** Base64 RFC 6962 root hash. */
  rootHash: string;
  /** The signed note, verbatim. */
  note: string;
}

export interface VerifiedManifest {
  /** The verified bytes: hand exactly these (or `manifest`, parsed from them) to the model and router. */
  bytes: Uint8Array;
  /** `bytes` parsed (strictly). */
  manifest: Manifest;
  /** sha256 of `bytes`, recomputed here. */
  digest: Sha256Digest;
  name: string;
  version: string;
  /** The attestation bytes exactly as verified and found in the log. */
  attestation: Uint8Array;
  statement: PublishStatement;
  kid: string;
  storedAt: string;
  /** The proven log index of the attestation. */
  logIndex: number;
  checkpoint: VerifiedCheckpoint;
}

/**
 * Every host-side check on in-memory inputs, synchronously: no network, no clock, no database.
 * Throws ToolsealError with the codes listed at the top of this file; returns what was proven.
 */
export function verifyFetched(input: VerifyFetchedInput): VerifiedManifest {
  const { bytes, attestation, expected = {} } = input;
  if (!(bytes instanceof Uint8Array) || !(attestation instanceof Uint8Array)) {
    throw new ToolsealError('BAD_REQUEST', 'bytes and attestation must be Uint8Arrays');
  }
  const digest = computeDigest(bytes);
  if (expected.digest !== undefined && expected.digest !== digest) {
    throw new ToolsealError(
      'PIN_MISMATCH',
      `the bytes have digest ${digest} but ${pinLabel(expected)} is pinned to ${expected.digest}`,
    );
  }
  const verified = verifyAttestationSync(attestation, usableJwks(input.jwks), {
    ...(expected.name === undefined ? {} : { name: expected.name }),
    ...(expected.version === undefined ? {} : { version: expected.version }),
    digest,
  });
  const manifest = parseManifestBytes(bytes);
  const declared = `${manifest.name}@${manifest.version}`;
  if (declared !== verified.subjectName) {
    throw new ToolsealError(
      'SUBJECT_MISMATCH',
      `the bytes declare ${declared} but the attestation is for ${verified.subjectName}`,
    );
  }
  const checkpoint = verifyLogEvidence(attestation, input.inclusion, input.logKey, expected.logIndex);
  return {
    bytes,
    manifest,
    digest,
    name: manifest.name,
    version: manifest.version,
    attestation,
    statement: verified.statement,
    kid: verified.kid,
    storedAt: verified.statement.predicate.storedAt,
    logIndex: checkpoint.index,
    checkpoint: checkpoint.checkpoint,
  };
}

function pinLabel(expected: VerifyExpectation): string {
  return expected.name !== undefined && expected.version !== undefined ? `${expected.name}@${expected.version}` : 'it';
}

function parseManifestBytes(bytes: Uint8Array): Manifest {
  // The signed bytes passed the pipeline; inlined refs may nest deeper than an upload may, hence the depth.
  const value = parseStrict(bytes, { maxBytes: Number.MAX_SAFE_INTEGER, maxDepth: 1000 }).value;
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    typeof value['name'] !== 'string' ||
    typeof value['version'] !== 'string'
  ) {
    throw new ToolsealError('SUBJECT_MISMATCH', 'the signed bytes are not a manifest with a name and a version');
  }
  return value as unknown as Manifest;
}

/** RFC 7638 thumbprints already computed, by public key `x` (the only input besides the constant crv/kty). */
const thumbprints = new Map<string, string>();

function thumbprintOf(x: string): string {
  let kid = thumbprints.get(x);
  if (kid === undefined) {
    kid = computeKid({ crv: 'Ed25519', x });
    if (thumbprints.size > 1000) thumbprints.clear();
    thumbprints.set(x, kid);
  }
  return kid;
}

/**
 * Keep only well-formed Ed25519 public keys whose kid is their RFC 7638 thumbprint (a kid then names one key,
 * as the lockfile records it). A key without a numeric nbf can never be shown valid: it gets nbf = +Infinity.
 * Rebuilt on every call (a few keys, thumbprints memoised), so a JWKS object the host updates in place is seen.
 */
function usableJwks(source: Jwks | readonly JwksKey[]): Jwks {
  const keys: readonly unknown[] = Array.isArray(source)
    ? source
    : Array.isArray((source as Jwks)?.keys)
      ? (source as Jwks).keys
      : [];
  const usable: JwksKey[] = [];
  for (const key of keys) {
    if (typeof key !== 'object' || key === null) continue;
    const { kty, crv, x, kid, nbf, exp, use, alg } = key as Record<string, unknown>;
    if (kty !== 'OKP' || crv !== 'Ed25519' || typeof x !== 'string' || typeof kid !== 'string') continue;
    if (!/^[A-Za-z0-9_-]{43}$/.test(x) || Buffer.from(x, 'base64url').toString('base64url') !== x) continue;
    if ((use !== undefined && use !== 'sig') || (alg !== undefined && alg !== 'EdDSA' && alg !== 'Ed25519')) continue;
    if (thumbprintOf(x) !== kid) continue;
    const entry = {
      ...(key as JwksKey),
      nbf: typeof nbf === 'number' && Number.isFinite(nbf) ? nbf : Number.POSITIVE_INFINITY,
    };
    if (exp !== undefined) entry.exp = typeof exp === 'number' && !Number.isNaN(exp) ? exp : Number.NEGATIVE_INFINITY;
    usable.push(entry);
  }
  return { keys: usable };
}

const parsedVerifiers = new Map<string, NoteVerifier>();

function toVerifier(logKey: string | NoteVerifier): NoteVerifier {
  if (typeof logKey !== 'string') return logKey;
  let verifier = parsedVerifiers.get(logKey);
  if (!verifier) {
    verifier = parseVerifierString(logKey.trim());
    if (parsedVerifiers.size > 100) parsedVerifiers.clear();
    parsedVerifiers.set(logKey, verifier);
  }
  return verifier;
}

function decodeHash(value: string | Uint8Array, position: number): Uint8Array {
  if (value instanceof Uint8Array) return value;
  const bytes = typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.alloc(0);
  if (typeof value !== 'string' || bytes.toString('base64') !== value)
    throw new Error(`proof hash ${position} is not base64`);
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function verifyLogEvidence(
  attestation: Uint8Array,
  inclusion: InclusionEvidence | undefined,
  logKey: string | NoteVerifier,
  expectedIndex: number | undefined,
): { index: number; checkpoint: VerifiedCheckpoint } {
  const verifier = toVerifier(logKey); // a malformed pinned log key is the caller's BAD_REQUEST, not NOT_IN_LOG
  if (inclusion === undefined || inclusion === null) {
    throw new ToolsealError('NOT_IN_LOG', 'there is no inclusion proof for this attestation');
  }
  let stage = 'the inclusion proof is malformed';
  try {
    let index: number;
    let size: number | undefined;
    let hashes: Uint8Array[];
    let note: string;
    if (typeof inclusion === 'string') {
      const parsed = parseTlogProof(inclusion);
      ({ index, checkpoint: note } = parsed);
      hashes = parsed.proof;
    } else {
      if (
        typeof inclusion !== 'object' ||
        !Array.isArray(inclusion.hashes) ||
        typeof inclusion.checkpoint !== 'string'
      ) {
        throw new Error('expected {index, hashes, checkpoint}');
      }
      index = inclusion.index;
      size = inclusion.size;
      note = inclusion.checkpoint;
      hashes = inclusion.hashes.map(decodeHash);
    }
    if (expectedIndex !== undefined && index !== expectedIndex)
      throw new Error(`it is for leaf ${index}, not the claimed log index ${expectedIndex}`);
    stage = 'the checkpoint is not signed by the log key';
    const checkpoint = verifyCheckpoint(note, verifier, { origin: verifier.name });
    stage = 'the inclusion proof does not verify';
    if (size !== undefined && size !== checkpoint.size)
      throw new Error(`it is for tree size ${size}, the checkpoint for ${checkpoint.size}`);
    verifyInclusionProof(hashLeaf(attestation), index, checkpoint.size, hashes, checkpoint.rootHash);
    return {
      index,
      checkpoint: {
        origin: checkpoint.origin,
        size: checkpoint.size,
        rootHash: Buffer.from(checkpoint.rootHash).toString('base64'),
        note,
      },
    };
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    throw new ToolsealError(
      'NOT_IN_LOG',
      `the attestation is not proven to be in the log ${verifier.name}: ${stage} (${detail})`,
      { cause },
    );
  }
}

// ── fetching ───────────────────────────────────────────────────────────────

export interface FetchVerifiedOptions {
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
  /** Per-request timeout in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Largest response accepted, in bytes (default 8 MiB). */
  maxResponseBytes?: number;
  /** Abort everything. */
  signal?: AbortSignal;
  /** The fetch implementation (default globalThis.fetch). */
  fetch?: typeof fetch;
}

export interface FetchedManifest extends VerifiedManifest {
  /** The registry base URL the manifest was fetched from. */
  registry: string;
  /** The registry's status for this binding (`active` or `yanked`); reported, not proven. */
  status: string | undefined;
}

/**
 * Fetch `ref` (`namespace/name@version` or `sha256:<hex>`) from the registry at `registryUrl`, with its
 * attestation and log inclusion proof, and verify everything (see verifyFetched) before returning.
 *  - name@version: GET /v1/manifests/{name}/{version} and …/attestation; the inclusion proof comes from
 *    GET /v1/attestations/{sha256 of the bytes, recomputed}, binding for that name@version.
 *  - sha256:<hex>: GET /v1/blobs/{digest} and GET /v1/attestations/{digest}: the single binding, or the one
 *    options.name selects. The attestation bytes are the JCS form of the served JWS (they are logged in JCS).
 */
export async function fetchVerified(
  registryUrl: string,
  ref: string,
  options: FetchVerifiedOptions = {},
): Promise<FetchedManifest> {
  const base = normaliseRegistryUrl(registryUrl);
  const target = parseManifestRef(ref);
  const pin = options.expectedDigest ?? options.lock?.digest;
  if (pin !== undefined && !isSha256Digest(pin))
    throw new ToolsealError('BAD_REQUEST', `the pinned digest ${JSON.stringify(pin)} is not sha256:<hex>`);
  const http = new RegistryClient(base, options);
  try {
    const jwksPromise: Promise<Jwks | readonly JwksKey[]> = options.jwks
      ? Promise.resolve(options.jwks)
      : options.pinnedKeys
        ? Promise.resolve(options.pinnedKeys)
        : http.getJson(ROUTES.jwks).then((value) => asJwks(value));
    const logKeyPromise: Promise<string> =
      options.logKey !== undefined ? Promise.resolve(options.logKey) : http.getText(ROUTES.logKey).then(asLogKey);
    // Avoid unhandled rejections while other requests are in flight; each promise is awaited below.
    jwksPromise.catch(() => undefined);
    logKeyPromise.catch(() => undefined);

    let bytes: Uint8Array;
    let attestation: Uint8Array;
    let binding: Binding | undefined;
    let expected: VerifyExpectation;
    if (target.kind === 'version') {
      const path = versionPath(target.name, target.version);
      const attestationPromise = http.getBytes(attestationPath(target.name, target.version));
      attestationPromise.catch(() => undefined);
      bytes = await http.getBytes(path);
      // The digest is recomputed here; whatever the server says is only a lookup key for the log proof.
      const actual = computeDigest(bytes);
      // A pin needs no registry evidence: refuse other bytes before anything else can fail or be fetched.
      if (pin !== undefined && actual !== pin) throw pinMismatch(actual, pin, target);
      attestation = await attestationPromise;
      const bindings = await getBindings(http, actual);
      binding = bindings.find((b) => b.name === target.name && b.version === target.version);
      expected = { name: target.name, version: target.version };
    } else {
      const bindingsPromise = getBindings(http, target.digest);
      bindingsPromise.catch(() => undefined);
      bytes = await http.getBytes(blobPath(target.digest));
      const actual = computeDigest(bytes);
      if (pin !== undefined && actual !== pin) throw pinMismatch(actual, pin, target);
      if (actual !== target.digest) {
        // Never trust the URL either: the bytes must be the digest asked for, whatever binding comes with them.
        throw new ToolsealError(
          'DIGEST_MISMATCH',
          `the registry served bytes with digest ${actual} for ${target.digest}`,
        );
      }
      const bindings = await bindingsPromise;
      binding = selectBinding(bindings, target.digest, options.name);
      if (binding.attestation === undefined)
        throw new ToolsealError('FETCH_FAILED', `the registry sent no attestation for ${target.digest}`);
      attestation = binding.attestation;
      expected = { name: binding.name, version: binding.version };
    }
    if (pin !== undefined) expected.digest = pin;
    if (binding !== undefined) expected.logIndex = binding.logIndex;
    const verified = verifyFetched({
      bytes,
      attestation,
      inclusion: binding?.inclusion,
      jwks: await jwksPromise,
      logKey: await logKeyPromise,
      expected,
    });
    return { ...verified, registry: base, status: binding?.status };
  } finally {
    http.abortAll(); // a refusal may leave requests in flight (keys, proofs): nothing outlives the call
  }
}

function pinMismatch(actual: Sha256Digest, pin: Sha256Digest, target: ManifestRef): ToolsealError {
  const what = target.kind === 'version' ? `${target.name}@${target.version}` : target.digest;
  return new ToolsealError(
    'PIN_MISMATCH',
    `the registry served bytes with digest ${actual} for ${what}, which is pinned to ${pin}`,
  );
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

interface Binding {
  name: string;
  version: string;
  status: string | undefined;
  logIndex: number | undefined;
  attestation: Uint8Array | undefined;
  inclusion: InclusionEvidence | undefined;
}

function selectBinding(bindings: Binding[], digest: string, wanted: string | undefined): Binding {
  let candidates = bindings;
  if (wanted !== undefined) {
    const at = wanted.lastIndexOf('@');
    const name = at < 0 ? wanted : wanted.slice(0, at);
    const version = at < 0 ? undefined : wanted.slice(at + 1);
    candidates = bindings.filter((b) => b.name === name && (version === undefined || b.version === version));
  }
  const only = candidates[0];
  if (only === undefined) {
    throw new ToolsealError(
      'NOT_FOUND',
      wanted === undefined ? `no attestation covers ${digest}` : `no attestation binds ${digest} to ${wanted}`,
    );
  }
  if (candidates.length > 1) {
    const list = candidates.map((b) => `${b.name}@${b.version}`).join(', ');
    throw new ToolsealError(
      'BAD_REQUEST',
      `${digest} is bound to several name@versions (${list}); say which with options.name`,
    );
  }
  return only;
}

function asJwks(value: JsonValue): Jwks {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray(value['keys'])) {
    throw new ToolsealError('FETCH_FAILED', 'the registry JWKS is not {"keys": [...]}');
  }
  return value as unknown as Jwks;
}

function asLogKey(text: string): string {
  const key = text.trim();
  try {
    parseVerifierString(key);
  } catch (cause) {
    throw new ToolsealError('FETCH_FAILED', 'the registry log key is not a note verifier string', { cause });
  }
  return key;
}

function parseBindings(value: JsonValue): Binding[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray(value['bindings'])) {
    throw new ToolsealError('FETCH_FAILED', 'the attestations response is not {"bindings": [...]}');
  }
  const bindings: Binding[] = [];
  for (const item of value['bindings']) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const { name, version, status, logIndex, attestation, inclusionProof } = item as JsonObject;
    if (typeof name !== 'string' || typeof version !== 'string') continue;
    bindings.push({
      name,
      version,
      status: typeof status === 'string' ? status : undefined,
      logIndex: typeof logIndex === 'number' ? logIndex : undefined,
      // Logged attestations are JCS; re-serialising the served JSON with JCS gives the logged bytes back.
      attestation:
        typeof attestation === 'object' && attestation !== null && !Array.isArray(attestation)
          ? canonicalizeToBytes(attestation)
          : undefined,
      inclusion: asInclusion(inclusionProof),
    });
  }
  return bindings;
}

function asInclusion(value: JsonValue | undefined): InclusionEvidence | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { index, size, hashes, checkpoint } = value;
  if (typeof index !== 'number' || !Array.isArray(hashes) || typeof checkpoint !== 'string') return undefined;
  if (!hashes.every((hash): hash is string => typeof hash === 'string')) return undefined;
  return typeof size === 'number' ? { index, size, hashes, checkpoint } : { index, hashes, checkpoint };
}

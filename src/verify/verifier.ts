// createVerifier: verifyFetched and fetchVerified that keep what they proved (a checkpoint note verified once,
// keys selected once), so N manifests under one checkpoint cost about one Ed25519 verify each (RFC 9162 §2.1.4:
// a newer checkpoint is admitted only when consistent with the one already proven).

import { selectUsableKeys, type Jwks, type JwksKey } from '../attest/index.ts';
import { decodeBase64Strict } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';
import type { RegistryClient } from '../client/registry-client.ts';
import { normaliseRegistryUrl } from '../client/registry-client.ts';
import { fetchConsistencyProofFromTiles, withTileFallback } from '../client/tile-proofs.ts';
import { checkWitnessQuorum, type NoteVerifier, type WitnessPolicy } from '../log/index.ts';
import { consistencyProofPath } from '../protocol/routes.ts';
import { CheckpointCache, type ConsistencyEvidence, type ConsistencyRange } from './checkpoint-cache.ts';
import {
  type FetchedManifest,
  type FetchEngine,
  type FetchVerifiedOptions,
  fetchRegistryJwks,
  fetchRegistryLogKey,
  fetchVerifiedWith,
} from './fetch-verified.ts';
import {
  EvidenceMemory,
  type InclusionEvidence,
  type ProvenCheckpoint,
  type ReadEvidence,
  readEvidence,
  toVerifier,
  type VerifiedCheckpoint,
  type WitnessRequirement,
} from './log-evidence.ts';
import {
  type VerificationKeys,
  type VerifiedManifest,
  type VerifyFetchedInput,
  verifyWithKeys,
} from './verify-fetched.ts';

export interface VerifierOptions {
  /** Pinned attestation keys, selected once (a JWKS changed in place later is not seen: make a new verifier). */
  jwks?: Jwks | readonly JwksKey[];
  /** Pinned log key (its C2SP verifier string, or parsed), parsed once. */
  logKey?: string | NoteVerifier;
  /** A C2SP tlog-policy every checkpoint must meet (a call's own witnessPolicy replaces it); checked once per note. */
  witnessPolicy?: WitnessPolicy;
}

/** verifyFetched's input; jwks and logKey default to the verifier's. */
export type VerifierInput = Omit<VerifyFetchedInput, 'jwks' | 'logKey'> & {
  jwks?: VerifyFetchedInput['jwks'];
  logKey?: VerifyFetchedInput['logKey'];
  /** The consistency proof from the verifier's latest checkpoint, when the input's checkpoint is another size. */
  consistency?: ConsistencyEvidence;
};

export interface Verifier {
  /** verifyFetched, with the checkpoint and keys it already proved; the same codes in the same order. */
  verifyFetched(input: VerifierInput): VerifiedManifest;
  /**
   * fetchVerified through this verifier: a checkpoint note it has not proven yet is verified, and when it is not
   * the latest proven one's size, GET /v1/log/proof/consistency relates the two first. Keys it fetches (TOFU,
   * when neither the verifier nor `options` pins them) are fetched once per registry and kept.
   */
  fetchVerified(registryUrl: string, ref: string, options?: FetchVerifiedOptions): Promise<FetchedManifest>;
  /** The consistency proof `input`'s checkpoint needs before verifyFetched can admit it, if any. */
  neededConsistency(input: Pick<VerifierInput, 'inclusion' | 'logKey'>): ConsistencyRange | undefined;
  /** The latest checkpoint proven for a log key (the verifier's by default). */
  latestCheckpoint(logKey?: string | NoteVerifier): VerifiedCheckpoint | undefined;
}

const MAX_FETCH_ROUNDS = 3;

/** A verifier that keeps what it proved; see Verifier. */
export function createVerifier(options: VerifierOptions = {}): Verifier {
  const shared = new SharedVerification(options);
  // Bound methods: nothing else is made per verifier (the fetch engine's caches only once fetchVerified runs).
  return {
    verifyFetched: shared.verifySync.bind(shared),
    fetchVerified: shared.fetchVerified.bind(shared),
    neededConsistency: shared.neededConsistency.bind(shared),
    latestCheckpoint: shared.latestCheckpoint.bind(shared),
  };
}

/**
 * What one Verifier keeps: usable keys per JWKS object, a checkpoint cache per note verifier (toVerifier returns
 * one object per verifier string, so equal strings share a cache), the evidence reader's memory, and for
 * fetchVerified the keys fetched per registry. It is the VerificationKeys of its calls (methods, not closures) and
 * the FetchEngine of its fetchVerified.
 */
class SharedVerification implements VerificationKeys, FetchEngine {
  // The consistency proof of the call being verified is handed to the checkpoint check through `consistency`, and
  // its JWKS through `jwksOfCall`, set for the duration of that (synchronous) call.
  private jwksOfCall: Jwks | readonly JwksKey[] = [];
  private consistency: ConsistencyEvidence | undefined;
  // The last JWKS object and log verifier asked about, answered without a look-up; the maps hold all of them.
  private lastJwks: Jwks | readonly JwksKey[] | undefined;
  private lastUsable: Jwks | undefined;
  private readonly usableByObject = new WeakMap<object, Jwks>();
  private lastVerifier: NoteVerifier | undefined;
  private lastCache: CheckpointCache | undefined;
  private readonly checkpoints = new WeakMap<NoteVerifier, CheckpointCache>();
  private tofu: { jwks: Map<string, Promise<Jwks>>; logKeys: Map<string, Promise<string>> } | undefined;
  private readonly evidence = new EvidenceMemory();
  /** Checkpoint notes that met each policy's quorum. */
  private readonly quorumMet = new WeakMap<WitnessPolicy, Set<string>>();

  constructor(private readonly options: VerifierOptions) {}

  usableJwks(): Jwks {
    const source = this.jwksOfCall;
    if (source === this.lastJwks) return this.lastUsable as Jwks;
    let usable = this.usableByObject.get(source);
    if (usable === undefined) {
      usable = selectUsableKeys(source).jwks;
      this.usableByObject.set(source, usable);
    }
    this.lastJwks = source;
    this.lastUsable = usable;
    return usable;
  }

  checkCheckpoint(note: string, verifier: NoteVerifier): ProvenCheckpoint {
    return this.cacheFor(verifier).admit(note, this.consistency);
  }

  checkQuorum(note: string, verifier: NoteVerifier, witness: WitnessRequirement): void {
    let met = this.quorumMet.get(witness.policy);
    if (met === undefined) {
      met = new Set();
      this.quorumMet.set(witness.policy, met);
    }
    if (met.has(note)) return; // cosignatures only age: a quorum met once stays met
    checkWitnessQuorum(note, witness.policy, verifier.publicKey, witness.nowSeconds);
    if (met.size >= 1000) met.clear();
    met.add(note);
  }

  readEvidence(inclusion: InclusionEvidence): ReadEvidence {
    return this.evidence.read(inclusion);
  }

  verifySync(input: VerifierInput): VerifiedManifest {
    const { options } = this;
    const jwks = input.jwks ?? options.jwks;
    if (jwks === undefined) throw new ToolsealError('BAD_REQUEST', 'no JWKS: pass jwks to createVerifier or the call');
    const logKey = input.logKey ?? options.logKey;
    if (logKey === undefined)
      throw new ToolsealError('BAD_REQUEST', 'no log key: pass logKey to createVerifier or the call');
    // The log key is parsed where verifyFetched parses it (the log-evidence stage), so the codes keep their order.
    const witnessPolicy = input.witnessPolicy ?? options.witnessPolicy;
    const complete =
      input.jwks === jwks && input.logKey === logKey && input.witnessPolicy === witnessPolicy
        ? (input as VerifyFetchedInput)
        : undefined;
    this.jwksOfCall = jwks;
    this.consistency = input.consistency;
    try {
      return verifyWithKeys(complete ?? { ...input, jwks, logKey, ...(witnessPolicy ? { witnessPolicy } : {}) }, this);
    } finally {
      this.jwksOfCall = [];
      this.consistency = undefined;
    }
  }

  neededConsistency(input: Pick<VerifierInput, 'inclusion' | 'logKey'>): ConsistencyRange | undefined {
    const note = readNote(input.inclusion);
    return note === undefined ? undefined : this.cacheFor(this.logVerifier(input.logKey)).neededRange(note);
  }

  latestCheckpoint(logKey?: string | NoteVerifier): VerifiedCheckpoint | undefined {
    return this.cacheFor(this.logVerifier(logKey)).latest;
  }

  fetchVerified(registryUrl: string, ref: string, call: FetchVerifiedOptions = {}): Promise<FetchedManifest> {
    return fetchVerifiedWith(registryUrl, ref, call, this);
  }

  // FetchEngine: keys it fetches (TOFU) are fetched once per registry and kept.
  jwks(http: RegistryClient, call: FetchVerifiedOptions): Jwks | readonly JwksKey[] | Promise<Jwks> {
    return (
      call.jwks ||
      call.pinnedKeys ||
      this.options.jwks ||
      rememberFetch(this.tofuMaps().jwks, http.base, () => fetchRegistryJwks(http))
    );
  }

  logKey(http: RegistryClient, call: FetchVerifiedOptions): string | NoteVerifier | Promise<string> {
    return (
      call.logKey ??
      this.options.logKey ??
      rememberFetch(this.tofuMaps().logKeys, http.base, () => fetchRegistryLogKey(http))
    );
  }

  async verify(http: RegistryClient, input: VerifyFetchedInput): Promise<VerifiedManifest> {
    const { logKey } = input;
    for (let round = 1; ; round++) {
      const range = this.neededConsistency({ inclusion: input.inclusion, logKey });
      const consistency = range === undefined ? undefined : await fetchConsistency(http, range);
      // Another call may have proven a newer checkpoint meanwhile: then the range to prove is another one.
      const now = this.neededConsistency({ inclusion: input.inclusion, logKey });
      if (sameRange(range, now) || round >= MAX_FETCH_ROUNDS) {
        return this.verifySync({ ...input, ...optional(consistency) });
      }
    }
  }

  private tofuMaps(): { jwks: Map<string, Promise<Jwks>>; logKeys: Map<string, Promise<string>> } {
    this.tofu ??= { jwks: new Map(), logKeys: new Map() };
    return this.tofu;
  }

  private logVerifier(logKey: string | NoteVerifier | undefined): NoteVerifier {
    const key = logKey ?? this.options.logKey;
    if (key === undefined)
      throw new ToolsealError('BAD_REQUEST', 'no log key: pass logKey to createVerifier or the call');
    return toVerifier(key);
  }

  private cacheFor(verifier: NoteVerifier): CheckpointCache {
    if (verifier === this.lastVerifier) return this.lastCache as CheckpointCache;
    let cache = this.checkpoints.get(verifier);
    if (cache === undefined) {
      cache = new CheckpointCache(verifier);
      this.checkpoints.set(verifier, cache);
    }
    this.lastVerifier = verifier;
    this.lastCache = cache;
    return cache;
  }
}

function optional(consistency: ConsistencyEvidence | undefined): { consistency?: ConsistencyEvidence } {
  return consistency === undefined ? {} : { consistency };
}

function sameRange(a: ConsistencyRange | undefined, b: ConsistencyRange | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.from === b.from && a.to === b.to);
}

/** One request per registry for the verifier's lifetime; a failed one is forgotten (the next call asks again). */
function rememberFetch<T>(memo: Map<string, Promise<T>>, base: string, start: () => Promise<T>): Promise<T> {
  const key = normaliseRegistryUrl(base);
  let promise = memo.get(key);
  if (promise === undefined) {
    promise = start();
    memo.set(key, promise);
    promise.catch(() => memo.delete(key));
  }
  return promise;
}

/** The checkpoint note of the evidence, if it can be read (verification refuses it otherwise). */
function readNote(inclusion: VerifierInput['inclusion']): string | undefined {
  if (inclusion === undefined || inclusion === null) return undefined;
  try {
    return readEvidence(inclusion).note;
  } catch {
    return undefined;
  }
}

/** The consistency proof for `range`: the proof route, else derived from the log's tiles (a static mirror). */
function fetchConsistency(http: RegistryClient, range: ConsistencyRange): Promise<ConsistencyEvidence> {
  return withTileFallback(
    () => fetchConsistencyRoute(http, range),
    async () => ({ ...range, hashes: await fetchConsistencyProofFromTiles(http, range.from, range.to) }),
  );
}

/** GET /v1/log/proof/consistency?from&to ({from, to, hashes}); its hashes are only trusted once they verify. */
async function fetchConsistencyRoute(http: RegistryClient, range: ConsistencyRange): Promise<ConsistencyEvidence> {
  const value = await http.getJson(consistencyProofPath(range.from, range.to));
  const hashes = isJsonObject(value) && Array.isArray(value['hashes']) ? value['hashes'] : undefined;
  const decoded = hashes?.map((hash) => (typeof hash === 'string' ? decodeBase64Strict(hash) : undefined));
  if (decoded === undefined || !decoded.every((hash): hash is Uint8Array => hash !== undefined)) {
    throw new ToolsealError('FETCH_FAILED', 'the consistency proof response is not {"hashes": [base64...]}');
  }
  const { from, to } = value as { from?: unknown; to?: unknown };
  if (from !== range.from || to !== range.to) {
    throw new ToolsealError('FETCH_FAILED', `the consistency proof is not from ${range.from} to ${range.to}`);
  }
  return { ...range, hashes: decoded };
}

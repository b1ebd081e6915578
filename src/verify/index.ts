// Public face of src/verify: fetch a manifest and everything that proves it, then verify it all before returning
// a byte (the host's front door). One stage per file: pin.ts, attestation.ts, subject.ts, log-evidence.ts, chained
// by verify-fetched.ts; bindings.ts reads the registry's bindings; fetch-verified.ts does the fetching. The subject
// stage validates the bytes as strictly as the strict parser with a scan (subject-scan.ts) that builds no tree; the
// result's `manifest` is parsed when first read.
//
// Sigstore bundles: verifyBundle (verify-bundle.ts) runs the same stages over a bundle v0.3 instead of a JWS: pin,
// the bundle stage (bundle-attestation.ts: DSSE signature by a pinned P-256 bundle key, keyid = hint, the statement
// checked as for a JWS, the hashedrekord leaf rebuilt from the envelope and the key), subject, log evidence (the
// rebuilt leaf proven up to a checkpoint of the pinned log, the entry's log id and signed entry timestamp checked).
// fetchVerifiedBundle (fetch-bundle.ts) fetches the bytes and GET …/{version}/bundle (or, by digest,
// /v1/blobs/{digest}/bundle) through the registry client (TOFU keys unless pinned) and runs verifyBundle;
// fetchVerified(…, { format: 'bundle' }) is the same, with fetchVerified's options (docs/sigstore.md).
//
// Many manifests: createVerifier (verifier.ts) runs the same stages but keeps what it proved: a checkpoint note
// verified once (checkpoint-cache.ts, by its exact text), the tree nodes its inclusion proofs established
// (proven-nodes.ts), the JWKS selected and the log key parsed once. A checkpoint it has not seen is verified in
// full and must be consistent (RFC 9162 §2.1.4) with the latest one it proved: its fetchVerified fetches the proof
// from GET /v1/log/proof/consistency; without a proof that verifies against both signed roots it is NOT_IN_LOG,
// and two signed roots for one tree size are LOG_INCONSISTENT (the log forked). The attestation, digest, subject
// and inclusion of every manifest are still checked.
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
// Yanked versions. The result's `status` (`active` or `yanked`) and `yankReason` are what the registry's binding
// says: reported, not proven (the yank is a transparency-log entry, but no proof of it comes with the binding, and a
// registry can as well hide a yank). options.yanked: 'allow' (the default) only reports it; 'refuse' throws
// VERSION_YANKED after every other check passed (what `toolseal pin` does unless --allow-yanked).
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
//   VERSION_YANKED    with options.yanked 'refuse': everything verified, but the registry reports the version yanked
//   LOG_INCONSISTENT  (a Verifier only) the checkpoint and one already proven are two roots for one tree size
//   WITNESS_QUORUM    with options.witnessPolicy (a C2SP tlog-policy, parseWitnessPolicy): the checkpoint, signed by
//                     the log, lacks the policy's quorum of verified cosignatures (C2SP tlog-cosignature; ones stamped
//                     after nowSeconds are ignored), a policy witness's cosignature does not verify, or the log key is
//                     not one the policy lists. Checked right after the checkpoint signature, before the inclusion.

export { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS } from '../client/registry-client.ts';
export { parseManifestRef, type ManifestRef } from '../protocol/manifest-ref.ts';
export {
  fetchVerified,
  type FetchedManifest,
  type FetchVerifiedOptions,
  type YankedPolicy,
} from './fetch-verified.ts';
export type { InclusionEvidence, VerifiedCheckpoint } from './log-evidence.ts';
export {
  verifyFetched,
  type VerifiedManifest,
  type VerifyExpectation,
  type VerifyFetchedInput,
} from './verify-fetched.ts';
export type { ConsistencyEvidence, ConsistencyRange } from './checkpoint-cache.ts';
export { createVerifier, type Verifier, type VerifierInput, type VerifierOptions } from './verifier.ts';
export { parseWitnessPolicy, type WitnessPolicy } from '../log/index.ts';
export { verifyBundle, type VerifiedBundle, type VerifyBundleInput } from './verify-bundle.ts';
export {
  fetchVerifiedBundle,
  type FetchedBundle,
  type FetchedManifestBundle,
  type FetchVerifiedBundleFormatOptions,
  type FetchVerifiedBundleOptions,
} from './fetch-bundle.ts';

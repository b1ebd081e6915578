// "Verified in this browser", second group (issue 26 §3): the version's Sigstore bundle v0.3, checked here with
// WebCrypto (ECDSA P-256, Ed25519, SHA-256) as src/verify/verify-bundle.ts checks it, trusting nothing it says:
//   bundle-signature  — mediaType v0.3, a public-key hint, a DSSE envelope (application/vnd.in-toto+json) with exactly
//                       one signature whose keyid is the hint, by the JWKS P-256 key whose RFC 7638 thumbprint is that
//                       kid: ECDSA P-256 SHA-256 over PAE (DSSE protocol.md), the DER signature read strictly
//                       (src/attest/dsse.ts, p256-jwk.ts, src/verify/bundle-attestation.ts);
//   bundle-statement  — the DSSE payload is this page's name@version over the bytes' SHA-256, and exactly the
//                       statement bytes the JWS signs (the registry signs the same JCS bytes twice: equal bytes, not
//                       merely equal content);
//   bundle-key-window — the log's signed entry timestamp (inclusionPromise, Ed25519 by the log key over JCS
//                       {body, integratedTime, logID, logIndex}) verifies, and nbf <= integratedTime < exp and
//                       nbf <= storedAt < exp (verifyBundleAttestation, checkStatement);
//   bundle-log-entry  — one tlog entry, hashedrekord 0.0.2, naming this log (logId.keyId = SHA-256(origin ‖ 0x0A ‖ 0x01
//                       ‖ key)), whose canonicalizedBody is byte for byte the JCS body rebuilt here from SHA-256(PAE),
//                       the envelope's signature and the key's SPKI (src/attest/rekor-entry.ts);
//   bundle-checkpoint — inclusionProof.checkpoint.envelope is a C2SP signed note by the log key (and each listed
//                       witness's cosignature on it verifies); it may be older or newer than the JWS group's;
//   bundle-inclusion  — RFC 9162 §2.1.3.2 from SHA-256(0x00 ‖ rebuilt body) by the bundle's proof to that checkpoint.
// Output is text only (the caller's textContent), never markup.

import {
  concatBytes,
  decodeBase64,
  decodeBase64url,
  encodeBase64,
  encodeBase64url,
  encoder,
  equalBytes,
  fail,
  isObject,
  parseJsonText,
  parseStatement,
  parseVerifierString,
  quiet,
  sha256,
  toHex,
  verifyCheckpointNote,
  verifyCosignatures,
  verifyEd25519,
  verifyInclusion,
} from './verify-common.js';

const BUNDLE_MEDIA_TYPE = 'application/vnd.dev.sigstore.bundle.v0.3+json';
const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';
const P256_KEY_DETAILS = 'PKIX_ECDSA_P256_SHA_256';
const DECIMAL = /^(?:0|[1-9][0-9]{0,15})$/;

/** The bundle checks, in the panel's order (ids of the page's second list; src/web/version-page.tsx). */
export const BUNDLE_CHECK_IDS = [
  'bundle-signature',
  'bundle-statement',
  'bundle-key-window',
  'bundle-log-entry',
  'bundle-checkpoint',
  'bundle-inclusion',
];

// ── reading the bundle (src/verify/bundle-attestation.ts, src/attest/dsse.ts) ──

function readBundle(text) {
  const bundle = parseJsonText(text, 'the bundle');
  if (!isObject(bundle)) fail('the bundle is not a JSON object');
  if (bundle.mediaType !== BUNDLE_MEDIA_TYPE) fail(`the bundle's mediaType is not ${BUNDLE_MEDIA_TYPE}`);
  const material = bundle.verificationMaterial;
  if (!isObject(material) || !isObject(material.publicKey)) fail('the bundle has no verificationMaterial.publicKey');
  const hint = material.publicKey.hint;
  if (typeof hint !== 'string' || hint === '') fail('the bundle has no public-key hint');
  return { bundle, material, hint };
}

/** PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII decimal bytes. */
export function encodePae(type, body) {
  const typeBytes = encoder.encode(type);
  const head = encoder.encode(`DSSEv1 ${typeBytes.byteLength} `);
  return concatBytes(head, typeBytes, encoder.encode(` ${body.byteLength} `), body);
}

/** The envelope: the in-toto payload type, strict base64, exactly one signature whose keyid is the hint. */
function readEnvelope({ bundle, hint }) {
  const envelope = bundle.dsseEnvelope;
  if (!isObject(envelope)) fail('the bundle has no DSSE envelope');
  if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE) fail(`the DSSE payloadType is not ${IN_TOTO_PAYLOAD_TYPE}`);
  const payload = decodeBase64(envelope.payload);
  if (payload === undefined || payload.byteLength === 0) fail('the DSSE payload is not base64');
  if (!Array.isArray(envelope.signatures) || envelope.signatures.length !== 1)
    fail('the DSSE envelope does not have exactly one signature');
  const only = envelope.signatures[0];
  const signature = isObject(only) ? decodeBase64(only.sig) : undefined;
  if (signature === undefined || signature.byteLength === 0) fail('the DSSE signature is not base64');
  if (only.keyid !== hint) fail("the DSSE signature's keyid is not the bundle's public-key hint");
  return { payload, signature, kid: hint, pae: encodePae(IN_TOTO_PAYLOAD_TYPE, payload) };
}

function readCount(value, what) {
  if (typeof value !== 'string' || !DECIMAL.test(value) || !Number.isSafeInteger(Number(value)))
    fail(`${what} is not a decimal string`);
  return Number(value);
}

/** The one tlog entry: hashedrekord 0.0.2, its index, time, log id and body (the proof is read where it is used). */
function readTlogEntry({ material }) {
  const entries = material.tlogEntries;
  if (!Array.isArray(entries) || entries.length !== 1) fail('the bundle does not have exactly one tlog entry');
  const entry = entries[0];
  if (!isObject(entry)) fail('tlogEntries[0] is not an object');
  if (entry.kindVersion?.kind !== 'hashedrekord' || entry.kindVersion?.version !== '0.0.2')
    fail('the tlog entry is not hashedrekord 0.0.2');
  const logId = isObject(entry.logId) ? decodeBase64(entry.logId.keyId) : undefined;
  if (logId === undefined) fail('logId.keyId is not base64');
  const body = decodeBase64(entry.canonicalizedBody);
  if (body === undefined || body.byteLength === 0) fail('canonicalizedBody is not base64');
  const proof = isObject(entry.inclusionProof) ? entry.inclusionProof : fail('the tlog entry has no inclusionProof');
  return {
    logIndex: readCount(entry.logIndex, 'logIndex'),
    integratedTime: readCount(entry.integratedTime, 'integratedTime'),
    logId,
    body,
    promise: isObject(entry.inclusionPromise) ? decodeBase64(entry.inclusionPromise.signedEntryTimestamp) : undefined,
    proof,
  };
}

// ── the bundle key (src/attest/p256-jwk.ts selectUsableBundleKeys) ──────────

function isCoordinate(text) {
  // decodeBase64url answers only canonical text (padding and trailing bits), so one text names one point.
  return typeof text === 'string' && /^[A-Za-z0-9_-]{43}$/.test(text) && decodeBase64url(text) !== undefined;
}

/** The JWKS P-256 key named by its RFC 7638 thumbprint `kid`, imported for ECDSA, with its SPKI DER and window. */
export async function selectBundleKey(jwks, kid) {
  const keys = isObject(jwks) && Array.isArray(jwks.keys) ? jwks.keys : fail('the JWKS is not {"keys": [...]}');
  for (const key of keys) {
    if (!isObject(key) || key.kid !== kid || key.kty !== 'EC' || key.crv !== 'P-256' || 'd' in key) continue;
    if ((key.use !== undefined && key.use !== 'sig') || (key.alg !== undefined && key.alg !== 'ES256')) continue;
    if (!isCoordinate(key.x) || !isCoordinate(key.y)) continue;
    const members = `{"crv":"P-256","kty":"EC","x":"${key.x}","y":"${key.y}"}`;
    if (encodeBase64url(await sha256(encoder.encode(members))) !== kid) continue;
    let publicKey;
    try {
      const jwk = { kty: 'EC', crv: 'P-256', x: key.x, y: key.y };
      publicKey = await crypto.subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']);
    } catch {
      continue;
    }
    const spki = new Uint8Array(await crypto.subtle.exportKey('spki', publicKey));
    return { kid, publicKey, spki, nbf: key.nbf, exp: key.exp };
  }
  return fail(`the JWKS has no usable P-256 bundle key with kid ${kid}`);
}

/**
 * An ECDSA-Sig-Value (RFC 3279 §2.2.3) in strict DER as raw r ‖ s (32 bytes each), the form WebCrypto verifies:
 * short-form lengths that add up exactly, minimal non-negative INTEGERs of at most 32 bytes, neither zero.
 */
export function readDerSignature(der) {
  const bad = (why) => fail(`the DSSE signature is not a DER ECDSA P-256 signature: ${why}`);
  if (der.byteLength < 8 || der.byteLength > 72) bad(`it is ${der.byteLength} bytes`);
  if (der[0] !== 0x30 || der[1] !== der.byteLength - 2) bad('it is not one SEQUENCE of its length');
  let offset = 2;
  const readInteger = (what) => {
    const length = der[offset + 1];
    if (der[offset] !== 0x02 || length === undefined) bad(`${what} is not an INTEGER`);
    if (length < 1 || length > 33 || offset + 2 + length > der.byteLength) bad(`${what} has a bad length`);
    const value = der.subarray(offset + 2, offset + 2 + length);
    offset += 2 + length;
    if (value[0] & 0x80) bad(`${what} is negative`);
    if (length > 1 && value[0] === 0 && !(value[1] & 0x80)) bad(`${what} is not minimally encoded`);
    const magnitude = value[0] === 0 ? value.subarray(1) : value;
    if (magnitude.byteLength > 32) bad(`${what} is longer than 32 bytes`);
    if (magnitude.every((byte) => byte === 0)) bad(`${what} is zero`);
    const out = new Uint8Array(32);
    out.set(magnitude, 32 - magnitude.byteLength);
    return out;
  };
  const r = readInteger('r');
  const s = readInteger('s');
  if (offset !== der.byteLength) bad('bytes follow s');
  return concatBytes(r, s);
}

/** The JCS hashedrekord v0.0.2 body (src/attest/rekor-entry.ts), members in JCS order, rebuilt from the bundle. */
export async function rebuildHashedRekordBody(envelope, key) {
  const data = { algorithm: 'SHA2_256', digest: encodeBase64(await sha256(envelope.pae)) };
  const verifier = { keyDetails: P256_KEY_DETAILS, publicKey: { rawBytes: encodeBase64(key.spki) } };
  const signature = { content: encodeBase64(envelope.signature), verifier };
  return encoder.encode(
    JSON.stringify({ apiVersion: '0.0.2', kind: 'hashedrekord', spec: { hashedRekordV002: { data, signature } } }),
  );
}

// ── the checks ────────────────────────────────────────────────────────────

async function checkEnvelopeSignature(envelopePromise, keyPromise) {
  const { signature, pae, kid } = await envelopePromise;
  const key = await keyPromise;
  const raw = readDerSignature(signature);
  if (!(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key.publicKey, raw, pae)))
    fail(`the ECDSA P-256 signature over the DSSE PAE does not verify with bundle key ${kid}`);
  return `DSSE envelope signed (ECDSA P-256) by bundle key ${kid}, the bundle's hint`;
}

async function checkEnvelopeStatement(envelopePromise, attestationPromise, bytesPromise, name, version) {
  const { payload } = await envelopePromise;
  const statement = parseStatement(payload, 'the DSSE payload');
  const wanted = `${name}@${version}`;
  if (statement.subject[0].name !== wanted)
    fail(`the DSSE statement is for ${statement.subject[0].name}, not ${wanted}`);
  const actual = toHex(await sha256(await bytesPromise));
  const attested = statement.subject[0].digest.sha256;
  if (attested !== actual)
    fail(`the DSSE statement covers sha256:${attested}, the bytes received hash to sha256:${actual}`);
  const { payloadBytes } = await attestationPromise;
  if (!equalBytes(payload, payloadBytes)) fail("the DSSE payload is not the JWS's statement (the bytes differ)");
  return `${wanted}, sha256:${actual}: the JWS's statement, byte for byte (${payload.byteLength} bytes)`;
}

function formatSeconds(seconds) {
  return new Date(seconds * 1000).toISOString();
}

async function checkBundleKeyWindow(entryPromise, rebuiltPromise, verifierPromise, keyPromise, envelopePromise) {
  const entry = await entryPromise;
  const verifier = await verifierPromise;
  const body = await rebuiltPromise;
  // The promise payload (sigstore.md): JCS of {body, integratedTime, logID (hex), logIndex}, members in that order.
  const { integratedTime, logIndex } = entry;
  const payload = encoder.encode(
    JSON.stringify({ body: encodeBase64(body), integratedTime, logID: toHex(entry.logId), logIndex }),
  );
  const promise = entry.promise;
  if (promise?.byteLength !== 64 || !(await verifyEd25519(verifier.publicKey, promise, payload)))
    fail("the log's signed entry timestamp (inclusionPromise) does not verify with the log key");
  const { kid, nbf, exp } = await keyPromise;
  if (typeof nbf !== 'number' || !Number.isFinite(nbf)) fail(`bundle key ${kid} has no numeric nbf: it is never valid`);
  if (exp !== undefined && (typeof exp !== 'number' || Number.isNaN(exp)))
    fail(`bundle key ${kid} has a malformed exp`);
  const valid = (seconds) => !Number.isNaN(seconds) && seconds >= nbf && (exp === undefined || seconds < exp);
  if (!valid(integratedTime))
    fail(`bundle key ${kid} was not the registry's bundle key when the log integrated the entry`);
  const { storedAt } = parseStatement((await envelopePromise).payload, 'the DSSE payload').predicate;
  if (!valid(Math.floor(new Date(storedAt).getTime() / 1000)))
    fail(`bundle key ${kid} was not the registry's bundle key at ${storedAt}`);
  const until = exp === undefined ? '' : ` until ${formatSeconds(exp)}`;
  return `integrated ${formatSeconds(integratedTime)} (signed entry timestamp verified); key valid from ${formatSeconds(nbf)}${until}`;
}

async function checkLogEntry(entryPromise, rebuiltPromise, verifierPromise) {
  const entry = await entryPromise;
  const verifier = await verifierPromise;
  if (!equalBytes(entry.logId, verifier.logId)) fail(`the tlog entry's logId is not the log ${verifier.name}`);
  const rebuilt = await rebuiltPromise;
  if (!equalBytes(entry.body, rebuilt))
    fail('canonicalizedBody is not the hashedrekord 0.0.2 entry rebuilt from the envelope and the key');
  return `hashedrekord 0.0.2 at log index ${entry.logIndex}: canonicalizedBody is the entry rebuilt here (${rebuilt.byteLength} bytes)`;
}

/** The bundle's checkpoint verified with the log key, with the listed witnesses' cosignatures on it. */
async function verifyBundleCheckpoint(entryPromise, verifierPromise, witnessesPromise) {
  const { proof } = await entryPromise;
  const note = isObject(proof.checkpoint) ? proof.checkpoint.envelope : undefined;
  if (typeof note !== 'string') fail('the inclusion proof has no checkpoint envelope');
  const checkpoint = await verifyCheckpointNote(note, await verifierPromise);
  const witnesses = await witnessesPromise;
  const rows = await verifyCosignatures(note, witnesses);
  const cosigned =
    witnesses.length === 0 ? '' : `; ${rows.length} of ${witnesses.length} witnesses cosigned it (verified here)`;
  return { checkpoint, cosigned };
}

async function checkBundleInclusion(entryPromise, rebuiltPromise, checkpointPromise) {
  const { proof, logIndex } = await entryPromise;
  const checkpoint = await checkpointPromise.then(
    (verified) => verified.checkpoint,
    () => fail("there is no verified bundle checkpoint to prove the bundle's inclusion against"),
  );
  if (readCount(proof.logIndex, 'inclusionProof.logIndex') !== logIndex)
    fail('the inclusion proof is for another log index than the entry');
  const size = readCount(proof.treeSize, 'inclusionProof.treeSize');
  if (size !== checkpoint.size)
    fail(`the inclusion proof is for tree size ${size}, the checkpoint for ${checkpoint.size}`);
  if (proof.rootHash !== checkpoint.rootText) fail("the inclusion proof's rootHash is not the checkpoint's root");
  const hashes = Array.isArray(proof.hashes)
    ? proof.hashes.map(decodeBase64)
    : fail('the inclusion proof has no hashes');
  if (hashes.some((hash) => hash === undefined || hash.byteLength !== 32)) fail('a proof hash is not 32 bytes');
  const leafHash = await sha256(new Uint8Array([0x00]), await rebuiltPromise);
  await verifyInclusion(leafHash, logIndex, size, hashes, checkpoint.rootHash);
  return `leaf ${logIndex} of ${size} (the rebuilt entry), ${hashes.length} proof hashes`;
}

/**
 * Start every bundle check. `inputs`: the page's name and version, and promises of the bundle's text, the bytes, the
 * parsed attestation (its payloadBytes), the parsed JWKS, the log key's text and the listed witnesses. Returns the
 * checks by id (BUNDLE_CHECK_IDS): each a promise of its detail, rejected with the reason it failed.
 */
export function startBundleChecks(inputs) {
  const { name, version, bundleText, bytes, attestation, jwks, logKey, witnesses } = inputs;
  const bundle = quiet(bundleText.then(readBundle));
  const envelope = quiet(bundle.then(readEnvelope));
  const entry = quiet(bundle.then(readTlogEntry));
  const key = quiet(Promise.all([bundle, jwks]).then(([read, keys]) => selectBundleKey(keys, read.hint)));
  const rebuilt = quiet(Promise.all([envelope, key]).then(([env, usable]) => rebuildHashedRekordBody(env, usable)));
  const verifier = quiet(logKey.then(parseVerifierString));
  const checkpoint = quiet(verifyBundleCheckpoint(entry, verifier, witnesses));
  return {
    'bundle-signature': checkEnvelopeSignature(envelope, key),
    'bundle-statement': checkEnvelopeStatement(envelope, attestation, bytes, name, version),
    'bundle-key-window': checkBundleKeyWindow(entry, rebuilt, verifier, key, envelope),
    'bundle-log-entry': checkLogEntry(entry, rebuilt, verifier),
    'bundle-checkpoint': checkpoint.then(
      ({ checkpoint: head, cosigned }) =>
        `log ${head.origin}, tree size ${head.size}, root ${head.rootText}${cosigned}`,
    ),
    'bundle-inclusion': checkBundleInclusion(entry, rebuilt, checkpoint),
  };
}

// "Verified in this browser": the version page's panel. Fetches the exact bytes, the attestation, the JWKS, the log
// checkpoint, the log key and an inclusion proof from the public API (src/protocol/routes.ts) and checks them here
// with WebCrypto (Ed25519, SHA-256), trusting nothing the server says about them. The same checks as the host side:
//   signature  — RFC 7515 §7.2.2 flattened JWS, RFC 8037 EdDSA, by the JWKS key whose RFC 7638 thumbprint is its kid
//                (src/attest/jws.ts, src/attest/jwks.ts);
//   subject    — the in-toto subject is this page's name@version, which the bytes declare too (src/verify/subject.ts);
//   digest     — sha256 of the bytes is the subject digest (src/verify/verify-fetched.ts);
//   key-window — nbf <= storedAt < exp, in seconds (checkStatement in src/attest/jws.ts);
//   checkpoint — a C2SP signed note by the log key, whose origin is the key's name (src/log/note.ts, checkpoint.ts);
//   inclusion  — RFC 9162 §2.1.3.2 from RFC 6962 hashLeaf(attestation) to the checkpoint root (src/log/merkle-verify.ts).
// A second group checks the version's Sigstore bundle the same way (issue 26 §3; ./verify-bundle.js, bundle-* ids);
// what both groups share is in ./verify-common.js (ES modules served beside this one, same origin).
// With the registry's witnesses listed on the panel (data-witnesses: "NAME VKEY" lines), each cosignature on the
// checkpoint by one of them is verified (C2SP tlog-cosignature, Ed25519 over "cosignature/v1\ntime T\n" + the
// checkpoint text; src/log/cosignature.ts) and listed; one that does not verify fails the checkpoint check.
// The name@version comes from this page's own URL. Output is text only (textContent), never markup.

import { BUNDLE_CHECK_IDS, startBundleChecks } from './verify-bundle.js';
import {
  CheckFailure,
  decodeBase64,
  decodeBase64url,
  encodeBase64url,
  encoder,
  fail,
  fetchFromApi,
  isObject,
  manifestApiPath,
  parseJsonText,
  parseStatement,
  parseVerifierString,
  quiet,
  readWitnesses,
  sha256,
  toHex,
  utf8,
  verifyCheckpointNote,
  verifyCosignatures,
  verifyEd25519,
  verifyInclusion,
} from './verify-common.js';

const ATTESTATION_TYPE = 'application/vnd.toolseal.attestation.v1+jws';
const JWS_CHECK_IDS = ['signature', 'subject', 'digest', 'key-window', 'checkpoint', 'inclusion'];
/** Every check of the panel, the JWS group then the bundle group, in the page's order. */
const CHECK_IDS = [...JWS_CHECK_IDS, ...BUNDLE_CHECK_IDS];

/** Every request at once; each is awaited where a check needs it. */
function startFetches(name, version) {
  const settle = quiet;
  const path = manifestApiPath(name, version);
  return {
    bytes: settle(fetchFromApi(path, 'bytes')),
    attestation: settle(fetchFromApi(`${path}/attestation`, 'bytes')),
    jwks: settle(fetchFromApi('/.well-known/jwks.json', 'text').then((text) => parseJsonText(text, 'the JWKS'))),
    logKey: settle(fetchFromApi('/v1/log/key', 'text')),
    checkpoint: settle(fetchFromApi('/v1/log/checkpoint', 'text')),
    bundle: settle(fetchFromApi(`${path}/bundle`, 'text')),
  };
}

function checkUnprotectedHeader(jws, header) {
  if (jws.header === undefined) return;
  if (!isObject(jws.header)) fail('the JWS unprotected header is not an object');
  const names = Object.keys(jws.header);
  if (names.includes('crit') || names.some((name) => Object.hasOwn(header, name)))
    fail('the JWS header parameters must be disjoint, crit protected');
}

/** The flattened JWS: {alg: EdDSA, typ, kid} without crit, and its statement. */
function parseAttestation(bytes) {
  let jws;
  try {
    jws = JSON.parse(utf8.decode(bytes));
  } catch {
    return fail('the attestation is not JSON');
  }
  if (!isObject(jws) || [jws.protected, jws.payload, jws.signature].some((part) => typeof part !== 'string'))
    fail('the attestation is not a flattened JWS');
  const headerBytes = decodeBase64url(jws.protected);
  const payloadBytes = decodeBase64url(jws.payload);
  const signature = decodeBase64url(jws.signature);
  if (!headerBytes || !payloadBytes || !signature) fail('a JWS member is not base64url');
  let header;
  try {
    header = JSON.parse(utf8.decode(headerBytes));
  } catch {
    return fail('the JWS protected header is not JSON');
  }
  if (
    header?.alg !== 'EdDSA' ||
    header.typ !== ATTESTATION_TYPE ||
    header.crit !== undefined ||
    typeof header.kid !== 'string'
  )
    fail(`the JWS header must be {alg: EdDSA, typ: ${ATTESTATION_TYPE}, kid} without crit`);
  checkUnprotectedHeader(jws, header);
  const signingInput = encoder.encode(`${jws.protected}.${jws.payload}`);
  return { bytes, kid: header.kid, signature, signingInput, payloadBytes, statement: parseStatement(payloadBytes) };
}

// ── the signing key (src/attest/jwks.ts selectUsableKeys) ──────────────────

async function selectKey(jwks, kid) {
  const keys = isObject(jwks) && Array.isArray(jwks.keys) ? jwks.keys : fail('the JWKS is not {"keys": [...]}');
  for (const key of keys) {
    if (!isObject(key) || key.kid !== kid) continue;
    if (key.kty !== 'OKP' || key.crv !== 'Ed25519' || typeof key.x !== 'string' || 'd' in key) continue;
    if (
      (key.use !== undefined && key.use !== 'sig') ||
      (key.alg !== undefined && key.alg !== 'EdDSA' && key.alg !== 'Ed25519')
    )
      continue;
    const raw = /^[A-Za-z0-9_-]{43}$/.test(key.x) ? decodeBase64url(key.x) : undefined;
    if (raw === undefined || encodeBase64url(raw) !== key.x) continue;
    // RFC 7638 §3.2: the thumbprint of {"crv","kty","x"} in that order, so a kid names exactly one key.
    const thumbprint = encodeBase64url(await sha256(encoder.encode(`{"crv":"Ed25519","kty":"OKP","x":"${key.x}"}`)));
    if (thumbprint !== kid) continue;
    return { kid, raw, nbf: key.nbf, exp: key.exp };
  }
  return fail(`the JWKS has no usable Ed25519 key with kid ${kid}`);
}

// ── the checks of the attestation ──────────────────────────────────────────

async function checkSignature(attestation, key) {
  const { signature, signingInput, kid } = await attestation;
  const usable = await key;
  if (signature.byteLength !== 64) fail('the signature is not 64 bytes');
  if (!(await verifyEd25519(usable.raw, signature, signingInput)))
    fail(`the Ed25519 signature does not verify with key ${kid}`);
  return `signed by key ${kid}`;
}

async function checkSubject(attestation, bytesPromise, name, version) {
  const { statement } = await attestation;
  const wanted = `${name}@${version}`;
  if (statement.subject[0].name !== wanted) fail(`the attestation is for ${statement.subject[0].name}, not ${wanted}`);
  const bytes = await bytesPromise;
  let manifest;
  try {
    manifest = JSON.parse(utf8.decode(bytes));
  } catch {
    return fail('the bytes are not JSON');
  }
  if (!isObject(manifest) || typeof manifest.name !== 'string' || typeof manifest.version !== 'string')
    fail('the bytes are not a manifest with a name and a version');
  const declared = `${manifest.name}@${manifest.version}`;
  if (declared !== wanted) fail(`the bytes declare ${declared}, the attestation is for ${wanted}`);
  return `${wanted}, declared by the bytes too`;
}

async function checkDigest(attestation, bytesPromise) {
  const { statement } = await attestation;
  const bytes = await bytesPromise;
  const actual = toHex(await sha256(bytes));
  const attested = statement.subject[0].digest.sha256;
  if (actual !== attested)
    fail(`the bytes received hash to sha256:${actual}, the attestation covers sha256:${attested}`);
  return `sha256:${actual} (${bytes.byteLength} bytes)`;
}

async function checkKeyWindow(attestation, key) {
  const { statement, kid } = await attestation;
  const { nbf, exp } = await key;
  const storedAt = statement.predicate.storedAt;
  const seconds = Math.floor(new Date(storedAt).getTime() / 1000);
  if (typeof nbf !== 'number' || !Number.isFinite(nbf)) fail(`key ${kid} has no numeric nbf: it is never valid`);
  if (exp !== undefined && (typeof exp !== 'number' || Number.isNaN(exp))) fail(`key ${kid} has a malformed exp`);
  if (Number.isNaN(seconds) || seconds < nbf || (exp !== undefined && seconds >= exp))
    fail(`key ${kid} was not the registry's signing key at ${storedAt}`);
  return `stored at ${storedAt}; key valid from ${new Date(nbf * 1000).toISOString()}${exp === undefined ? '' : ` until ${new Date(exp * 1000).toISOString()}`}`;
}

async function checkCheckpoint(state, fetches) {
  const verifier = await parseVerifierString(await fetches.logKey);
  const note = await fetches.checkpoint;
  const checkpoint = await verifyCheckpointNote(note, verifier);
  state.checkpoint = checkpoint;
  const cosigned = await checkCosignatures(note, state.witnesses, state.panel);
  return `log ${checkpoint.origin}, tree size ${checkpoint.size}, root ${checkpoint.rootText}${cosigned}`;
}

/** The listed witnesses' cosignatures on the checkpoint, verified (verifyCosignatures) and listed on the panel. */
async function checkCosignatures(note, witnesses, panel) {
  if (witnesses.length === 0) return '';
  const rows = await verifyCosignatures(note, witnesses);
  const list = panel.querySelector('[data-cosignatures]');
  if (list) {
    list.replaceChildren(
      ...(rows.length === 0 ? ['no cosignature by a witness yet'] : rows).map((text) => {
        const item = document.createElement('li');
        item.dataset.cosignature = rows.length === 0 ? 'none' : 'verified';
        item.textContent = text;
        return item;
      }),
    );
  }
  return `; ${rows.length} of ${witnesses.length} witnesses cosigned it (verified here)`;
}

/** The log index is only a lookup key: the proof decides whether this attestation is that leaf. */
async function readLogIndex(statement, name, version) {
  const path = `/v1/attestations/sha256:${statement.subject[0].digest.sha256}`;
  const answer = parseJsonText(await fetchFromApi(path, 'text'), 'the attestations answer');
  const bindings = Array.isArray(answer?.bindings) ? answer.bindings : [];
  const binding = bindings.find((b) => isObject(b) && b.name === name && b.version === version);
  if (!Number.isSafeInteger(binding?.logIndex)) fail(`the registry names no log index for ${name}@${version}`);
  return binding.logIndex;
}

async function checkInclusion(state, attestation, checkpointDone, name, version) {
  const { bytes, statement } = await attestation;
  await checkpointDone;
  const checkpoint = state.checkpoint ?? fail('there is no verified checkpoint to prove inclusion against');
  const index = await readLogIndex(statement, name, version);
  const answer = parseJsonText(
    await fetchFromApi(`/v1/log/proof/inclusion?index=${index}&size=${checkpoint.size}`, 'text'),
    'the inclusion proof',
  );
  const proof = Array.isArray(answer?.hashes) ? answer.hashes.map(decodeBase64) : fail('the proof has no hashes');
  if (proof.some((hash) => hash === undefined || hash.byteLength !== 32)) fail('a proof hash is not 32 bytes');
  const leafHash = await sha256(new Uint8Array([0x00]), bytes);
  await verifyInclusion(leafHash, index, checkpoint.size, proof, checkpoint.rootHash);
  return `leaf ${index} of ${checkpoint.size}, ${proof.length} proof hashes`;
}

// ── the panel ──────────────────────────────────────────────────────────────

function showResult(panel, id, state, text) {
  const item = panel.querySelector(`[data-check="${id}"]`);
  if (!item) return;
  item.dataset.state = state;
  item.querySelector('.state').textContent = state;
  item.querySelector('.reason').textContent = text;
}

function reasonOf(error) {
  if (error instanceof CheckFailure) return error.message;
  return `could not check: ${error instanceof Error ? error.message : String(error)}`;
}

/** The page's own name@version, from its URL: /ui/manifests/{namespace}/{name}/{version}. */
function readPageRef() {
  const parts = location.pathname.split('/').slice(3).map(decodeURIComponent);
  if (parts.length !== 3) fail('this page is not a manifest version page');
  return { name: `${parts[0]}/${parts[1]}`, version: parts[2] };
}

function runChecks(panel, name, version) {
  const fetches = startFetches(name, version);
  const state = { checkpoint: undefined, panel, witnesses: [] };
  const attestation = quiet(fetches.attestation.then(parseAttestation));
  const key = quiet(Promise.all([attestation, fetches.jwks]).then(([att, jwks]) => selectKey(jwks, att.kid)));
  const witnesses = readWitnesses(panel.dataset.witnesses);
  const checkpointDone = witnesses.then((listed) => {
    state.witnesses = listed;
    return checkCheckpoint(state, fetches);
  });
  const work = {
    signature: checkSignature(attestation, key),
    subject: checkSubject(attestation, fetches.bytes, name, version),
    digest: checkDigest(attestation, fetches.bytes),
    'key-window': checkKeyWindow(attestation, key),
    checkpoint: checkpointDone,
    inclusion: checkInclusion(
      state,
      attestation,
      checkpointDone.catch(() => undefined),
      name,
      version,
    ),
    ...startBundleChecks({
      name,
      version,
      bundleText: fetches.bundle,
      bytes: fetches.bytes,
      attestation,
      jwks: fetches.jwks,
      logKey: fetches.logKey,
      witnesses,
    }),
  };
  return Promise.all(
    CHECK_IDS.map((id) =>
      work[id].then(
        (detail) => {
          showResult(panel, id, 'passed', detail);
          return true;
        },
        (error) => {
          showResult(panel, id, 'failed', reasonOf(error));
          return false;
        },
      ),
    ),
  );
}

async function main() {
  const panel = document.querySelector('[data-verify]');
  if (!panel) return;
  const summary = panel.querySelector('[data-verify-summary]');
  summary.textContent = 'Checking in this browser…';
  for (const id of CHECK_IDS) showResult(panel, id, 'checking', '');
  let outcomes;
  try {
    if (!globalThis.crypto?.subtle) fail('WebCrypto is not available here (it needs https:// or a loopback address)');
    const { name, version } = readPageRef();
    outcomes = await runChecks(panel, name, version);
  } catch (error) {
    for (const id of CHECK_IDS) showResult(panel, id, 'failed', reasonOf(error));
    outcomes = CHECK_IDS.map(() => false);
  }
  const failed = CHECK_IDS.filter((_, index) => !outcomes[index]);
  const verdict = failed.length === 0 ? 'passed' : 'failed';
  panel.dataset.state = verdict;
  summary.dataset.state = verdict;
  summary.textContent =
    failed.length === 0
      ? `All ${CHECK_IDS.length} checks passed in this browser.`
      : `${failed.length} of ${CHECK_IDS.length} checks failed in this browser: ${failed.join(', ')}. Do not trust this manifest.`;
}

main();

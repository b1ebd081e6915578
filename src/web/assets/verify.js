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
// With the registry's witnesses listed on the panel (data-witnesses: "NAME VKEY" lines), each cosignature on the
// checkpoint by one of them is verified (C2SP tlog-cosignature, Ed25519 over "cosignature/v1\ntime T\n" + the
// checkpoint text; src/log/cosignature.ts) and listed; one that does not verify fails the checkpoint check.
// The name@version comes from this page's own URL. Output is text only (textContent), never markup.

const ATTESTATION_TYPE = 'application/vnd.toolseal.attestation.v1+jws';
const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
const PREDICATE_TYPE = 'https://toolseal.dev/attestation/publish/v1';
const CHECK_IDS = ['signature', 'subject', 'digest', 'key-window', 'checkpoint', 'inclusion'];
const utf8 = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

/** A check that did not pass, with the reason shown beside it. */
class CheckFailure extends Error {}

function fail(reason) {
  throw new CheckFailure(reason);
}

// ── bytes ──────────────────────────────────────────────────────────────────

function encodeBase64(bytes) {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Strict RFC 4648 §4 base64 (canonical padding and trailing bits), or undefined. */
function decodeBase64(text) {
  if (typeof text !== 'string' || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const bytes = Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  return encodeBase64(bytes) === text ? bytes : undefined;
}

/** Unpadded base64url (RFC 7515 §2), or undefined. */
function decodeBase64url(text) {
  if (typeof text !== 'string' || text.length % 4 === 1 || !/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  const standard = text.replace(/-/g, '+').replace(/_/g, '/');
  return decodeBase64(standard + '='.repeat((4 - (standard.length % 4)) % 4));
}

function encodeBase64url(bytes) {
  return encodeBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function toHex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function concatBytes(...parts) {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

function equalBytes(a, b) {
  return a.byteLength === b.byteLength && a.every((byte, index) => byte === b[index]);
}

async function sha256(...parts) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', concatBytes(...parts)));
}

async function verifyEd25519(publicKey, signature, message) {
  const key = await crypto.subtle.importKey('raw', publicKey, { name: 'Ed25519' }, false, ['verify']);
  return crypto.subtle.verify({ name: 'Ed25519' }, key, signature, message);
}

function parseJsonText(text, what) {
  try {
    return JSON.parse(text);
  } catch {
    return fail(`${what} is not JSON`);
  }
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ── fetching (the public API only) ─────────────────────────────────────────

function manifestApiPath(name, version) {
  return `/v1/manifests/${name.split('/').map(encodeURIComponent).join('/')}/${encodeURIComponent(version)}`;
}

async function fetchFromApi(path, as) {
  let response;
  try {
    response = await fetch(path, { cache: 'no-store', credentials: 'omit', redirect: 'error' });
  } catch (error) {
    return fail(`GET ${path} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!response.ok) fail(`GET ${path} answered ${response.status}`);
  return as === 'bytes' ? new Uint8Array(await response.arrayBuffer()) : response.text();
}

/** `promise`, marked handled: it is awaited later by every check that needs it (its failure is their reason). */
function quiet(promise) {
  promise.catch(() => undefined);
  return promise;
}

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
  };
}

// ── the attestation (src/attest/jws.ts decodeAttestation, parseStatement) ──────

function parseStatement(payloadBytes) {
  let statement;
  try {
    statement = JSON.parse(utf8.decode(payloadBytes));
  } catch {
    return fail('the attestation payload is not JSON');
  }
  const subject = Array.isArray(statement?.subject) ? statement.subject[0] : undefined;
  const ok =
    statement?._type === STATEMENT_TYPE &&
    statement.predicateType === PREDICATE_TYPE &&
    statement.subject.length === 1 &&
    typeof subject?.name === 'string' &&
    typeof subject.digest?.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(subject.digest.sha256) &&
    typeof statement.predicate?.storedAt === 'string';
  if (!ok) fail('the attestation payload is not a toolseal publish statement');
  return statement;
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
  return { bytes, kid: header.kid, signature, signingInput, statement: parseStatement(payloadBytes) };
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

// ── the log: key, checkpoint (src/log/note.ts, src/log/checkpoint.ts) ───────

/**
 * A note verifier key `name+hex8+base64` split at its first two '+' (the base64 key may hold '+' itself), or
 * undefined when it has no such shape.
 */
function splitVerifierKey(line) {
  const first = line.indexOf('+');
  const second = first < 0 ? -1 : line.indexOf('+', first + 1);
  const name = line.slice(0, Math.max(first, 0));
  const hex = line.slice(first + 1, second);
  if (second < 0 || !name || /\s/.test(name) || !/^[0-9a-fA-F]{8}$/.test(hex)) return undefined;
  return { name, hex, keyText: line.slice(second + 1) };
}

/** A C2SP verifier string `name+hex8(key ID)+base64(0x01 || key)`, its key ID checked. */
async function parseVerifierString(text) {
  const parts = splitVerifierKey(text.trim());
  if (parts === undefined) fail('the log key is not a note verifier string');
  const { name, hex } = parts;
  const typed = decodeBase64(parts.keyText);
  if (typed === undefined || typed.byteLength !== 33 || typed[0] !== 0x01) fail('the log key is not an Ed25519 key');
  const publicKey = typed.slice(1);
  const hash = await sha256(encoder.encode(name), new Uint8Array([0x0a, 0x01]), publicKey);
  const keyId = new DataView(hash.buffer).getUint32(0);
  if (keyId !== Number.parseInt(hex, 16)) fail('the log key ID does not match its name and key');
  return { name, keyId, publicKey };
}

/** Split a signed note into its text and signature lines (signed-note "Format"). */
function parseNote(note) {
  if (/[\u0000-\u0009\u000B-\u001F]/.test(note)) fail('the checkpoint holds a control character');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) fail('the checkpoint has no blank line before its signatures');
  const body = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (block.length === 0 || !block.endsWith('\n')) fail('the checkpoint signature block is malformed');
  const signatures = block
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      const match = /^\u2014 (\S+) (\S+)$/.exec(line);
      const blob = match ? decodeBase64(match[2]) : undefined;
      if (!match || blob === undefined || blob.byteLength < 5) fail('a checkpoint signature line is malformed');
      return { name: match[1], keyId: new DataView(blob.buffer).getUint32(0), signature: blob.slice(4) };
    });
  return { body, signatures };
}

/** Verify the note with the log key (every signature by it must verify, at least one), then read the checkpoint. */
async function verifyCheckpointNote(note, verifier) {
  const { body, signatures } = parseNote(note);
  const own = signatures.filter((s) => s.name === verifier.name && s.keyId === verifier.keyId);
  if (own.length === 0) fail(`the checkpoint has no signature by the log key ${verifier.name}`);
  for (const { signature } of own) {
    if (signature.byteLength !== 64 || !(await verifyEd25519(verifier.publicKey, signature, encoder.encode(body))))
      fail(`the checkpoint signature by ${verifier.name} does not verify`);
  }
  const [origin, sizeText, rootText, ...rest] = body.slice(0, -1).split('\n');
  if (rest.some((line) => line.length === 0)) fail('the checkpoint has an empty extension line');
  if (origin !== verifier.name) fail(`the checkpoint origin ${origin} is not the log ${verifier.name}`);
  if (!/^(0|[1-9][0-9]*)$/.test(sizeText ?? '') || !Number.isSafeInteger(Number(sizeText)))
    fail('the checkpoint tree size is not a decimal integer');
  const rootHash = decodeBase64(rootText ?? '');
  if (rootHash === undefined || rootHash.byteLength !== 32) fail('the checkpoint root hash is not 32 bytes of base64');
  return { origin, size: Number(sizeText), rootHash, rootText };
}

async function checkCheckpoint(state, fetches) {
  const verifier = await parseVerifierString(await fetches.logKey);
  const note = await fetches.checkpoint;
  const checkpoint = await verifyCheckpointNote(note, verifier);
  state.checkpoint = checkpoint;
  const cosigned = await checkCosignatures(note, state.witnesses, state.panel);
  return `log ${checkpoint.origin}, tree size ${checkpoint.size}, root ${checkpoint.rootText}${cosigned}`;
}

// ── witness cosignatures (C2SP tlog-cosignature; src/log/cosignature.ts) ──────

/** The panel's witness list: one "NAME VKEY" per line, each vkey `name+hex8(key ID)+base64(0x04 || key)`. */
async function readWitnesses(text) {
  const witnesses = [];
  for (const line of (text ?? '').split('\n')) {
    const [policyName, vkey] = line.trim().split(' ');
    if (!policyName || !vkey) continue;
    const parts = splitVerifierKey(vkey);
    if (parts === undefined) continue;
    const { name, hex } = parts;
    const typed = decodeBase64(parts.keyText);
    if (typed?.byteLength !== 33 || typed[0] !== 0x04) continue;
    const publicKey = typed.slice(1);
    const hash = await sha256(encoder.encode(name), new Uint8Array([0x0a, 0x04]), publicKey);
    if (new DataView(hash.buffer).getUint32(0) !== Number.parseInt(hex, 16)) continue;
    witnesses.push({ policyName, name, keyId: Number.parseInt(hex, 16), publicKey });
  }
  return witnesses;
}

/**
 * Verify every cosignature on `note` by a listed witness and list each (verified, with its time); a listed witness's
 * cosignature that does not verify fails the check. Returns the text appended to the checkpoint's detail.
 */
async function checkCosignatures(note, witnesses, panel) {
  if (witnesses.length === 0) return '';
  const { body, signatures } = parseNote(note);
  const rows = [];
  for (const line of signatures) {
    const witness = witnesses.find((w) => w.name === line.name && w.keyId === line.keyId);
    if (witness === undefined) continue;
    const blob = line.signature;
    const timestamp = blob.byteLength === 72 ? new DataView(blob.buffer, blob.byteOffset).getBigUint64(0) : undefined;
    const message = encoder.encode(`cosignature/v1\ntime ${timestamp}\n${body}`);
    const valid = timestamp !== undefined && (await verifyEd25519(witness.publicKey, blob.slice(8), message));
    if (!valid) fail(`the cosignature by witness ${witness.policyName} (${witness.name}) does not verify`);
    rows.push(
      `${witness.policyName} (${witness.name}): verified, cosigned ${new Date(Number(timestamp) * 1000).toISOString()}`,
    );
  }
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

// ── inclusion (RFC 9162 §2.1.3.2; src/log/merkle-verify.ts) ─────────────────

async function verifyInclusion(leafHash, index, size, proof, rootHash) {
  if (!Number.isSafeInteger(index) || index < 0 || index >= size)
    fail(`leaf ${index} is not in a tree of size ${size}`);
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  const node = (left, right) => sha256(new Uint8Array([0x01]), left, right);
  for (const p of proof) {
    if (sn === 0) fail('the inclusion proof is too long');
    if (fn % 2 === 1 || fn === sn) {
      r = await node(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = await node(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) fail('the inclusion proof is too short');
  if (!equalBytes(r, rootHash)) fail("the inclusion proof does not lead to the checkpoint's root");
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
  const checkpointDone = readWitnesses(panel.dataset.witnesses).then((witnesses) => {
    state.witnesses = witnesses;
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

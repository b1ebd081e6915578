// A Sigstore bundle for a real publish statement, logged in an in-memory log (src/log: several leaves, a signed
// checkpoint), with the trusted root and bundle keyring that verify it; and the real @sigstore/verify run on a
// Node ≥ 22 binary (test/fixtures/sigstore-verify.mjs).

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  assembleBundle,
  buildBundleJwksKeys,
  buildBundleKeyring,
  type BundleJwksKey,
  buildPublishStatement,
  buildTrustedRoot,
  type BundleSigningKey,
  createBundleSigningKey,
  createSigningKey,
  deriveLogOrigin,
  type PublicKeyJson,
  serializeStatementJcs,
  signBundleEntry,
  signInclusionPromise,
  type SigningKey,
  type SigstoreBundleJson,
  type TrustedRootJson,
} from '../../src/attest/index.ts';
import {
  computeRootHash,
  createMemoryNodeStore,
  formatVerifierString,
  generateInclusionProof,
  hashLeaf,
  type NoteSigner,
  signCheckpoint,
} from '../../src/log/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { repoPath } from '../helpers/pipeline-helpers.ts';
import { resolveNode22Binary } from '../helpers/node22.ts';

export const PUBLIC_URL = 'http://127.0.0.1:8787';

/** The example payments manifest through the publish pipeline: the bytes a registry signs, stores and serves. */
export const published = runPipeline(readFileSync(repoPath('manifests', 'payments.json')));
export const NAME = published.name;
export const VERSION = published.version;
/** The manifest bytes the statement attests (they declare its name and version). */
export const manifestBytes = published.canonicalBytes;

export interface LoggedBundle {
  bundle: SigstoreBundleJson;
  trustedRoot: TrustedRootJson;
  keys: Record<string, PublicKeyJson>;
  /** The bundle key as a JWKS entry (nbf/exp), what our verifier pins. */
  bundleJwks: BundleJwksKey[];
  /** The log's C2SP verifier string. */
  logVerifier: string;
  statement: Uint8Array;
  bundleKey: BundleSigningKey;
  logKey: SigningKey;
  origin: string;
  logIndex: number;
  /** The leaf data appended for the bundle (the hashedrekord body). */
  leaf: Uint8Array;
}

export interface LoggedBundleOptions {
  publicUrl?: string;
  /** Seconds since the epoch the bundle key is valid from / until (null: not retired). */
  keyNotBefore?: number;
  keyNotAfter?: number | null;
  /** When the log integrated the entry (the statement's storedAt too). */
  integratedTime?: number;
  logKey?: SigningKey;
  bundleKey?: BundleSigningKey;
}

const now = Math.floor(Date.now() / 1000);

export function buildLoggedBundle(options: LoggedBundleOptions = {}): LoggedBundle {
  const publicUrl = options.publicUrl ?? PUBLIC_URL;
  const origin = deriveLogOrigin(publicUrl);
  const logKey = options.logKey ?? createSigningKey();
  const bundleKey = options.bundleKey ?? createBundleSigningKey();
  const integratedTime = options.integratedTime ?? now;
  const statement = Buffer.from(
    serializeStatementJcs(
      buildPublishStatement({
        name: NAME,
        version: VERSION,
        digest: published.digest,
        predicate: {
          registry: publicUrl,
          publisher: 'io.github.acme',
          storedAt: new Date(integratedTime * 1000).toISOString(),
          policy: 'p',
          size: published.size,
          previousDigest: null,
        },
      }),
    ),
  );
  const entry = signBundleEntry(statement, bundleKey);
  // Other leaves before and after: the proof has siblings on both sides and a right edge.
  const store = createMemoryNodeStore();
  for (let i = 0; i < 5; i++) store.append(hashLeaf(Buffer.from(`other leaf ${i}`)));
  const logIndex = store.append(hashLeaf(entry.leaf));
  for (let i = 5; i < 11; i++) store.append(hashLeaf(Buffer.from(`other leaf ${i}`)));
  const signer: NoteSigner = { name: origin, privateKey: logKey.privateKey };
  const checkpoint = signCheckpoint(
    { origin, size: store.size, rootHash: computeRootHash(store, store.size) },
    signer,
    undefined,
    [],
  );
  const bundle = assembleBundle({
    entry,
    kid: bundleKey.kid,
    log: { origin, publicKey: logKey.publicKey },
    logIndex,
    integratedTime,
    promise: signInclusionPromise(entry.leaf, integratedTime, logIndex, signer),
    proof: generateInclusionProof(store, logIndex, store.size),
    checkpoint,
  });
  const trustedRoot = buildTrustedRoot([
    { baseUrl: publicUrl, origin, publicKey: logKey.publicKey, notBefore: now - 86_400 },
  ]);
  const validity = {
    kid: bundleKey.kid,
    publicJwk: bundleKey.publicJwk,
    notBefore: options.keyNotBefore ?? now - 3600,
    notAfter: options.keyNotAfter ?? null,
  };
  const keys = buildBundleKeyring([validity]);
  const bundleJwks = buildBundleJwksKeys([validity]);
  const logVerifier = formatVerifierString(origin, logKey.publicKey);
  return {
    bundle,
    trustedRoot,
    keys,
    bundleJwks,
    logVerifier,
    statement,
    bundleKey,
    logKey,
    origin,
    logIndex,
    leaf: entry.leaf,
  };
}

export type SigstoreVerdict = { ok: true } | { ok: false; code: string; message: string };

const script = fileURLToPath(new URL('../fixtures/sigstore-verify.mjs', import.meta.url));

export interface SigstoreCase {
  bundle: unknown;
  trustedRoot: unknown;
  keys: Record<string, unknown>;
  /** Timestamps required (default 1: the log's signed entry timestamp). */
  timestampThreshold?: number;
}

function runScript(input: unknown): unknown {
  const result = spawnSync(resolveNode22Binary(), [script], {
    input: JSON.stringify(input),
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (result.status !== 0) throw new Error(`sigstore-verify.mjs failed: ${result.stderr || result.error}`);
  return JSON.parse(result.stdout);
}

/** Run @sigstore/verify on `input` in a child process on a Node ≥ 22 binary. */
export function runSigstoreVerify(input: SigstoreCase): SigstoreVerdict {
  return runScript(input) as SigstoreVerdict;
}

/** runSigstoreVerify for many cases in one child process, verdicts in the same order. */
export function runSigstoreVerifyAll(cases: readonly SigstoreCase[]): SigstoreVerdict[] {
  return runScript({ cases }) as SigstoreVerdict[];
}

/** A deep copy to alter. */
export function copyJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

// "Verified in this browser", the Sigstore bundle group (issue 26 §3), in a real Chromium against a real registry:
// every bundle check passes on the bundle the registry serves, and the bundle altered in flight (Playwright route
// interception; the page and every other answer stay the registry's) fails exactly the checks it must, each saying why.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { cleanupTempDirs } from '../helpers/registry-helpers.ts';
import {
  BUNDLE_CHECKS,
  JWS_CHECKS,
  launchBrowser,
  openVerifyPanel,
  type PanelState,
  saveScreenshot,
  type SeededRegistry,
  startSeededRegistry,
} from './helpers.ts';

const VERSION_PAGE = '/ui/manifests/io.github.acme/payments/1.1.0';
const BUNDLE = '/v1/manifests/io.github.acme/payments/1.1.0/bundle';

interface Bundle {
  mediaType: string;
  verificationMaterial: {
    publicKey: { hint: string };
    tlogEntries: {
      logIndex: string;
      integratedTime: string;
      canonicalizedBody: string;
      inclusionProof: { hashes: string[]; treeSize: string; checkpoint: { envelope: string } };
    }[];
  };
  dsseEnvelope: { payload: string; payloadType: string; signatures: { sig: string; keyid: string }[] };
}

const fromBase64 = (text: string) => Buffer.from(text, 'base64');
const toBase64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** `text` (standard base64) with its first byte's low bit flipped: same length, another value. */
function flipFirstByte(text: string): string {
  const bytes = fromBase64(text);
  bytes[0] = (bytes[0] ?? 0) ^ 0x01;
  return toBase64(bytes);
}

describe('the verification panel: the Sigstore bundle', () => {
  let registry: SeededRegistry;
  let browser: BrowserContext;
  let served: Bundle;
  let jwsKid: string;

  beforeAll(async () => {
    registry = await startSeededRegistry();
    browser = await launchBrowser();
    served = (await (await fetch(`${registry.url}${BUNDLE}`)).json()) as Bundle;
    const jws = (await (await fetch(`${registry.url}${BUNDLE.replace(/bundle$/, 'attestation')}`)).json()) as {
      protected: string;
    };
    jwsKid = (JSON.parse(Buffer.from(jws.protected, 'base64url').toString('utf8')) as { kid: string }).kid;
  });
  afterAll(async () => {
    await browser?.close();
    await registry?.close();
    cleanupTempDirs();
  });

  /** Open the version page with the bundle answer replaced by `alter(the served bundle)`. */
  function verifyAltered(alter?: (bundle: Bundle) => unknown): Promise<{ page: Page; panel: PanelState }> {
    return openVerifyPanel(browser, `${registry.url}${VERSION_PAGE}`, async (page) => {
      if (alter === undefined) return;
      await page.route(`${registry.url}${BUNDLE}`, async (route) => {
        const response = await route.fetch();
        const bundle = (await response.json()) as Bundle;
        await route.fulfill({ response, body: JSON.stringify(alter(bundle)) });
      });
    });
  }

  /** Every check's state: the JWS group passed, the bundle checks in `failed` failed with those exact reasons. */
  function expectOnlyBundleFailures(panel: PanelState, failed: Record<string, string>): void {
    const expected: PanelState['checks'] = {};
    for (const id of JWS_CHECKS) expected[id] = { state: 'passed', reason: expect.any(String) as unknown as string };
    for (const id of BUNDLE_CHECKS) {
      const reason = failed[id];
      expected[id] =
        reason === undefined
          ? { state: 'passed', reason: expect.any(String) as unknown as string }
          : { state: 'failed', reason };
    }
    expect(panel.checks).toEqual(expected);
    expect(panel.verdict).toBe('failed');
    expect(panel.summary).toBe(
      `${Object.keys(failed).length} of 12 checks failed in this browser: ${Object.keys(failed).join(', ')}. Do not trust this manifest.`,
    );
  }

  const entryOf = (bundle: Bundle) => bundle.verificationMaterial.tlogEntries[0]!;
  const kidOf = () => served.verificationMaterial.publicKey.hint;
  const notVerified = () => `the ECDSA P-256 signature over the DSSE PAE does not verify with bundle key ${kidOf()}`;
  const NO_PROMISE = "the log's signed entry timestamp (inclusionPromise) does not verify with the log key";
  const NOT_REBUILT = 'canonicalizedBody is not the hashedrekord 0.0.2 entry rebuilt from the envelope and the key';
  const NOT_INCLUDED = "the inclusion proof does not lead to the checkpoint's root";

  it('shows every bundle check passed for the bundle the registry serves, saying what it proved', async () => {
    const { page, panel } = await verifyAltered();
    expect(panel.verdict).toBe('passed');
    expect(panel.summary).toBe('All 12 checks passed in this browser.');
    const jwks = (await (await fetch(`${registry.url}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string; kty: string; crv: string }[];
    };
    // The hint names the registry's P-256 bundle key, not the Ed25519 JWS key.
    expect(jwks.keys.find((key) => key.kid === kidOf())).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(kidOf()).not.toBe(jwsKid);
    const entry = entryOf(served);
    const origin = entry.inclusionProof.checkpoint.envelope.split('\n')[0];
    const body = fromBase64(entry.canonicalizedBody);
    expect(panel.checks['bundle-signature']).toEqual({
      state: 'passed',
      reason: `DSSE envelope signed (ECDSA P-256) by bundle key ${kidOf()}, the bundle's hint`,
    });
    expect(panel.checks['bundle-statement']).toEqual({
      state: 'passed',
      reason: expect.stringMatching(
        /^io\.github\.acme\/payments@1\.1\.0, sha256:[0-9a-f]{64}: the JWS's statement, byte for byte \(\d+ bytes\)$/,
      ),
    });
    expect(panel.checks['bundle-key-window']).toEqual({
      state: 'passed',
      reason: expect.stringMatching(
        new RegExp(
          `^integrated ${new Date(Number(entry.integratedTime) * 1000).toISOString()} \\(signed entry timestamp verified\\); key valid from \\d{4}-`,
        ),
      ),
    });
    expect(panel.checks['bundle-log-entry']).toEqual({
      state: 'passed',
      reason: `hashedrekord 0.0.2 at log index ${entry.logIndex}: canonicalizedBody is the entry rebuilt here (${body.byteLength} bytes)`,
    });
    expect(panel.checks['bundle-checkpoint']).toEqual({
      state: 'passed',
      reason: expect.stringMatching(
        new RegExp(
          `^log ${origin!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, tree size ${entry.inclusionProof.treeSize}, root \\S+$`,
        ),
      ),
    });
    expect(panel.checks['bundle-inclusion']).toEqual({
      state: 'passed',
      reason: `leaf ${entry.logIndex} of ${entry.inclusionProof.treeSize} (the rebuilt entry), ${entry.inclusionProof.hashes.length} proof hashes`,
    });
    await saveScreenshot(page, 'verify-bundle-passed');
    await page.close();
  });

  it('fails the signature, statement, timestamp, entry and inclusion checks when the DSSE payload is altered', async () => {
    const { page, panel } = await verifyAltered((bundle) => {
      const statement = fromBase64(bundle.dsseEnvelope.payload).toString('utf8');
      const altered = statement.replace(/"size":(\d+)/, (_, size: string) => `"size":${Number(size) + 1}`);
      expect(altered).not.toBe(statement);
      bundle.dsseEnvelope.payload = Buffer.from(altered, 'utf8').toString('base64');
      return bundle;
    });
    expectOnlyBundleFailures(panel, {
      'bundle-signature': notVerified(),
      'bundle-statement': "the DSSE payload is not the JWS's statement (the bytes differ)",
      'bundle-key-window': NO_PROMISE,
      'bundle-log-entry': NOT_REBUILT,
      'bundle-inclusion': NOT_INCLUDED,
    });
    await saveScreenshot(page, 'verify-bundle-tampered-payload');
    await page.close();
  });

  it('fails the signature check (and the logged entry) when the DSSE signature is altered', async () => {
    const { page, panel } = await verifyAltered((bundle) => {
      const der = fromBase64(bundle.dsseEnvelope.signatures[0]!.sig);
      der[der.length - 1] = (der[der.length - 1] ?? 0) ^ 0x01; // the last byte of s: still strict DER
      bundle.dsseEnvelope.signatures[0]!.sig = toBase64(der);
      return bundle;
    });
    expectOnlyBundleFailures(panel, {
      'bundle-signature': notVerified(),
      'bundle-key-window': NO_PROMISE,
      'bundle-log-entry': NOT_REBUILT,
      'bundle-inclusion': NOT_INCLUDED,
    });
    await page.close();
  });

  it('refuses a DSSE signature that is not strict DER', async () => {
    let originalLength = 0;
    const { page, panel } = await verifyAltered((bundle) => {
      const der = fromBase64(bundle.dsseEnvelope.signatures[0]!.sig);
      originalLength = der.byteLength;
      const padded = Buffer.concat([der, Buffer.from([0x00])]);
      padded[1] = (padded[1] ?? 0) + 1; // the SEQUENCE covers the extra byte, which follows s
      bundle.dsseEnvelope.signatures[0]!.sig = toBase64(padded);
      return bundle;
    });
    // ECDSA signatures are random: when r and s both need a leading zero byte the DER is already the longest a P-256
    // signature can be (72 bytes), so one more byte is refused by its length before s is read.
    const why = originalLength < 72 ? 'bytes follow s' : `it is ${originalLength + 1} bytes`;
    expectOnlyBundleFailures(panel, {
      'bundle-signature': `the DSSE signature is not a DER ECDSA P-256 signature: ${why}`,
      'bundle-key-window': NO_PROMISE,
      'bundle-log-entry': NOT_REBUILT,
      'bundle-inclusion': NOT_INCLUDED,
    });
    await page.close();
  });

  it('fails only the inclusion check when a proof hash is altered', async () => {
    const { page, panel } = await verifyAltered((bundle) => {
      const proof = entryOf(bundle).inclusionProof;
      expect(proof.hashes.length).toBeGreaterThan(0);
      proof.hashes[0] = flipFirstByte(proof.hashes[0]!);
      return bundle;
    });
    expectOnlyBundleFailures(panel, { 'bundle-inclusion': NOT_INCLUDED });
    await saveScreenshot(page, 'verify-bundle-tampered-proof');
    await page.close();
  });

  it('fails only the log-entry check when canonicalizedBody is not byte for byte the rebuilt body', async () => {
    const { page, panel } = await verifyAltered((bundle) => {
      const entry = entryOf(bundle);
      // The same members and values, indented: equal content, other bytes (a verifier hashes the bytes).
      const reindented = JSON.stringify(JSON.parse(fromBase64(entry.canonicalizedBody).toString('utf8')), null, 1);
      entry.canonicalizedBody = Buffer.from(reindented, 'utf8').toString('base64');
      return bundle;
    });
    expectOnlyBundleFailures(panel, { 'bundle-log-entry': NOT_REBUILT });
    await page.close();
  });

  it('fails the checks that need the envelope when the public-key hint is not the DSSE keyid', async () => {
    const { page, panel } = await verifyAltered((bundle) => {
      bundle.verificationMaterial.publicKey.hint = jwsKid;
      return bundle;
    });
    const reason = "the DSSE signature's keyid is not the bundle's public-key hint";
    expectOnlyBundleFailures(panel, {
      'bundle-signature': reason,
      'bundle-statement': reason,
      'bundle-key-window': reason,
      'bundle-log-entry': reason,
      'bundle-inclusion': reason,
    });
    await page.close();
  });

  it('fails the checks that need the key when hint and keyid name a key that is not a P-256 bundle key', async () => {
    const { page, panel } = await verifyAltered((bundle) => {
      // The Ed25519 JWS key: in the JWKS, but not a P-256 key.
      bundle.verificationMaterial.publicKey.hint = jwsKid;
      bundle.dsseEnvelope.signatures[0]!.keyid = jwsKid;
      return bundle;
    });
    const reason = `the JWKS has no usable P-256 bundle key with kid ${jwsKid}`;
    expectOnlyBundleFailures(panel, {
      'bundle-signature': reason,
      'bundle-key-window': reason,
      'bundle-log-entry': reason,
      'bundle-inclusion': reason,
    });
    await page.close();
  });

  it('refuses an envelope with two signatures', async () => {
    const { page, panel } = await verifyAltered((bundle) => {
      const [only] = bundle.dsseEnvelope.signatures;
      bundle.dsseEnvelope.signatures = [only!, only!];
      return bundle;
    });
    const reason = 'the DSSE envelope does not have exactly one signature';
    expectOnlyBundleFailures(panel, {
      'bundle-signature': reason,
      'bundle-statement': reason,
      'bundle-key-window': reason,
      'bundle-log-entry': reason,
      'bundle-inclusion': reason,
    });
    await page.close();
  });

  it("fails the key-window check when integratedTime is altered (the log's timestamp no longer signs it)", async () => {
    const { page, panel } = await verifyAltered((bundle) => {
      const entry = entryOf(bundle);
      entry.integratedTime = String(Number(entry.integratedTime) - 1);
      return bundle;
    });
    expectOnlyBundleFailures(panel, { 'bundle-key-window': NO_PROMISE });
    await page.close();
  });

  it('fails only the key-window check when the JWKS says the bundle key expired at the integration time', async () => {
    const integratedTime = Number(entryOf(served).integratedTime);
    const { page, panel } = await openVerifyPanel(browser, `${registry.url}${VERSION_PAGE}`, async (p) => {
      await p.route(`${registry.url}/.well-known/jwks.json`, async (route) => {
        const response = await route.fetch();
        const jwks = (await response.json()) as { keys: { kid: string; exp?: number }[] };
        const bundleKey = jwks.keys.find((key) => key.kid === kidOf());
        expect(bundleKey).toBeDefined();
        bundleKey!.exp = integratedTime; // exp is exclusive: the key was no longer valid at that second
        await route.fulfill({ response, body: JSON.stringify(jwks) });
      });
    });
    expectOnlyBundleFailures(panel, {
      'bundle-key-window': `bundle key ${kidOf()} was not the registry's bundle key when the log integrated the entry`,
    });
    await page.close();
  });

  it("fails the bundle's checkpoint check (and so its inclusion) when its checkpoint signature is altered", async () => {
    const { page, panel } = await verifyAltered((bundle) => {
      const checkpoint = entryOf(bundle).inclusionProof.checkpoint;
      const note = checkpoint.envelope;
      const at = note.lastIndexOf(' ') + 9; // inside the signature, after the 4-byte key hint
      checkpoint.envelope = `${note.slice(0, at)}${note[at] === 'A' ? 'B' : 'A'}${note.slice(at + 1)}`;
      return bundle;
    });
    const origin = entryOf(served).inclusionProof.checkpoint.envelope.split('\n')[0];
    expectOnlyBundleFailures(panel, {
      'bundle-checkpoint': `the checkpoint signature by ${origin} does not verify`,
      'bundle-inclusion': "there is no verified bundle checkpoint to prove the bundle's inclusion against",
    });
    await page.close();
  });

  it('fails every bundle check, saying why, when the answer is not a bundle v0.3', async () => {
    const { page, panel } = await verifyAltered((bundle) => ({
      ...bundle,
      mediaType: 'application/vnd.dev.sigstore.bundle+json;version=0.2',
    }));
    const reason = "the bundle's mediaType is not application/vnd.dev.sigstore.bundle.v0.3+json";
    expectOnlyBundleFailures(panel, Object.fromEntries(BUNDLE_CHECKS.map((id) => [id, reason])));
    await page.close();
  });
});

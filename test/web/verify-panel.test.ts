// "Verified in this browser" in a real Chromium: every check passes on what the registry serves, and the same code
// fails the right check when the bytes, the attestation's signature or the checkpoint are altered in flight
// (Playwright route interception: the page and the API stay the registry's, only one answer is changed).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page, Route } from 'playwright-core';
import { cleanupTempDirs } from '../helpers/registry-helpers.ts';
import {
  BUNDLE_CHECKS,
  launchBrowser,
  openVerifyPanel,
  PANEL_CHECKS as CHECKS,
  type PanelState,
  saveScreenshot,
  type SeededRegistry,
  startSeededRegistry,
} from './helpers.ts';

const VERSION_PAGE = '/ui/manifests/io.github.acme/payments/1.1.0';
const BYTES = '/v1/manifests/io.github.acme/payments/1.1.0';

describe('the verification panel', () => {
  let registry: SeededRegistry;
  let browser: BrowserContext;

  beforeAll(async () => {
    registry = await startSeededRegistry();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await registry?.close();
    cleanupTempDirs();
  });

  /** Open the version page (after `intercept` is installed) and read the panel once every check has finished. */
  function verifyInBrowser(intercept?: (page: Page) => Promise<void>): Promise<{ page: Page; panel: PanelState }> {
    return openVerifyPanel(browser, `${registry.url}${VERSION_PAGE}`, intercept);
  }

  const states = (panel: PanelState) => CHECKS.map((id) => `${id} ${panel.checks[id]?.state}`);

  async function replaceBody(route: Route, change: (text: string) => string): Promise<void> {
    const response = await route.fetch();
    await route.fulfill({ response, body: change(await response.text()) });
  }

  it('shows every check passed for what the registry serves', async () => {
    const { page, panel } = await verifyInBrowser();
    expect(states(panel)).toEqual(CHECKS.map((id) => `${id} passed`));
    expect(panel.verdict).toBe('passed');
    expect(panel.summary).toBe('All 12 checks passed in this browser.');
    expect(panel.checks['digest']?.reason).toMatch(/^sha256:[0-9a-f]{64} \(\d+ bytes\)$/);
    expect(panel.checks['inclusion']?.reason).toMatch(/^leaf \d+ of 12, \d+ proof hashes$/);
    await saveScreenshot(page, 'verify-passed');
    await page.close();
  });

  it('shows the digest check failed when the bytes are altered in flight', async () => {
    const { page, panel } = await verifyInBrowser(async (p) => {
      await p.route(`${registry.url}${BYTES}`, (route) =>
        replaceBody(route, (text) => text.replace('faster settlement', 'faster settlements')),
      );
    });
    expect(panel.checks['digest']).toEqual({
      state: 'failed',
      reason: expect.stringMatching(/^the bytes received hash to sha256:[0-9a-f]{64}, the attestation covers sha256:/),
    });
    // The attestation itself is untouched: its signature, key window and log proof still hold; the bundle's statement
    // covers the digest the bytes no longer have, and nothing else in the bundle depends on the bytes.
    expect(panel.checks['bundle-statement']).toEqual({
      state: 'failed',
      reason: expect.stringMatching(
        /^the DSSE statement covers sha256:[0-9a-f]{64}, the bytes received hash to sha256:/,
      ),
    });
    expect(states(panel)).toEqual(
      CHECKS.map((id) => `${id} ${id === 'digest' || id === 'bundle-statement' ? 'failed' : 'passed'}`),
    );
    expect(panel.verdict).toBe('failed');
    expect(panel.summary).toBe(
      '2 of 12 checks failed in this browser: digest, bundle-statement. Do not trust this manifest.',
    );
    await saveScreenshot(page, 'verify-tampered-bytes');
    await page.close();
  });

  it("shows the signature check failed when the attestation's signature is altered", async () => {
    const { page, panel } = await verifyInBrowser(async (p) => {
      await p.route(`${registry.url}${BYTES}/attestation`, (route) =>
        replaceBody(route, (text) => {
          const jws = JSON.parse(text) as { signature: string };
          const first = jws.signature[0] === 'A' ? 'B' : 'A';
          return JSON.stringify({ ...jws, signature: first + jws.signature.slice(1) });
        }),
      );
    });
    expect(panel.checks['signature']).toEqual({
      state: 'failed',
      reason: expect.stringMatching(/^the Ed25519 signature does not verify with key /),
    });
    expect(panel.checks['digest']?.state).toBe('passed');
    // The bundle's statement is still the JWS's payload (only the JWS signature changed): the bundle group passes.
    expect(BUNDLE_CHECKS.map((id) => panel.checks[id]?.state)).toEqual(BUNDLE_CHECKS.map(() => 'passed'));
    // The altered attestation is not the logged leaf either.
    expect(panel.checks['inclusion']).toEqual({
      state: 'failed',
      reason: "the inclusion proof does not lead to the checkpoint's root",
    });
    expect(panel.verdict).toBe('failed');
    await saveScreenshot(page, 'verify-tampered-signature');
    await page.close();
  });

  it('shows the checkpoint check failed when the checkpoint signature is altered, and then proves no inclusion', async () => {
    const { page, panel } = await verifyInBrowser(async (p) => {
      await p.route(`${registry.url}/v1/log/checkpoint`, (route) =>
        replaceBody(route, (note) => {
          const line = note.lastIndexOf(' ') + 1;
          const swapped = note[line + 8] === 'A' ? 'B' : 'A';
          return note.slice(0, line + 8) + swapped + note.slice(line + 9);
        }),
      );
    });
    expect(panel.checks['checkpoint']).toEqual({
      state: 'failed',
      reason: expect.stringMatching(/^the checkpoint signature by \S+ does not verify$/),
    });
    expect(panel.checks['inclusion']).toEqual({
      state: 'failed',
      reason: 'there is no verified checkpoint to prove inclusion against',
    });
    expect(panel.checks['signature']?.state).toBe('passed');
    // The bundle carries its own checkpoint (not the one altered here): its checks pass.
    expect(BUNDLE_CHECKS.map((id) => panel.checks[id]?.state)).toEqual(BUNDLE_CHECKS.map(() => 'passed'));
    await page.close();
  });

  it('fails every check, saying why, when the API is unreachable', async () => {
    const { page, panel } = await verifyInBrowser(async (p) => {
      await p.route(`${registry.url}/v1/**`, (route) => route.abort());
    });
    expect(Object.values(panel.checks).map((check) => check.state)).toEqual(CHECKS.map(() => 'failed'));
    expect(panel.checks['digest']?.reason).toMatch(
      /^GET \/v1\/manifests\/io\.github\.acme\/payments\/1\.1\.0\/attestation failed/,
    );
    expect(panel.checks['bundle-signature']?.reason).toMatch(
      /^GET \/v1\/manifests\/io\.github\.acme\/payments\/1\.1\.0\/bundle failed/,
    );
    await page.close();
  });
});

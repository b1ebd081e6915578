// "Verified in this browser" lists the witness cosignatures it checked (issue 25 §4), in a real Chromium against a
// registry witnessed by a real `toolseal witness`: the cosignature verifies and is listed with its time; altered in
// flight (one signature byte), the checkpoint check fails naming the witness; so does the bundle's checkpoint check when
// the cosignature on the Sigstore bundle's own checkpoint is altered.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { NAMESPACE } from '../log-e2e/helpers.ts';
import { removeFolders, startWitnessedRegistry, type WitnessedRegistry } from '../witness/helpers.ts';
import { launchBrowser, saveScreenshot } from './helpers.ts';

const PAGE = `/ui/manifests/${NAMESPACE}/paneled/1.0.0`;

describe('the verification panel and witnesses', () => {
  let registry: WitnessedRegistry;
  let browser: BrowserContext;
  beforeAll(async () => {
    registry = await startWitnessedRegistry(['paneled']);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await registry?.close();
    removeFolders();
  });

  async function open(intercept?: (page: Page) => Promise<void>) {
    const page = await browser.newPage();
    await intercept?.(page);
    await page.goto(`${registry.url}${PAGE}`);
    await page.waitForSelector('[data-verify][data-state="passed"], [data-verify][data-state="failed"]');
    const section = page.locator('[data-verify]');
    const checkpoint = section.locator('[data-check="checkpoint"]');
    const bundleCheckpoint = section.locator('[data-check="bundle-checkpoint"]');
    return {
      page,
      bundleState: await bundleCheckpoint.getAttribute('data-state'),
      bundleReason: (await bundleCheckpoint.locator('.reason').textContent()) ?? '',
      verdict: await section.getAttribute('data-state'),
      state: await checkpoint.getAttribute('data-state'),
      reason: (await checkpoint.locator('.reason').textContent()) ?? '',
      cosignatures: await section.locator('[data-cosignatures] li').allTextContents(),
    };
  }

  it('verifies and lists the cosignature of the registry witness', async () => {
    const shown = await open();
    expect(shown.verdict).toBe('passed');
    expect(shown.state).toBe('passed');
    expect(shown.reason).toMatch(/; 1 of 1 witnesses cosigned it \(verified here\)$/);
    // The Sigstore bundle carries its own checkpoint, cosigned as well: the panel verifies that cosignature too.
    expect(shown.bundleState).toBe('passed');
    expect(shown.bundleReason).toMatch(/; 1 of 1 witnesses cosigned it \(verified here\)$/);
    expect(shown.cosignatures).toHaveLength(1);
    expect(shown.cosignatures[0]).toMatch(
      /^W1 \(witness\.test\/w1\): verified, cosigned \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/,
    );
    await saveScreenshot(shown.page, 'verify-witnesses');
    await shown.page.close();
  });

  it('fails the checkpoint check when the cosignature is altered in flight', async () => {
    const shown = await open(async (p) => {
      await p.route(`${registry.url}/v1/log/checkpoint`, async (route) => {
        const response = await route.fetch();
        const text = await response.text();
        const altered = text.replace(
          /^(— witness\.test\/w1 .{40})(.)/m,
          (_, head: string, char: string) => `${head}${char === 'A' ? 'B' : 'A'}`,
        );
        expect(altered).not.toBe(text);
        await route.fulfill({ response, body: altered });
      });
    });
    expect(shown.verdict).toBe('failed');
    expect(shown.state).toBe('failed');
    expect(shown.reason).toBe('the cosignature by witness W1 (witness.test/w1) does not verify');
    await shown.page.close();
  });

  it("fails the bundle's checkpoint check when the cosignature on the bundle's checkpoint is altered in flight", async () => {
    const shown = await open(async (p) => {
      await p.route(`${registry.url}/v1/manifests/${NAMESPACE}/paneled/1.0.0/bundle`, async (route) => {
        const response = await route.fetch();
        const bundle = (await response.json()) as {
          verificationMaterial: { tlogEntries: { inclusionProof: { checkpoint: { envelope: string } } }[] };
        };
        const checkpoint = bundle.verificationMaterial.tlogEntries[0]!.inclusionProof.checkpoint;
        const altered = checkpoint.envelope.replace(
          /^(— witness\.test\/w1 .{40})(.)/m,
          (_, head: string, char: string) => `${head}${char === 'A' ? 'B' : 'A'}`,
        );
        expect(altered).not.toBe(checkpoint.envelope);
        checkpoint.envelope = altered;
        await route.fulfill({ response, body: JSON.stringify(bundle) });
      });
    });
    expect(shown.verdict).toBe('failed');
    // The JWS group's checkpoint (GET /v1/log/checkpoint) is untouched.
    expect(shown.state).toBe('passed');
    expect(shown.bundleState).toBe('failed');
    expect(shown.bundleReason).toBe('the cosignature by witness W1 (witness.test/w1) does not verify');
    await shown.page.close();
  });
});

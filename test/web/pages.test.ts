// The web pages in a real browser (Debian's Chromium through playwright-core) against a real registry on 127.0.0.1:
// search, a manifest's versions (a yanked one with its reason), a version's tools in words, the diff page
// (capability changes first), the log page, hostile text rendered inert, no JavaScript, a narrow screen.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { cleanupTempDirs } from '../helpers/registry-helpers.ts';
import {
  EVIL_HOST,
  HOSTILE_DESCRIPTION,
  HOSTILE_TITLE,
  HOSTILE_TOOL_NAME,
  launchBrowser,
  NEW_CHARGE_DESCRIPTION,
  OLD_CHARGE_DESCRIPTION,
  saveScreenshot,
  type SeededRegistry,
  startSeededRegistry,
  watchPage,
  YANK_REASON,
} from './helpers.ts';

const CSP = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

describe('the web pages', () => {
  let registry: SeededRegistry;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    registry = await startSeededRegistry();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await registry?.close();
    cleanupTempDirs();
  });

  const open = async (path: string): Promise<Page> => {
    page = await browser.newPage();
    const response = await page.goto(`${registry.url}${path}`);
    expect(response?.status()).toBe(200);
    return page;
  };

  it('GET / lists the manifests, and the search box (by keyboard) finds one by name and by a word of a tool description', async () => {
    await open('/');
    const rows = page.locator('tbody tr');
    await expect
      .poll(() => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-manifest'))))
      .toEqual(['io.github.acme/hostile', 'io.github.acme/payments', 'io.github.acme/weather']);
    const payments = page.locator('tr[data-manifest="io.github.acme/payments"] td');
    expect(await payments.allInnerTexts()).toEqual([
      'io.github.acme/payments',
      '1.1.0',
      'active',
      'io.github.acme',
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/),
    ]);
    await saveScreenshot(page, 'home');
    // Keyboard only: the skip link comes first, then the site links, then the search box.
    await page.keyboard.press('Tab');
    expect(await page.locator(':focus').textContent()).toBe('Skip to content');
    await page.focus('#q');
    await page.keyboard.type('paym');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\?q=paym$/);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-manifest')))).toEqual([
      'io.github.acme/payments',
    ]);
    expect(await page.inputValue('#q')).toBe('paym');
    await saveScreenshot(page, 'search');
    // A word of a tool's description (not of any name) finds its manifest too.
    await page.fill('#q', 'faster settlement');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\?q=faster/);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-manifest')))).toEqual([
      'io.github.acme/payments',
    ]);
    await page.close();
  });

  it('a manifest page lists every version, the yanked one with its reason, and compares any two', async () => {
    await open('/ui/manifests/io.github.acme/payments');
    const versions = await page.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset['version']));
    expect(versions).toEqual(['1.1.0', '1.0.1', '1.0.0']);
    const yanked = page.locator('tr[data-version="1.0.1"]');
    expect(await yanked.textContent()).toContain('yanked');
    expect(await yanked.locator('.yank-reason').textContent()).toContain(YANK_REASON);
    expect(await page.locator('tr[data-version="1.1.0"] .digest').textContent()).toMatch(/^sha256:[0-9a-f]{64}$/);
    await saveScreenshot(page, 'manifest');
    await page.selectOption('#from', '1.0.0');
    await page.selectOption('#to', '1.1.0');
    await page.click('form.compare button');
    await page.waitForURL(/\/ui\/diff\/io\.github\.acme\/payments\/1\.0\.0\/1\.1\.0$/);
    expect(await page.locator('h1').textContent()).toBe('io.github.acme/payments: 1.0.0 → 1.1.0');
    await page.close();
  });

  it('a yanked version shows its reason on its own page', async () => {
    await open('/ui/manifests/io.github.acme/payments/1.0.1');
    const notice = page.getByTestId('yank-notice');
    expect(await notice.textContent()).toContain(YANK_REASON);
    expect(await page.locator('h1 .badge').textContent()).toBe('yanked');
    await saveScreenshot(page, 'version-yanked');
    await page.close();
  });

  it('a version page lists every tool with what it may touch in words, schemas folded until opened', async () => {
    await open('/ui/manifests/io.github.acme/payments/1.1.0');
    // The raw evidence links: the bytes, the attestation and the Sigstore bundle (issue 26), each answering 200.
    const bundleLink = page.locator('a', { hasText: 'Sigstore bundle' });
    expect(await bundleLink.getAttribute('href')).toBe('/v1/manifests/io.github.acme/payments/1.1.0/bundle');
    expect((await page.request.get(`${registry.url}/v1/manifests/io.github.acme/payments/1.1.0/bundle`)).status()).toBe(
      200,
    );
    const tools = page.locator('article.tool');
    expect(await tools.locator('.tool-name').allInnerTexts()).toEqual([
      'create_payment',
      'get_payment',
      'export_ledger',
    ]);
    const words = (index: number) => tools.nth(index).locator('ul.capabilities li').allInnerTexts();
    expect(await words(0)).toEqual([
      'opens connections to api.stripe.com:443',
      `opens connections to ${EVIL_HOST}`,
      'makes no claim about files it reads (unknown, not none)',
      'makes no claim about files it writes (unknown, not none)',
      'reads the secret STRIPE_API_KEY from the environment',
      'moves up to 5000.00 USD per call',
      'moves up to 5000.00 EUR per call',
    ]);
    expect(await words(1)).toEqual([
      'opens connections to api.stripe.com:443',
      'reads /data/**',
      'writes no files',
      'reads the secret STRIPE_API_KEY from the environment',
      'moves no money',
    ]);
    expect(await words(2)).toContain('writes /var/exports/**/*.csv');
    expect(await words(2)).toContain('makes no claim about the network (unknown, not none)');
    expect(await tools.nth(0).locator('.annotations').textContent()).toContain('idempotent');
    expect(await tools.nth(1).locator('.annotations').textContent()).toContain('read-only');
    const schema = tools.nth(0).locator('details pre');
    expect(await schema.isVisible()).toBe(false);
    await tools.nth(0).locator('details summary').first().click();
    expect(await schema.isVisible()).toBe(true);
    expect(await schema.textContent()).toContain('"amount_minor"');
    expect(await page.locator('dl.facts').textContent()).toMatch(/Log index\s*\d+/);
    await page.waitForSelector('[data-verify][data-state="passed"]');
    await saveScreenshot(page, 'version');
    await page.close();
  });

  it('the diff page calls out capability changes first, then each changed field with its pointer and both values', async () => {
    await open('/ui/diff/io.github.acme/payments/1.0.0/1.1.0');
    const headings = await page.locator('main h2').allInnerTexts();
    expect(headings.indexOf('Capability changes')).toBe(0);
    expect(headings.indexOf('Tools')).toBeGreaterThan(0);
    const changes = page.locator('ul.capability-changes li');
    const first = changes.first();
    expect(await first.getAttribute('data-direction')).toBe('wider');
    expect(await first.textContent()).toContain(`create_payment: new: opens connections to ${EVIL_HOST}`);
    expect(await changes.allInnerTexts()).toContainEqual(
      expect.stringContaining(
        'money ceiling raised from 500.00 USD / 500.00 EUR to 5000.00 USD / 5000.00 EUR per call',
      ),
    );
    expect(await changes.allInnerTexts()).toContainEqual(expect.stringContaining('export_ledger: new tool: writes'));
    const description = page.locator('tr[data-pointer="/tools/0/description"] pre');
    expect(await description.allInnerTexts()).toEqual([
      JSON.stringify(OLD_CHARGE_DESCRIPTION),
      JSON.stringify(NEW_CHARGE_DESCRIPTION),
    ]);
    const hosts = page.locator('tr[data-pointer="/tools/0/capabilities/network/hosts"] pre');
    expect(JSON.parse((await hosts.nth(1).textContent()) ?? '')).toEqual(['api.stripe.com:443', EVIL_HOST]);
    const kinds = await page
      .locator('[data-tool-diff]')
      .evaluateAll((items) =>
        items.map((item) => `${item.querySelector('.tool-name')?.textContent} ${item.getAttribute('data-tool-diff')}`),
      );
    expect(kinds).toEqual(['create_payment changed', 'get_payment unchanged', 'export_ledger added']);
    await saveScreenshot(page, 'diff');
    await page.close();
  });

  it('the log page shows the latest checkpoint and the recent entries, newest first, with links', async () => {
    await open('/ui/log');
    // One key, five attestations (each with its Sigstore bundle leaf, issue 26) and one yank.
    expect(await page.getByTestId('checkpoint-size').textContent()).toBe('12');
    const kinds = await page.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset['kind']));
    expect(kinds.filter((kind) => kind !== 'bundle')).toEqual([
      'yank',
      'attestation',
      'attestation',
      'attestation',
      'attestation',
      'attestation',
      'key',
    ]);
    expect(kinds.filter((kind) => kind === 'bundle')).toHaveLength(5);
    const yank = page.locator('tr[data-kind="yank"]');
    expect(await yank.textContent()).toContain(`io.github.acme/payments@1.0.1: ${YANK_REASON}`);
    await saveScreenshot(page, 'log');
    await yank.getByRole('link', { name: 'manifest' }).click();
    await page.waitForURL(/\/ui\/manifests\/io\.github\.acme\/payments\/1\.0\.1$/);
    await page.close();
  });

  it('<script> in a description, a title or a tool name renders as text and never runs', async () => {
    page = await browser.newPage();
    const seen = watchPage(page);
    await page.goto(`${registry.url}/ui/manifests/io.github.acme/hostile/1.0.0`);
    await page.waitForSelector('[data-verify][data-state="passed"]');
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('article.tool .tool-name').textContent()).toBe(HOSTILE_TOOL_NAME);
    expect(await page.locator('article.tool .tool-title').textContent()).toBe(` — ${HOSTILE_TITLE}`);
    expect(await page.locator('article.tool .description').textContent()).toBe(HOSTILE_DESCRIPTION);
    expect(await page.locator('main > p.description').textContent()).toBe(
      '<script>window.__pwned = "manifest"</script>',
    );
    // The only script is the verification module; the hostile text made no element at all.
    expect(await page.locator('script').evaluateAll((s) => s.map((x) => x.getAttribute('src')))).toEqual([
      '/ui/assets/verify.js',
    ]);
    expect(await page.locator('main img').count()).toBe(0);
    await page.locator('article.tool details summary').click();
    expect(await page.locator('article.tool details pre').textContent()).toContain(
      '"</pre><script>window.__pwned = \\"schema\\"</script>"',
    );
    expect(seen.errors).toEqual([]);
    await saveScreenshot(page, 'hostile');
    await page.close();
  });

  it('every page is HTML with a CSP of default-src self and no inline script; the API answers as before', async () => {
    for (const path of [
      '/',
      '/?q=pay',
      '/ui/manifests/io.github.acme/payments',
      '/ui/manifests/io.github.acme/payments/1.1.0',
      '/ui/diff/io.github.acme/payments/1.0.0/1.1.0',
      '/ui/log',
    ]) {
      const response = await fetch(`${registry.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('content-security-policy')).toBe(CSP);
      const html = await response.text();
      expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
      expect(html).not.toMatch(/<script(?![^>]*\ssrc=)/);
      expect(html).not.toMatch(/\sstyle=|<style|https?:\/\/(?!127\.0\.0\.1)/);
    }
    const script = await fetch(`${registry.url}/ui/assets/verify.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const again = await fetch(`${registry.url}/ui/assets/verify.js`, {
      headers: { 'If-None-Match': script.headers.get('etag')! },
    });
    expect(again.status).toBe(304);
    // The modules verify.js imports (the bundle group and what both groups share) are served the same way.
    for (const module of ['verify-bundle.js', 'verify-common.js']) {
      const imported = await fetch(`${registry.url}/ui/assets/${module}`);
      expect(imported.status, module).toBe(200);
      expect(imported.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(await imported.text()).toMatch(/^\/\/ /);
    }
    const api = await fetch(`${registry.url}/v1/manifests`);
    expect(api.headers.get('content-type')).toMatch(/^application\/json/);
    expect(api.headers.get('content-security-policy')).toBeNull();
    const missing = await fetch(`${registry.url}/ui/manifests/io.github.acme/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('io.github.acme/nothing is not in this registry');
  });

  it('browsing works without JavaScript', async () => {
    const noScript = await launchBrowser({ javaScriptEnabled: false });
    try {
      const plain = await noScript.newPage();
      await plain.goto(`${registry.url}/?q=weather`);
      expect(await plain.locator('tbody tr').count()).toBe(1);
      await plain.click('text=io.github.acme/weather');
      await plain.click('text=0.3.0');
      expect(await plain.locator('[data-verify-summary]').textContent()).toContain('Not checked yet');
      expect(await plain.locator('article.tool .tool-name').textContent()).toBe('forecast');
    } finally {
      await noScript.close();
    }
  });

  it('is readable on a narrow screen: nothing is wider than the viewport', async () => {
    page = await browser.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of [
      '/',
      '/ui/manifests/io.github.acme/payments/1.1.0',
      '/ui/diff/io.github.acme/payments/1.0.0/1.1.0',
    ]) {
      await page.goto(`${registry.url}${path}`);
      expect(await page.evaluate('document.documentElement.scrollWidth'), path).toBeLessThanOrEqual(390);
    }
    await page.goto(`${registry.url}/ui/manifests/io.github.acme/payments/1.1.0`);
    await page.waitForSelector('[data-verify][data-state="passed"]');
    await saveScreenshot(page, 'version-narrow', { fullPage: false });
    await page.close();
  });
});

// The approvals pages in a real Chromium against a real registry (issue 13 §3): an operator enters a token, sees
// the pending requests, opens one, reads the signed tool (hostile text rendered inert and its hidden characters
// visible), and approves it, which the registry then reports; a wrong token, an approval of a digest that is not
// the request's and a request that expired on the way are refused with their codes shown.

import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeAction, readCallArguments, selectSignedTool } from '../../src/host/index.ts';
import { runPipeline } from '../../src/pipeline/index.ts';
import { createPrincipal } from '../../src/registry/principals.ts';
import { type RunningRegistryServer, startRegistryServer } from '../../src/server/index.ts';
import { HOST_NAME, MANIFEST_VERSION, refundArguments, refundTool } from '../client/approvals-fixture.ts';
import { cleanupTempDirs, makeTempDir, utf8 } from '../helpers/registry-helpers.ts';
import { launchBrowser, saveScreenshot, watchPage } from './helpers.ts';

const MANIFEST_NAME = 'io.github.acme/payments';
const HOSTILE_DESCRIPTION = 'Refund <img src=x onerror="window.__pwned=1"> a charge.\u202Egnp.exe\u2066 done';
const HOSTILE_RECIPIENT = '<img src=x onerror="window.__pwned=2">\u200b';

let server: RunningRegistryServer;
let browser: BrowserContext;
let operatorToken: string;
let hostToken: string;
let offsetMs = 0;
let requestApproval: (argumentsJson: string) => Promise<{ id: string; digest: string }>;

beforeAll(async () => {
  const root = makeTempDir('toolseal-web-approvals-');
  const start = Date.now();
  server = await startRegistryServer({
    port: 0,
    dataDir: join(root, 'data'),
    keysDir: join(root, 'keys'),
    clock: () => new Date(start + offsetMs),
  });
  const publisher = (await server.registry.createPublisher('io.github.acme')).token;
  const tool = { ...refundTool, description: HOSTILE_DESCRIPTION };
  const manifest = utf8(JSON.stringify({ name: MANIFEST_NAME, version: '1.0.0', tools: [tool] }));
  await server.registry.publish(manifest, await server.registry.authenticate(publisher));
  operatorToken = (await createPrincipal(server.store, 'operator', 'alice')).token;
  hostToken = (await createPrincipal(server.store, 'host', HOST_NAME)).token;
  const signed = selectSignedTool(runPipeline(manifest).canonicalBytes, 'refund', server.origin);
  requestApproval = async (argumentsJson) => {
    const action = computeAction(signed, readCallArguments(utf8(argumentsJson)), HOST_NAME);
    const answer = await fetch(`${server.url}/v1/approvals`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${hostToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(action.request),
    });
    if (answer.status !== 201) throw new Error(`request answered ${answer.status}: ${await answer.text()}`);
    return (await answer.json()) as { id: string; digest: string };
  };
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  cleanupTempDirs();
});

/** The status the registry reports for `id` (asked by the host, not through the page). */
async function statusInRegistry(id: string): Promise<string> {
  const answer = await fetch(`${server.url}/v1/approvals/${id}`, { headers: { Authorization: `Bearer ${hostToken}` } });
  return ((await answer.json()) as { status: string }).status;
}

async function enterToken(page: Page, token: string): Promise<void> {
  await page.fill('#operator-token', token);
  await page.click('[data-token-form] button[type=submit]');
}

async function openApproval(id: string, token = operatorToken): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${server.url}/ui/approvals/${id}`);
  await enterToken(page, token);
  await page.waitForSelector('[data-approval-id][data-state="loaded"], [data-approval-id][data-state="failed"]');
  return page;
}

const fact = (page: Page, name: string) => page.locator(`[data-fact="${name}"]`).textContent();

describe('the approvals pages in a browser', () => {
  it('lists the pending requests, opens one with its hostile text inert and visible, and approves it', async () => {
    const arguments_ = refundArguments(4200, `,"note":"late","tags":["b","a"]`).replace(
      '"cus_123"',
      JSON.stringify(HOSTILE_RECIPIENT),
    );
    const { id, digest } = await requestApproval(arguments_);
    const page = await browser.newPage();
    const seen = watchPage(page);
    await page.goto(`${server.url}/ui/approvals`);
    await enterToken(page, operatorToken);
    await page.waitForSelector('[data-approvals-list][data-state="loaded"]');
    expect(await page.inputValue('#operator-token')).toBe('');
    // The list names the tool, the manifest and the host of each request (read from the request itself).
    await page.waitForSelector('[data-approvals-list][data-details="loaded"]');
    const row = page.locator(`tr[data-approval="${id}"]`);
    expect(await row.locator('td').allTextContents()).toEqual([
      id,
      'refund',
      `${MANIFEST_NAME}@${MANIFEST_VERSION}`,
      HOST_NAME,
      'pending',
      expect.stringMatching(/ UTC$/),
      digest,
    ]);
    await saveScreenshot(page, 'approvals-list');

    await row.locator('a').click();
    await page.waitForSelector('[data-fact="digest"]');
    expect(new URL(page.url()).pathname).toBe(`/ui/approvals/${id}`);
    expect(await fact(page, 'tool')).toBe('refund — Refund a customer');
    expect(await fact(page, 'amount')).toBe('42.00 USD (4200 minor units)');
    expect(await fact(page, 'audience')).toBe(`${HOST_NAME} (the host that asks)`);
    expect(await fact(page, 'status')).toBe('pending');
    expect(await fact(page, 'digest')).toBe(digest);
    expect(await page.locator('[data-testid=description]').textContent()).toBe(
      'Refund <img src=x onerror="window.__pwned=1"> a charge.\\u{202E}gnp.exe\\u{2066} done',
    );
    const material = (await page.locator('[data-testid=material]').textContent()) ?? '';
    expect(material).toContain('"recipient": "<img src=x onerror=\\"window.__pwned=2\\">\\u{200B}"');
    expect(material).toContain('"tags": [\n    "a",\n    "b"\n  ]');
    expect(material).not.toContain('late');
    // Capabilities and annotations in words, as `toolseal approvals show` says them.
    expect(await page.locator('[data-testid=capabilities] li').allTextContents()).toEqual([
      'opens connections to api.stripe.com',
      'makes no claim about files it reads (unknown, not none)',
      'writes no files',
      'reads the secret STRIPE_API_KEY from the environment',
      'moves up to 500.00 USD per call',
      'moves up to 50000 JPY per call',
    ]);
    expect(await page.locator('[data-testid=annotations] li').allTextContents()).toEqual(['may be destructive']);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await saveScreenshot(page, 'approval-pending');

    await page.fill('#decision-reason', 'checked with support');
    await page.click('[data-decide=approve]');
    await page.waitForSelector('[data-decision-outcome] [data-message=info]');
    expect(await page.locator('[data-decision-outcome]').textContent()).toMatch(
      /^approved: recorded in the log at index \d+$/,
    );
    expect(await fact(page, 'status')).toBe('approved');
    expect(await fact(page, 'decided')).toMatch(/^by alice \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await fact(page, 'reason')).toBe('checked with support');
    expect(await page.locator('[data-decide]').count()).toBe(0);
    expect(await statusInRegistry(id)).toBe('approved');
    expect(seen.errors).toEqual([]);
    expect(seen.violations).toEqual([]);
    await page.close();
  });

  it('shows UNAUTHENTICATED for a wrong token, and nothing of the request', async () => {
    const { id } = await requestApproval(refundArguments(100));
    const page = await openApproval(id, 'tsk_not-a-token');
    expect(await page.locator('[data-approval-id] [data-message=error]').textContent()).toMatch(/^UNAUTHENTICATED: /);
    expect(await page.locator('[data-fact]').count()).toBe(0);
    await page.close();
    const list = await browser.newPage();
    await list.goto(`${server.url}/ui/approvals`);
    await enterToken(list, hostToken);
    await list.waitForSelector('[data-approvals-list][data-state="failed"]');
    expect(await list.locator('[data-approvals-list] [data-message=error]').textContent()).toMatch(/^[A-Z_]+: /);
    await list.close();
  });

  it('sends the digest it shows: another one is APPROVAL_DIGEST_MISMATCH and nothing is decided', async () => {
    const { id, digest } = await requestApproval(refundArguments(300));
    const page = await browser.newPage();
    const other = `sha256:${'0'.repeat(64)}`;
    await page.route(`${server.url}/v1/approvals/${id}`, async (route) => {
      const response = await route.fetch();
      await route.fulfill({ response, body: (await response.text()).replaceAll(digest, other) });
    });
    await page.goto(`${server.url}/ui/approvals/${id}`);
    await enterToken(page, operatorToken);
    await page.waitForSelector('[data-decide=approve]');
    expect(await fact(page, 'digest')).toBe(other);
    await page.click('[data-decide=approve]');
    await page.waitForSelector('[data-decision-outcome] [data-message=error]');
    expect(await page.locator('[data-decision-outcome]').textContent()).toMatch(/^APPROVAL_DIGEST_MISMATCH: /);
    expect(await statusInRegistry(id)).toBe('pending');
    await page.close();
  });

  it('shows APPROVAL_EXPIRED when the request expires before the operator decides', async () => {
    const { id } = await requestApproval(refundArguments(200));
    const page = await openApproval(id);
    expect(await fact(page, 'status')).toBe('pending');
    offsetMs += 16 * 60 * 1000;
    await page.click('[data-decide=approve]');
    await page.waitForSelector('[data-decision-outcome] [data-message=error]');
    expect(await page.locator('[data-decision-outcome]').textContent()).toMatch(/^APPROVAL_EXPIRED: /);
    await saveScreenshot(page, 'approval-expired');
    expect(await statusInRegistry(id)).toBe('expired');
    await page.close();
  });
});
